//! Events and waits (kfd.md §6).
//!
//! A signal event has a slot in the event page (its mailbox): the GPU fires it by writing the
//! event's trigger data there and raising an interrupt; the CPU fires it with SET_EVENT. Memory
//! and hardware-exception events are fired by the kernel on GPU faults and resets and carry
//! what happened, which WAIT_EVENTS copies back. Waits take a timeout and restart after a
//! signal with the time that remains, which the kernel writes back into the arguments.
//!
//! Event age (interface 1.14): every SET of a signal event bumps its age; a wait that passes
//! the age it last saw completes at once if the age moved on, so no firing between two waits is
//! lost. Ages start at 1; 0 asks for the legacy behaviour (wait for the signalled state).

use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::abi::{
    CreateEventArgs, EventData, EventType, HwExceptionData, KFD_EVENT_TIMEOUT_INFINITE,
    KFD_SIGNAL_EVENT_LIMIT, MINOR_EVENT_AGE, MemoryExceptionData, WaitResult,
};
use crate::driver::Kfd;
use crate::error::{Error, Result};
use crate::ioctl::calls as ioctls;
use crate::retry::{is_interrupted, restarting};

/// The age a signal event has before it is first set.
pub const INITIAL_EVENT_AGE: u64 = 1;
/// Longest finite timeout the kernel honours (larger values are clamped by it).
const MAX_FINITE_TIMEOUT_MS: u32 = i32::MAX as u32;

/// An event. Dropping it destroys it.
#[derive(Debug)]
pub struct Event {
    kfd: Arc<Kfd>,
    id: u32,
    event_type: EventType,
    auto_reset: bool,
    trigger_data: u32,
    slot: Option<u32>,
}

/// What fired a memory or hardware-exception event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventException {
    /// A GPU memory fault.
    Memory(MemoryExceptionData),
    /// A GPU reset or hardware exception.
    Hardware(HwExceptionData),
}

/// How a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitStatus {
    /// The condition was met.
    Complete,
    /// The timeout expired first.
    Timeout,
}

/// One event to wait for, with the age last seen (0: legacy behaviour). A completed wait
/// stores the event's current age back into `last_age` where the kernel reports it.
#[derive(Debug)]
pub struct EventWait<'a> {
    /// The event.
    pub event: &'a Event,
    /// The age last observed, or 0.
    pub last_age: u64,
}

impl<'a> EventWait<'a> {
    /// Wait for the event's signalled state.
    pub const fn new(event: &'a Event) -> Self {
        Self { event, last_age: 0 }
    }

    /// Wait until the event is set after it had age `last_age`.
    pub const fn since(event: &'a Event, last_age: u64) -> Self {
        Self { event, last_age }
    }
}

/// The result of a wait.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitOutcome {
    /// How it ended.
    pub status: WaitStatus,
    /// Per waited event, what a memory or hardware-exception event reported, if it fired.
    pub exceptions: Vec<Option<EventException>>,
}

/// A timeout in the kernel's terms: `None` is infinite, zero polls, anything else is rounded
/// up to whole milliseconds.
fn timeout_ms(timeout: Option<Duration>) -> u32 {
    match timeout {
        None => KFD_EVENT_TIMEOUT_INFINITE,
        Some(duration) => {
            let ms = duration.as_nanos().div_ceil(1_000_000);
            u32::try_from(ms)
                .unwrap_or(MAX_FINITE_TIMEOUT_MS)
                .min(MAX_FINITE_TIMEOUT_MS)
        }
    }
}

