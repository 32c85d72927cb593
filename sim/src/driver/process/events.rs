//! Events (`kfd_events.c`): CREATE/DESTROY/SET/RESET_EVENT, WAIT_EVENTS, the event page, and
//! how interrupts, VM faults and GPU resets set events (kfd.md §6, §11.6–7).
//!
//! Event ids come from one IDR per process: id 0 is reserved at process creation, signal (and
//! debug) events take the lowest free id below the mapped slot count (their slot in the event
//! page), other events the lowest free id from 0x40000000. A GPU "fires" a signal event by
//! writing anything but all-ones into its slot and raising an interrupt.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kfd::Errno;
use kfd::abi::{
    CreateEventArgs, EventData, EventType, HwExceptionData, KFD_EVENT_PAGE_SIZE,
    KFD_EVENT_TIMEOUT_IMMEDIATE, KFD_EVENT_TIMEOUT_INFINITE, KFD_FIRST_NONSIGNAL_EVENT_ID,
    KFD_SIGNAL_EVENT_LIMIT, MemoryExceptionData, UNSIGNALED_EVENT_SLOT, WaitEventsArgs, WaitResult,
    mmap_offset::MmapType,
};
use zerocopy::IntoBytes;

use super::{KMALLOC_MAX_SIZE, Process, lowest_free};
use crate::driver::host_memory::Backing;
use crate::driver::user_memory;

/// Slots user mode expects before it maps a kernel-allocated page ("oldest user mode expects
/// 256 event slots").
const LEGACY_SLOT_COUNT: u64 = 256;
/// `sizeof(struct kfd_event_waiter)` on x86-64: WAIT_EVENTS allocates one per event.
const WAITER_BYTES: u64 = 56;

/// One waiter's view of one event (`struct kfd_event_waiter`).
#[derive(Debug, Default)]
struct Waiter {
    activated: AtomicBool,
    destroyed: AtomicBool,
    age_enabled: bool,
}

struct Event {
    kind: EventType,
    auto_reset: bool,
    signaled: bool,
    age: u64,
    waiters: Vec<Arc<Waiter>>,
    memory_exception: MemoryExceptionData,
    hw_exception: HwExceptionData,
}

impl Event {
    /// `set_event`.
    fn set(&mut self) {
        self.signaled = !self.auto_reset || self.waiters.is_empty();
        self.age = match self.age.wrapping_add(1) {
            // Never wrap back to the reserved ages 0 and 1.
            0 => 2,
            age => age,
        };
        for waiter in &self.waiters {
            waiter.activated.store(true, Ordering::Release);
        }
    }

    fn gpu_signalable(&self) -> bool {
        self.kind == EventType::SIGNAL || self.kind == EventType::DEBUG_EVENT
    }
}

/// The event page: the user's BO (dGPU) or a kernel-allocated page.
struct SignalPage {
    memory: Arc<Backing>,
}

impl SignalPage {
    fn slot(&self, id: u32) -> Option<&std::sync::atomic::AtomicU64> {
        self.memory.word(id as usize)
    }
}

/// Everything guarded by `p->event_mutex`.
pub(crate) struct EventTable {
    /// `None` is the reserved id 0.
    events: BTreeMap<u32, Option<Event>>,
    signal_event_count: u64,
    signal_page: Option<SignalPage>,
    signal_mapped_size: u64,
}

impl EventTable {
    pub(crate) fn new() -> Self {
        let mut events = BTreeMap::new();
        events.insert(0, None);
        Self {
            events,
            // The reserved id 0 counts as a signal event.
            signal_event_count: 1,
            signal_page: None,
            signal_mapped_size: 0,
        }
    }

    fn event_mut(&mut self, id: u32) -> Option<&mut Event> {
        self.events.get_mut(&id).and_then(Option::as_mut)
    }

    /// Whether an event page is set (a user page passed once, or a kernel page allocated).
    pub(crate) fn has_page(&self) -> bool {
        self.signal_page.is_some()
    }

    /// `kfd_event_page_set` for a user BO of `memory`.
    fn set_user_page(&mut self, memory: Arc<Backing>) -> Result<(), Errno> {
        if self.signal_page.is_some() {
            return Err(Errno::EBUSY);
        }
        // The 2025 stable fix: the BO must hold all 4096 slots.
        if (memory.len() as u64) < KFD_EVENT_PAGE_SIZE as u64 {
            return Err(Errno::EINVAL);
        }
        fill_unsignaled(&memory);
        self.signal_mapped_size = memory.len() as u64;
        self.signal_page = Some(SignalPage { memory });
        Ok(())
    }

