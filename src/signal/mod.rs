//! Signals: `amd_signal_t` values the host and the GPU update atomically, with waits that spin
//! briefly and then sleep in the kernel, and the profiling timestamps the CP writes.
//!
//! - `sleeper`: sleeping on KFD events for `aql`'s waits.

pub(crate) mod sleeper;

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

pub use aql::signal::{Condition, MemoryOrder};
use aql::signal::{SignalRef, WaitError, init_signal};

use crate::device::lifetime::{Owned, Wake};
use crate::device::signal_pool::{SignalPool, SignalSlot};
use crate::device::{Device, DeviceShared, Live, TeardownStage};
use crate::error::{Error, Result};
use sleeper::EventSleeper;

/// A signal: a 64-bit value that packets decrement on completion and that the host reads,
/// writes and waits on. Cloning gives another handle to the same signal.
///
/// ```
/// # if aqueduct::backend::choose().ok() != Some(aqueduct::backend::BackendChoice::Simulator) { return Ok(()); }
/// use std::time::Duration;
/// use aqueduct::{Condition, Device, MemoryOrder};
/// let device = Device::open()?;
/// let signal = device.signal(1)?;
/// signal.sub(1, MemoryOrder::Release)?;
/// assert_eq!(signal.wait(Condition::Eq, 0, Some(Duration::from_secs(1)))?, 0);
/// # Ok::<(), aqueduct::Error>(())
/// ```
#[derive(Clone)]
pub struct Signal {
    owned: Arc<Owned<SignalState>>,
    handle: u64,
}

/// The memory and event of a live signal.
pub(crate) struct SignalState {
    slot: Option<SignalSlot>,
    view: SignalRef,
    pool: Weak<Mutex<SignalPool>>,
}

impl Wake for SignalState {
    fn wake(&self) {
        if let Some(event) = self.slot.as_ref().and_then(|s| s.event.as_ref()) {
            let _ = event.set();
        }
    }
}

impl SignalState {
    /// A signal from the device's pool, initialised to `initial`; with `interrupt`, it has an
    /// event of its own that the CP fires after each update.
    pub(crate) fn create(live: &Live, initial: i64, interrupt: bool) -> Result<Self> {
        Self::from_pool(live, initial, interrupt, |slot| {
            slot.event.as_ref().and_then(mailbox)
        })
    }

    /// A signal without an event of its own whose CP updates fire `event`'s mailbox (several
    /// signals may share one event).
    pub(crate) fn create_sharing(live: &Live, initial: i64, event: &kfd::Event) -> Result<Self> {
        Self::from_pool(live, initial, false, |_| mailbox(event))
    }

    /// Take a slot (with an event of its own if `own_event`) and initialise it with the
    /// mailbox `mailbox_of` picks.
    fn from_pool(
        live: &Live,
        initial: i64,
        own_event: bool,
        mailbox_of: impl FnOnce(&SignalSlot) -> Option<(u64, u32)>,
    ) -> Result<Self> {
        let slot = live
            .signals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take(&live.kfd, own_event)?;
        let mailbox = mailbox_of(&slot);
        // SAFETY: the slot is a 64-byte aligned amd_signal_t in memory the slot keeps alive;
        // it was free (nobody else, not the CP, uses it) until now.
        unsafe { init_signal(slot.ptr, initial, mailbox) };
        // SAFETY: as above; from here on it is accessed only through SignalRef's atomics, and
        // the view is used only while `slot` (owned by this state) is alive.
        let view = unsafe { SignalRef::new(slot.ptr) };
        Ok(Self {
            slot: Some(slot),
            view,
            pool: Arc::downgrade(&live.signals),
        })
    }

    /// The signal's memory.
    pub(crate) fn view(&self) -> &SignalRef {
        &self.view
    }

    /// Its event, for an interrupt signal.
    pub(crate) fn event(&self) -> Option<&kfd::Event> {
        self.slot.as_ref().and_then(|s| s.event.as_ref())
    }
}

impl Drop for SignalState {
    fn drop(&mut self) {
        if let (Some(slot), Some(pool)) = (self.slot.take(), self.pool.upgrade()) {
            pool.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .give_back(slot);
        }
    }
}