impl Kfd {
    /// Create an event of `event_type`. Signal events get a slot in the event page; with
    /// `auto_reset`, a wait that sees the event consumes it. `node_id` matters only for
    /// node-specific event types (0 otherwise).
    pub fn create_event(
        self: &Arc<Self>,
        event_type: EventType,
        auto_reset: bool,
        node_id: u32,
    ) -> Result<Event> {
        self.check_process()?;
        let mut args = CreateEventArgs {
            event_type: event_type.0,
            auto_reset: u32::from(auto_reset),
            node_id,
            ..CreateEventArgs::default()
        };
        // CREATE_EVENT does not sleep interruptibly; an EINTR would still be safe to retry
        // because the page handle is not passed here.
        restarting(|| ioctls::create_event(self.sys().as_ref(), self.kfd_fd(), &mut args))
            .map_err(|e| {
                self.binding()
                    .ioctl_error(format!("create an event of type {}", event_type.0), e)
            })?;
        let mut event = Event {
            kfd: Arc::clone(self),
            id: args.event_id,
            event_type,
            auto_reset,
            trigger_data: args.event_trigger_data,
            slot: None,
        };
        self.live.events.fetch_add(1, Ordering::Relaxed);
        if event_type.has_signal_slot() {
            if args.event_slot_index >= KFD_SIGNAL_EVENT_LIMIT {
                // Dropping `event` destroys it.
                return Err(Error::Kernel(format!(
                    "event {} got slot {} outside the event page",
                    args.event_id, args.event_slot_index
                )));
            }
            event.slot = Some(args.event_slot_index);
        }
        Ok(event)
    }

    /// Create a signal event.
    pub fn create_signal_event(self: &Arc<Self>, auto_reset: bool) -> Result<Event> {
        self.create_event(EventType::SIGNAL, auto_reset, 0)
    }

    /// WAIT_EVENTS on `waits`: for all of them or any one, at most `timeout` (`None`:
    /// forever). Interrupted waits are restarted with the time the kernel says remains.
    pub fn wait_events(
        &self,
        waits: &mut [EventWait<'_>],
        wait_for_all: bool,
        timeout: Option<Duration>,
    ) -> Result<WaitOutcome> {
        self.check_process()?;
        if waits
            .iter()
            .any(|w| !std::ptr::eq(w.event.kfd.as_ref(), self))
        {
            return Err(Error::InvalidArgument(
                "waiting on an event of another driver instance".to_owned(),
            ));
        }
        if waits.iter().any(|w| w.last_age != 0) && !self.binding().has_minor(MINOR_EVENT_AGE) {
            return Err(Error::Unsupported(format!(
                "event ages need KFD interface 1.{MINOR_EVENT_AGE}; the kernel has 1.{}",
                self.interface_version().1
            )));
        }
        let mut data: Vec<EventData> = waits
            .iter()
            .map(|w| {
                let mut entry = EventData::new(w.event.id);
                if w.event.event_type == EventType::SIGNAL {
                    entry.set_last_event_age(w.last_age);
                }
                entry
            })
            .collect();
        let mut remaining = timeout_ms(timeout);
        let result = loop {
            let before = remaining;
            match ioctls::wait_events(
                self.sys().as_ref(),
                self.kfd_fd(),
                &mut data,
                wait_for_all,
                &mut remaining,
            ) {
                Err(err) if is_interrupted(err.errno) => {
                    // The kernel wrote back what remains; never let a retry wait longer.
                    if before == KFD_EVENT_TIMEOUT_INFINITE {
                        remaining = KFD_EVENT_TIMEOUT_INFINITE;
                    } else {
                        remaining = remaining.min(before);
                    }
                }
                other => break other,
            }
        };
        let ids: Vec<u32> = waits.iter().map(|w| w.event.id).collect();
        let status = match result {
            Ok(WaitResult::COMPLETE) => WaitStatus::Complete,
            Ok(WaitResult::TIMEOUT) => WaitStatus::Timeout,
            Ok(other) => {
                return Err(Error::Kernel(format!(
                    "WAIT_EVENTS on {ids:?} returned wait_result {}",
                    other.0
                )));
            }
            Err(err) => {
                return Err(self
                    .binding()
                    .ioctl_error(format!("wait for events {ids:?}"), err));
            }
        };
        let mut exceptions = Vec::with_capacity(waits.len());
        for (wait, entry) in waits.iter_mut().zip(&data) {
            let exception = match wait.event.event_type {
                EventType::SIGNAL => {
                    if wait.last_age != 0 && entry.last_event_age() != 0 {
                        wait.last_age = entry.last_event_age();
                    }
                    None
                }
                EventType::MEMORY => {
                    let memory = entry.memory_exception();
                    (memory.gpu_id != 0).then_some(EventException::Memory(memory))
                }
                EventType::HW_EXCEPTION => {
                    let hardware = entry.hw_exception();
                    (hardware.gpu_id != 0).then_some(EventException::Hardware(hardware))
                }
                _ => None,
            };
            exceptions.push(exception);
        }
        Ok(WaitOutcome { status, exceptions })
    }
}

impl Event {
    /// The event id (also its slot, for signal events).
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Its type.
    pub fn event_type(&self) -> EventType {
        self.event_type
    }