    /// The page for an EVENTS mmap of `len` bytes (`kfd_event_mmap`); a successful mmap sets
    /// the slot limit to the mapped length.
    pub(crate) fn page_for_mmap(&mut self, len: u64) -> Result<Arc<Backing>, Errno> {
        // get_order(32 KiB) < get_order(len): more than 32 KiB.
        if len > KFD_EVENT_PAGE_SIZE as u64 {
            return Err(Errno::EINVAL);
        }
        let page = self.signal_page.as_ref().ok_or(Errno::EINVAL)?;
        Ok(page.memory.clone())
    }

    /// Called after the EVENTS mmap succeeded.
    pub(crate) fn mapped(&mut self, len: u64) {
        self.signal_mapped_size = len;
    }

    /// Destroy every event (process exit), waking waiters with FAIL.
    pub(crate) fn destroy_all(&mut self) {
        for event in self.events.values().flatten() {
            for waiter in &event.waiters {
                waiter.destroyed.store(true, Ordering::Release);
            }
        }
        *self = Self::new();
    }

    /// The interrupt rule of `kfd_signal_event_interrupt`. Returns whether an event it set
    /// has waiters to wake.
    fn signal_interrupt(&mut self, partial_id: u32, valid_bits: u32) -> bool {
        let Some(page) = &self.signal_page else {
            return false;
        };
        let signaled = |id: u32| {
            page.slot(id)
                .is_some_and(|s| s.load(Ordering::Acquire) != UNSIGNALED_EVENT_SLOT)
        };
        let mut found = None;
        if valid_bits != 0 && partial_id < KFD_SIGNAL_EVENT_LIMIT {
            if valid_bits > 31 || (1u32 << valid_bits) >= KFD_SIGNAL_EVENT_LIMIT {
                if signaled(partial_id) && self.events.get(&partial_id).is_some_and(Option::is_some)
                {
                    found = Some(partial_id);
                }
            } else {
                let mut id = partial_id;
                while id < KFD_SIGNAL_EVENT_LIMIT && found.is_none() {
                    if signaled(id) && self.events.get(&id).is_some_and(Option::is_some) {
                        found = Some(id);
                    }
                    id += 1 << valid_bits;
                }
            }
        }
        let candidates: Vec<u32> = match found {
            Some(id) => vec![id],
            // Partial id unusable: scan every signal slot.
            None => self
                .events
                .range(..KFD_SIGNAL_EVENT_LIMIT)
                .filter(|(_, e)| e.is_some())
                .map(|(&id, _)| id)
                .filter(|&id| signaled(id))
                .collect(),
        };
        let mut wake = false;
        for id in candidates {
            wake |= self.set_from_interrupt(id);
        }
        wake
    }

    /// `set_event_from_interrupt`: acknowledge the slot, then set the event. Returns whether
    /// the event has waiters: a waiter joins the list and sleeps under the lock held here, so
    /// with none there is nobody to wake, and the wake-up (a futex system call on the command
    /// processor's thread for every completion of an interrupt signal) is skipped.
    fn set_from_interrupt(&mut self, id: u32) -> bool {
        let gpu_signalable = self.event_mut(id).is_some_and(|e| e.gpu_signalable());
        if !gpu_signalable {
            return false;
        }
        if let Some(slot) = self.signal_page.as_ref().and_then(|p| p.slot(id)) {
            slot.store(UNSIGNALED_EVENT_SLOT, Ordering::Release);
        }
        self.event_mut(id).is_some_and(|event| {
            event.set();
            !event.waiters.is_empty()
        })
    }

    /// Set every event of `kind` with `update` applied first; returns whether any exists.
    fn set_all_of(&mut self, kind: EventType, update: impl Fn(&mut Event)) -> bool {
        let mut any = false;
        for event in self
            .events
            .range_mut(KFD_FIRST_NONSIGNAL_EVENT_ID..)
            .filter_map(|(_, e)| e.as_mut())
            .filter(|e| e.kind == kind)
        {
            update(event);
            event.set();
            any = true;
        }
        any
    }
}