impl Device {
    /// A new interrupt signal with `initial` value: waits on it sleep in the kernel and are
    /// woken by the CP's completion interrupt.
    pub fn signal(&self, initial: i64) -> Result<Signal> {
        Signal::create(self, initial, true)
    }

    /// A new signal without an event: waits on it poll (with backoff and naps). Cheaper to
    /// complete (no interrupt), slower to notice.
    pub fn polling_signal(&self, initial: i64) -> Result<Signal> {
        Signal::create(self, initial, false)
    }
}

impl Signal {
    fn create(device: &Device, initial: i64, interrupt: bool) -> Result<Self> {
        let state = device
            .shared()
            .with_live(|live| SignalState::create(live, initial, interrupt))?;
        let handle = state.view.handle();
        Ok(Self {
            owned: Owned::new(device.shared(), TeardownStage::Signals, state),
            handle,
        })
    }

    /// The HSA signal handle (its address), as written into packets.
    pub fn handle(&self) -> u64 {
        self.handle
    }

    /// Whether the signal was created by `device` (copy queues check it).
    pub(crate) fn belongs_to(&self, device: &Arc<crate::device::DeviceShared>) -> bool {
        Arc::ptr_eq(self.owned.device(), device)
    }

    /// The event mailbox and event id an engine writes after updating the value (`None`
    /// for a polling signal).
    pub(crate) fn event_mailbox(&self) -> Result<Option<(u64, u32)>> {
        self.owned.with_fast(|s| Ok(s.view.event_mailbox()))
    }

    /// The current value (acquire).
    pub fn value(&self) -> Result<i64> {
        self.load(MemoryOrder::Acquire)
    }

    /// Load the value.
    pub fn load(&self, order: MemoryOrder) -> Result<i64> {
        self.owned.with_fast(|s| Ok(s.view.load(order)))
    }

    /// Store `value`, waking sleeping waiters.
    pub fn store(&self, value: i64, order: MemoryOrder) -> Result<()> {
        self.update(|view| {
            view.store(value, order);
            0
        })
        .map(drop)
    }

    /// Add `value`; returns the previous value.
    pub fn add(&self, value: i64, order: MemoryOrder) -> Result<i64> {
        self.update(|view| view.add(value, order))
    }

    /// Subtract `value`; returns the previous value.
    pub fn sub(&self, value: i64, order: MemoryOrder) -> Result<i64> {
        self.update(|view| view.sub(value, order))
    }

    /// Bitwise AND with `value`; returns the previous value.
    pub fn and(&self, value: i64, order: MemoryOrder) -> Result<i64> {
        self.update(|view| view.and(value, order))
    }

    /// Bitwise OR with `value`; returns the previous value.
    pub fn or(&self, value: i64, order: MemoryOrder) -> Result<i64> {
        self.update(|view| view.or(value, order))
    }

    /// Bitwise XOR with `value`; returns the previous value.
    pub fn xor(&self, value: i64, order: MemoryOrder) -> Result<i64> {
        self.update(|view| view.xor(value, order))
    }

    /// Replace the value; returns the previous one.
    pub fn exchange(&self, value: i64, order: MemoryOrder) -> Result<i64> {
        self.update(|view| view.exchange(value, order))
    }

    /// Store `new` if the value is `expected`: `Ok(Ok(previous))` if it was stored,
    /// `Ok(Err(actual))` if not.
    pub fn compare_exchange(
        &self,
        expected: i64,
        new: i64,
        order: MemoryOrder,
    ) -> Result<Result<i64, i64>> {
        let mut outcome = Ok(0);
        self.update(|view| {
            outcome = view.compare_exchange(expected, new, order);
            0
        })?;
        Ok(outcome)
    }

    /// Wait until `value <condition> compare` holds, at most `timeout` (`None`: forever), and
    /// return the value seen. Spins for [`aql::signal::SPIN_BUDGET`], then sleeps in the
    /// kernel: a long wait costs almost no CPU.
    pub fn wait(
        &self,
        condition: Condition,
        compare: i64,
        timeout: Option<Duration>,
    ) -> Result<i64> {
        self.wait_with(condition, compare, timeout, None, &|| Ok(()))
    }