    /// Whether a wait consumes it.
    pub fn auto_reset(&self) -> bool {
        self.auto_reset
    }

    /// What the GPU writes into the mailbox to fire it (the event id).
    pub fn trigger_data(&self) -> u32 {
        self.trigger_data
    }

    /// The slot index in the event page (signal and debug events).
    pub fn slot_index(&self) -> Option<u32> {
        self.slot
    }

    /// The slot's address, the same for the CPU and the GPUs (`event_mailbox_ptr` of an
    /// interrupt signal).
    pub fn mailbox_address(&self) -> Option<u64> {
        self.slot
            .map(|slot| self.kfd.event_page_address() + u64::from(slot) * 8)
    }

    /// The slot as a host pointer.
    pub fn mailbox(&self) -> Option<NonNull<u64>> {
        self.mailbox_address()
            .and_then(|address| NonNull::new(address as *mut u64))
    }

    /// SET_EVENT (signal events only; the kernel refuses others with EINVAL).
    pub fn set(&self) -> Result<()> {
        self.kfd.check_process()?;
        restarting(|| ioctls::set_event(self.kfd.sys().as_ref(), self.kfd.kfd_fd(), self.id))
            .map_err(|e| {
                self.kfd
                    .binding()
                    .ioctl_error(format!("set event {}", self.id), e)
            })
    }

    /// RESET_EVENT (signal events only).
    pub fn reset(&self) -> Result<()> {
        self.kfd.check_process()?;
        restarting(|| ioctls::reset_event(self.kfd.sys().as_ref(), self.kfd.kfd_fd(), self.id))
            .map_err(|e| {
                self.kfd
                    .binding()
                    .ioctl_error(format!("reset event {}", self.id), e)
            })
    }

    /// Wait for this event alone (legacy semantics: its signalled state).
    pub fn wait(&self, timeout: Option<Duration>) -> Result<WaitOutcome> {
        self.kfd
            .wait_events(&mut [EventWait::new(self)], true, timeout)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        self.kfd.live.events.fetch_sub(1, Ordering::Relaxed);
        if !self.kfd.binding().is_owner_process() {
            return;
        }
        if let Err(err) = restarting(|| {
            ioctls::destroy_event(self.kfd.sys().as_ref(), self.kfd.kfd_fd(), self.id)
        }) {
            let error = self
                .kfd
                .binding()
                .ioctl_error(format!("destroy event {}", self.id), err);
            self.kfd.record_drop_error(error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_in_kernel_terms() {
        assert_eq!(timeout_ms(None), KFD_EVENT_TIMEOUT_INFINITE);
        assert_eq!(timeout_ms(Some(Duration::ZERO)), 0);
        assert_eq!(timeout_ms(Some(Duration::from_micros(1))), 1);
        assert_eq!(timeout_ms(Some(Duration::from_millis(1500))), 1500);
        assert_eq!(
            timeout_ms(Some(Duration::from_secs(u64::MAX))),
            MAX_FINITE_TIMEOUT_MS
        );
    }
}
