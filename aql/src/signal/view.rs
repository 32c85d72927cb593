//! [`SignalRef`]: the host's view of an `amd_signal_t` in memory it shares with the CP and
//! kernel code. Every access is atomic: the CP decrements the value and writes timestamps
//! concurrently (aql.md §3.2).

use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};

use super::{AmdSignal, SignalKind, SignalSleeper};

/// The memory orders of HSA's signal operations (`_relaxed`, `_scacquire`, `_screlease`,
/// `_scacq_screl`). A host thread is always at system scope, so they map onto the language's
/// orders one for one; an order an operation cannot have (a releasing load, an acquiring
/// store) is strengthened to `SeqCst` rather than weakened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum MemoryOrder {
    /// `_relaxed`.
    Relaxed,
    /// `_scacquire`: later accesses of this thread stay after the operation.
    #[default]
    Acquire,
    /// `_screlease`: earlier accesses of this thread become visible before the operation.
    Release,
    /// `_scacq_screl`: both.
    AcqRel,
}

impl MemoryOrder {
    fn for_load(self) -> Ordering {
        match self {
            Self::Relaxed => Ordering::Relaxed,
            Self::Acquire => Ordering::Acquire,
            Self::Release | Self::AcqRel => Ordering::SeqCst,
        }
    }

    fn for_store(self) -> Ordering {
        match self {
            Self::Relaxed => Ordering::Relaxed,
            Self::Release => Ordering::Release,
            Self::Acquire | Self::AcqRel => Ordering::SeqCst,
        }
    }

    fn for_update(self) -> Ordering {
        match self {
            Self::Relaxed => Ordering::Relaxed,
            Self::Acquire => Ordering::Acquire,
            Self::Release => Ordering::Release,
            Self::AcqRel => Ordering::AcqRel,
        }
    }

    /// The order of a failed compare-exchange, which only loads.
    fn for_failed_exchange(self) -> Ordering {
        match self {
            Self::Relaxed | Self::Release => Ordering::Relaxed,
            Self::Acquire | Self::AcqRel => Ordering::Acquire,
        }
    }
}

/// A view of one `amd_signal_t` the caller mapped. `Copy`, `Send` and `Sync`; the memory's
/// owner keeps it alive (see [`SignalRef::new`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SignalRef {
    signal: NonNull<AmdSignal>,
}

impl fmt::Debug for SignalRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignalRef")
            .field("handle", &format_args!("{:#x}", self.handle()))
            .field("value", &self.load(MemoryOrder::Relaxed))
            .finish()
    }
}

// SAFETY: a SignalRef is an address of memory that `new`'s contract keeps valid and that is
// only ever accessed atomically, which any thread may do at any time.
unsafe impl Send for SignalRef {}
// SAFETY: as above; all methods take `&self` and access the signal atomically.
unsafe impl Sync for SignalRef {}

impl SignalRef {
    /// A view of the signal at `signal`.
    ///
    /// # Safety
    ///
    /// `signal` points to an `amd_signal_t` (64 bytes, 64-byte aligned, readable and
    /// writable) that stays valid for as long as this view or any copy of it is used, and that
    /// everyone (host threads, the CP, kernel code) accesses only atomically once this view
    /// exists.
    pub unsafe fn new(signal: NonNull<AmdSignal>) -> Self {
        Self { signal }
    }

    /// The HSA signal handle written into packets: the signal's address.
    pub fn handle(&self) -> u64 {
        self.signal.as_ptr() as u64
    }

    fn value(&self) -> &AtomicI64 {
        // SAFETY: `new`'s contract: a live, aligned amd_signal_t accessed only atomically;
        // `value` is an aligned i64 at offset 8.
        unsafe { AtomicI64::from_ptr(&raw mut (*self.signal.as_ptr()).value) }
    }

    /// Acquire-load a 64-bit field of the signal.
    ///
    /// # Safety
    ///
    /// `field` is an aligned u64 field of a signal some live `SignalRef` views (callers take
    /// it with `&raw mut` from `self.signal`), so it is valid and accessed only atomically.
    unsafe fn word(field: *mut u64) -> u64 {
        // SAFETY: the function's contract.
        unsafe { AtomicU64::from_ptr(field) }.load(Ordering::Acquire)
    }

    /// The signal's kind (USER for every signal aqueduct creates).
    pub fn kind(&self) -> SignalKind {
        // SAFETY: the place is the aligned `kind` field of the live signal (`new`).
        let field = unsafe { &raw mut (*self.signal.as_ptr()).kind };
        // SAFETY: as above (an i64 read as its u64 bits).
        SignalKind(unsafe { Self::word(field.cast::<u64>()) } as i64)
    }

    /// Load the value.
    pub fn load(&self, order: MemoryOrder) -> i64 {
        self.value().load(order.for_load())
    }