    /// The CP's profiling timestamps of the packet that completed this signal (queues with
    /// profiling on), in ticks of the GPU's `timestamp_frequency_hz`. Zero where unwritten.
    pub fn timestamps(&self) -> Result<Timestamps> {
        self.owned.with_fast(|s| {
            Ok(Timestamps {
                start: s.view.start_ts(),
                end: s.view.end_ts(),
            })
        })
    }

    /// The wait, also sleeping on `queue_event` and ending early when `check` fails.
    pub(crate) fn wait_with(
        &self,
        condition: Condition,
        compare: i64,
        timeout: Option<Duration>,
        queue_event: Option<&kfd::Event>,
        check: &(dyn Fn() -> Result<()> + Sync),
    ) -> Result<i64> {
        let device = Arc::clone(self.owned.device());
        self.owned.with(|state| {
            device.with_live(|live| {
                let wait = SignalWait {
                    device: &device,
                    live,
                    view: &state.view,
                    events: [state.event(), queue_event],
                    check,
                };
                wait.run(condition, compare, timeout)
            })
        })
    }

    fn update(&self, op: impl FnOnce(&SignalRef) -> i64) -> Result<i64> {
        self.owned.with_fast(|s| {
            let previous = op(&s.view);
            if let Some(event) = s.slot.as_ref().and_then(|slot| slot.event.as_ref()) {
                // Always wake: keeping a count of sleepers would save this ioctl but needs a
                // protocol between waiters and updaters (see aql's SignalRef::notify).
                event
                    .set()
                    .map_err(|e| Error::driver(|| "waking a signal's waiters".to_owned(), e))?;
            }
            Ok(previous)
        })
    }
}

/// The mailbox address and event id of a signal event.
fn mailbox(event: &kfd::Event) -> Option<(u64, u32)> {
    event
        .mailbox_address()
        .map(|address| (address, event.trigger_data()))
}

/// One wait on a signal's memory: spin, then sleep on up to two KFD events, re-checking the
/// device (closed, forked) and the caller's `check` (a queue's error) around every sleep.
pub(crate) struct SignalWait<'a> {
    pub(crate) device: &'a DeviceShared,
    pub(crate) live: &'a Live,
    pub(crate) view: &'a SignalRef,
    pub(crate) events: [Option<&'a kfd::Event>; 2],
    pub(crate) check: &'a (dyn Fn() -> Result<()> + Sync),
}

impl SignalWait<'_> {
    /// Wait until `value <condition> compare`, at most `timeout`.
    pub(crate) fn run(
        &self,
        condition: Condition,
        compare: i64,
        timeout: Option<Duration>,
    ) -> Result<i64> {
        let started = Instant::now();
        let check_all = || {
            self.device.check()?;
            (self.check)()
        };
        let sleeper = EventSleeper::new(&self.live.kfd, self.events, &check_all);
        self.view
            .wait(condition, compare, timeout, Some(&sleeper))
            .map_err(|error| match error {
                WaitError::Timeout { last } => Error::Timeout {
                    what: format!(
                        "signal {:#x} to become {condition:?} {compare} (last value {last})",
                        self.view.handle()
                    ),
                    after: started.elapsed(),
                },
                WaitError::Sleep { reason, .. } => sleeper
                    .take_failure()
                    .unwrap_or(Error::Driver(kfd::Error::Kernel(reason))),
            })
    }
}

/// Profiling timestamps of a completed packet, in GPU timestamp ticks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timestamps {
    /// When the packet entered its active phase.
    pub start: u64,
    /// When it completed.
    pub end: u64,
}

impl Timestamps {
    /// The time between the two, given the counter's frequency (a GPU agent's
    /// `timestamp_frequency_hz`); `None` if either is missing or they are out of order.
    pub fn duration(&self, frequency_hz: u64) -> Option<Duration> {
        if self.start == 0 || self.end < self.start || frequency_hz == 0 {
            return None;
        }
        let ticks = u128::from(self.end - self.start);
        let nanos = ticks * 1_000_000_000 / u128::from(frequency_hz);
        Some(Duration::from_nanos(
            u64::try_from(nanos).unwrap_or(u64::MAX),
        ))
    }
}

impl fmt::Debug for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signal")
            .field("handle", &format_args!("{:#x}", self.handle))
            .finish_non_exhaustive()
    }
}