fn fill_unsignaled(memory: &Backing) {
    // memset(kernel_address, 0xFF, KFD_SIGNAL_EVENT_LIMIT * 8).
    for i in 0..KFD_SIGNAL_EVENT_LIMIT as usize {
        if let Some(slot) = memory.word(i) {
            slot.store(UNSIGNALED_EVENT_SLOT, Ordering::Relaxed);
        }
    }
}

/// `user_timeout_to_jiffies`: `None` waits forever.
fn timeout_of(ms: u32) -> Option<Duration> {
    match ms {
        KFD_EVENT_TIMEOUT_INFINITE => None,
        ms => Some(Duration::from_millis(u64::from(ms.min(0x7FFF_FFFF)))),
    }
}

/// What one WAIT_EVENTS entry wants.
struct Wanted {
    id: u32,
    waiter: Arc<Waiter>,
}

impl Process {
    /// CREATE_EVENT.
    pub(crate) fn create_event(&self, args: &mut CreateEventArgs) -> Result<(), Errno> {
        if args.event_page_offset != 0 {
            self.set_event_page(args.event_page_offset)?;
        }
        let kind = EventType(args.event_type);
        let mut events = self.events();
        args.event_page_offset = 0;
        let id = if kind.has_signal_slot() {
            if events.signal_mapped_size != 0
                && events.signal_event_count == events.signal_mapped_size / 8
            {
                return Err(Errno::ENOSPC);
            }
            if events.signal_page.is_none() {
                // A kernel-allocated page (APU/legacy path), mmapped through /dev/kfd.
                let memory = self
                    .shared
                    .memory
                    .allocate(KFD_EVENT_PAGE_SIZE as u64, None)
                    .map_err(|_| Errno::ENOMEM)?;
                fill_unsignaled(&memory);
                events.signal_page = Some(SignalPage { memory });
                events.signal_mapped_size = LEGACY_SLOT_COUNT * 8;
            }
            let limit =
                (events.signal_mapped_size / 8).min(u64::from(KFD_SIGNAL_EVENT_LIMIT)) as u32;
            let id = lowest_free(&events.events, 0)
                .filter(|&id| id < limit)
                .ok_or(Errno::ENOSPC)?;
            if let Some(slot) = events.signal_page.as_ref().and_then(|p| p.slot(id)) {
                slot.store(UNSIGNALED_EVENT_SLOT, Ordering::Release);
            }
            events.signal_event_count += 1;
            args.event_page_offset = MmapType::Events.bits();
            args.event_slot_index = id;
            id
        } else {
            lowest_free(&events.events, KFD_FIRST_NONSIGNAL_EVENT_ID).ok_or(Errno::ENOSPC)?
        };
        events.events.insert(
            id,
            Some(Event {
                kind,
                auto_reset: args.auto_reset != 0,
                signaled: false,
                age: 1,
                waiters: Vec::new(),
                memory_exception: MemoryExceptionData::default(),
                hw_exception: HwExceptionData::default(),
            }),
        );
        self.counters.events.fetch_add(1, Ordering::AcqRel);
        args.event_id = id;
        args.event_trigger_data = id;
        Ok(())
    }

    /// `kfd_kmap_event_page`: the user's BO `handle` becomes the event page, once.
    fn set_event_page(&self, handle: u64) -> Result<(), Errno> {
        if self.events().has_page() {
            return Err(Errno::EINVAL);
        }
        let memory = self.event_page_memory(handle)?;
        let mut state = self.state();
        self.events().set_user_page(memory)?;
        state.signal_handle = handle;
        Ok(())
    }

    /// DESTROY_EVENT: waiters see FAIL (EIO).
    pub(crate) fn destroy_event(&self, id: u32) -> Result<(), Errno> {
        let mut events = self.events();
        let event = events
            .events
            .get(&id)
            .and_then(Option::as_ref)
            .ok_or(Errno::EINVAL)?;
        for waiter in &event.waiters {
            waiter.destroyed.store(true, Ordering::Release);
        }
        if event.kind.has_signal_slot() {
            events.signal_event_count -= 1;
        }
        events.events.remove(&id);
        drop(events);
        self.counters.events.fetch_sub(1, Ordering::AcqRel);
        self.event_wake.notify_all();
        Ok(())
    }

    /// SET_EVENT: only signal events can be set from the CPU.
    pub(crate) fn set_event(&self, id: u32) -> Result<(), Errno> {
        let mut events = self.events();
        let event = events
            .event_mut(id)
            .filter(|e| e.kind == EventType::SIGNAL)
            .ok_or(Errno::EINVAL)?;
        event.set();
        drop(events);
        self.event_wake.notify_all();
        Ok(())
    }