    /// Store `value`. Waiters sleeping on the signal's event are not woken: see
    /// [`notify`](Self::notify).
    pub fn store(&self, value: i64, order: MemoryOrder) {
        self.value().store(value, order.for_store());
    }

    /// Add `value` (wrapping); returns the previous value.
    pub fn add(&self, value: i64, order: MemoryOrder) -> i64 {
        self.value().fetch_add(value, order.for_update())
    }

    /// Subtract `value` (wrapping); returns the previous value.
    pub fn sub(&self, value: i64, order: MemoryOrder) -> i64 {
        self.value().fetch_sub(value, order.for_update())
    }

    /// Bitwise and; returns the previous value.
    pub fn and(&self, value: i64, order: MemoryOrder) -> i64 {
        self.value().fetch_and(value, order.for_update())
    }

    /// Bitwise or; returns the previous value.
    pub fn or(&self, value: i64, order: MemoryOrder) -> i64 {
        self.value().fetch_or(value, order.for_update())
    }

    /// Bitwise exclusive or; returns the previous value.
    pub fn xor(&self, value: i64, order: MemoryOrder) -> i64 {
        self.value().fetch_xor(value, order.for_update())
    }

    /// Swap in `value`; returns the previous value.
    pub fn exchange(&self, value: i64, order: MemoryOrder) -> i64 {
        self.value().swap(value, order.for_update())
    }

    /// Store `new` if the value is `expected`: `Ok(previous)` if it was, `Err(actual)` if not.
    pub fn compare_exchange(
        &self,
        expected: i64,
        new: i64,
        order: MemoryOrder,
    ) -> Result<i64, i64> {
        self.value().compare_exchange(
            expected,
            new,
            order.for_update(),
            order.for_failed_exchange(),
        )
    }

    /// The start timestamp the CP wrote when its packet entered the active phase (GPU ticks;
    /// 0 if the queue does not profile or the packet has not run). Read it after observing
    /// the completion with an acquiring operation.
    pub fn start_ts(&self) -> u64 {
        // SAFETY: the place is the aligned `start_ts` field of the live signal (`new`).
        unsafe { Self::word(&raw mut (*self.signal.as_ptr()).start_ts) }
    }

    /// The end timestamp the CP wrote at completion (GPU ticks; 0 as for `start_ts`).
    pub fn end_ts(&self) -> u64 {
        // SAFETY: the place is the aligned `end_ts` field of the live signal (`new`).
        unsafe { Self::word(&raw mut (*self.signal.as_ptr()).end_ts) }
    }

    /// The event mailbox (the address the CP stores `event_id` to after updating the value,
    /// then raises an interrupt; aql.md §3.2) and the event id, or `None` for a signal without
    /// interrupt.
    pub fn event_mailbox(&self) -> Option<(u64, u32)> {
        // SAFETY: the place is the aligned `event_mailbox_ptr` field of the live signal.
        let mailbox = unsafe { Self::word(&raw mut (*self.signal.as_ptr()).event_mailbox_ptr) };
        if mailbox == 0 {
            return None;
        }
        // SAFETY: the place is the aligned u32 `event_id` field of the live signal, accessed
        // only atomically.
        let event_id = unsafe { AtomicU32::from_ptr(&raw mut (*self.signal.as_ptr()).event_id) }
            .load(Ordering::Acquire);
        Some((mailbox, event_id))
    }

    /// After a host-side update of the value: wake the threads sleeping on the signal's event,
    /// if it has one (a signal without a mailbox has no event, and its waiters poll).
    ///
    /// This always wakes; it keeps no count of sleepers. ROCr calls `SetEvent` only when its
    /// waiter count is non-zero, which saves one ioctl per host update but needs waiters to
    /// announce themselves before their last check of the value (or a wake-up is lost until
    /// the sleep's time-out). Host updates of an interrupt signal are rare next to the CP's
    /// decrements (which wake through the mailbox), so the ioctl is not worth that protocol.
    pub fn notify(&self, sleeper: &dyn SignalSleeper) -> Result<(), String> {
        if self.event_mailbox().is_some() {
            sleeper.wake()
        } else {
            Ok(())
        }
    }
}

/// Initialise signal memory: kind USER, `value`, the event mailbox and event id (`None`: no
/// interrupt; both 0), timestamps and reserved words 0.
///
/// # Safety
///
/// `signal` points to 64 writable bytes, 64-byte aligned, that nothing else accesses during
/// the call (the signal is not yet handed to the CP or to another thread).
pub unsafe fn init_signal(signal: NonNull<AmdSignal>, value: i64, mailbox: Option<(u64, u32)>) {
    let (event_mailbox_ptr, event_id) = mailbox.unwrap_or((0, 0));
    let init = AmdSignal {
        kind: SignalKind::USER.0,
        value,
        event_mailbox_ptr,
        event_id,
        ..AmdSignal::default()
    };
    // SAFETY: the caller guarantees a valid, aligned, exclusively accessed amd_signal_t.
    unsafe { signal.as_ptr().write(init) };
}