    /// RESET_EVENT.
    pub(crate) fn reset_event(&self, id: u32) -> Result<(), Errno> {
        let mut events = self.events();
        let event = events
            .event_mut(id)
            .filter(|e| e.kind == EventType::SIGNAL)
            .ok_or(Errno::EINVAL)?;
        event.signaled = false;
        Ok(())
    }

    /// A GPU interrupt carrying `partial_id` with `valid_bits` significant bits.
    pub(crate) fn signal_event_interrupt(&self, partial_id: u32, valid_bits: u32) {
        if self.events().signal_interrupt(partial_id, valid_bits) {
            self.event_wake.notify_all();
        }
    }

    /// Set every MEMORY event with `data` (`kfd_signal_vm_fault_event`).
    pub(crate) fn signal_memory_exception(&self, data: MemoryExceptionData) {
        let any = self.events().set_all_of(EventType::MEMORY, |e| {
            e.memory_exception = data;
        });
        if any {
            self.event_wake.notify_all();
        }
    }

    /// `kfd_signal_reset_event` for this process: HW_EXCEPTION events get `hw`, and MEMORY
    /// events get `memory` when the reset was caused by ECC.
    pub(crate) fn signal_reset(&self, hw: HwExceptionData, memory: Option<MemoryExceptionData>) {
        let mut events = self.events();
        events.set_all_of(EventType::HW_EXCEPTION, |e| e.hw_exception = hw);
        if let Some(memory) = memory {
            events.set_all_of(EventType::MEMORY, |e| e.memory_exception = memory);
        }
        drop(events);
        self.event_wake.notify_all();
    }

    /// WAIT_EVENTS (`kfd_wait_on_events`). Returns the errno; `args.wait_result` and
    /// `args.timeout` are outputs even on failure.
    pub(crate) fn wait_events(&self, args: &mut WaitEventsArgs) -> Result<(), Errno> {
        let result = self.wait_events_inner(args);
        match result {
            Err(e) => {
                args.wait_result = WaitResult::FAIL.0;
                Err(e)
            }
            Ok(()) if args.wait_result == WaitResult::FAIL.0 => Err(Errno::EIO),
            Ok(()) => Ok(()),
        }
    }

    /// Waiters on event `id` that are neither woken nor failed. A waiter joins the list and
    /// goes to sleep on `event_wake` under the same lock, so one seen here is asleep (or just
    /// woken spuriously, about to sleep again).
    pub(crate) fn sleeping_waiters(&self, id: u32) -> usize {
        self.events().event_mut(id).map_or(0, |event| {
            event
                .waiters
                .iter()
                .filter(|w| {
                    !w.activated.load(Ordering::Acquire) && !w.destroyed.load(Ordering::Acquire)
                })
                .count()
        })
    }

    fn wait_events_inner(&self, args: &mut WaitEventsArgs) -> Result<(), Errno> {
        let all = args.wait_for_all != 0;
        let n = args.num_events;
        if u64::from(n) * WAITER_BYTES > KMALLOC_MAX_SIZE {
            return Err(Errno::ENOMEM);
        }
        let entry_size = size_of::<EventData>() as u64;
        let kfd_minor = self.shared.kfd_minor;
        let mut events = self.events();
        let mut wanted: Vec<Wanted> = Vec::with_capacity(n as usize);
        let mut outcome: Result<(), Errno> = Ok(());
        // init_event_waiter for each entry, stopping at the first fault or unknown id.
        for i in 0..u64::from(n) {
            let data = match user_memory::read::<EventData>(
                args.events_ptr.wrapping_add(i * entry_size),
            ) {
                Ok(d) => d,
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            };
            let Some(event) = events.event_mut(data.event_id) else {
                outcome = Err(Errno::EINVAL);
                break;
            };
            // Event ages exist since interface 1.14; older kernels read no age.
            let age_enabled = kfd_minor >= kfd::abi::MINOR_EVENT_AGE
                && event.kind == EventType::SIGNAL
                && data.last_event_age() != 0;
            let waiter = Arc::new(Waiter {
                activated: AtomicBool::new(event.signaled),
                destroyed: AtomicBool::new(false),
                age_enabled,
            });
            event.signaled = event.signaled && !event.auto_reset;
            if age_enabled && event.age != data.last_event_age() {
                waiter.activated.store(true, Ordering::Release);
            }
            if !waiter.activated.load(Ordering::Acquire) {
                event.waiters.push(waiter.clone());
            }
            wanted.push(Wanted {
                id: data.event_id,
                waiter,
            });
        }
        let mut interrupted = false;
        if outcome.is_ok() {
            let test = |wanted: &[Wanted]| test_condition(all, n, wanted);
            let mut result = test(&wanted);
            let deadline = timeout_of(args.timeout).map(|d| Instant::now() + d);
            let interruption = self.shared.injection.wait_interruption();
            while result == WaitResult::TIMEOUT {
                let now = Instant::now();
                let remaining = deadline.map(|d| d.saturating_duration_since(now));
                if remaining == Some(Duration::ZERO) {
                    break;
                }
                if let Some(at) = interruption.as_ref().map(|i| i.at)
                    && now >= at
                {
                    // A signal arrived: ERESTARTSYS, seen by userspace as EINTR, with the
                    // time left written back for finite timeouts.
                    if args.timeout != KFD_EVENT_TIMEOUT_IMMEDIATE
                        && args.timeout != KFD_EVENT_TIMEOUT_INFINITE
                    {
                        args.timeout = remaining.map_or(0, |r| r.as_millis() as u32);
                    }
                    self.shared.injection.consume_wait_interruption();
                    interrupted = true;
                    outcome = Err(Errno::EINTR);
                    break;
                }
                let until = match (remaining, interruption.as_ref()) {
                    (Some(r), Some(i)) => Some(r.min(i.at.saturating_duration_since(now))),
                    (Some(r), None) => Some(r),
                    (None, Some(i)) => Some(i.at.saturating_duration_since(now)),
                    (None, None) => None,
                };
                events = match until {
                    Some(d) => {
                        self.event_wake
                            .wait_timeout(events, d)
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .0
                    }
                    None => self
                        .event_wake
                        .wait(events)
                        .unwrap_or_else(std::sync::PoisonError::into_inner),
                };
                result = test(&wanted);
            }
            args.wait_result = result.0;
            if outcome.is_ok() && result == WaitResult::COMPLETE {
                outcome = copy_signaled_event_data(&events, &wanted, args.events_ptr);
            }
        }
        // free_waiters: leave the wait queues; an interrupted wait re-arms the auto-reset
        // events it consumed.
        for w in &wanted {
            if let Some(event) = events.event_mut(w.id) {
                event.waiters.retain(|x| !Arc::ptr_eq(x, &w.waiter));
                if interrupted && event.auto_reset && w.waiter.activated.load(Ordering::Acquire) {
                    event.set();
                }
            }
        }
        outcome
    }
}

/// `test_event_condition`.
fn test_condition(all: bool, n: u32, wanted: &[Wanted]) -> WaitResult {
    let mut activated = 0;
    for w in wanted {
        if w.waiter.destroyed.load(Ordering::Acquire) {
            return WaitResult::FAIL;
        }
        if w.waiter.activated.load(Ordering::Acquire) {
            if !all {
                return WaitResult::COMPLETE;
            }
            activated += 1;
        }
    }
    if activated == n {
        WaitResult::COMPLETE
    } else {
        WaitResult::TIMEOUT
    }
}

/// `copy_signaled_event_data`: exception data and event ages back into the caller's array.
fn copy_signaled_event_data(
    events: &EventTable,
    wanted: &[Wanted],
    events_ptr: u64,
) -> Result<(), Errno> {
    let entry = size_of::<EventData>() as u64;
    for (i, w) in wanted.iter().enumerate() {
        let Some(event) = events.events.get(&w.id).and_then(Option::as_ref) else {
            return Err(Errno::EINVAL);
        };
        if w.waiter.destroyed.load(Ordering::Acquire) {
            return Err(Errno::EINVAL);
        }
        if !w.waiter.activated.load(Ordering::Acquire) {
            continue;
        }
        let at = events_ptr.wrapping_add(i as u64 * entry);
        if event.kind == EventType::MEMORY {
            user_memory::write_bytes(at, event.memory_exception.as_bytes())?;
        } else if event.kind == EventType::HW_EXCEPTION {
            user_memory::write_bytes(at, event.hw_exception.as_bytes())?;
        } else if event.kind == EventType::SIGNAL && w.waiter.age_enabled {
            user_memory::write(at, &event.age)?;
        }
    }
    Ok(())
}
