//! Signals: a handle is the address of the signal's `amd_signal_t` (clients put it in packets
//! and read the value through `hsa_amd_signal_value_pointer`), kept in a table for the
//! operations. A queue's doorbell signal is in the table of doorbells: a store to it rings
//! that queue's doorbell.

use std::time::Duration;

use aqueduct::{Condition, MemoryOrder, Signal};

use crate::error::{Error, Result, entry};
use crate::runtime::{Runtime, runtime};
use crate::status::Status;

/// The signal of `handle`.
pub fn signal(runtime: &Runtime, handle: u64) -> Result<Signal> {
    runtime
        .objects
        .signals
        .signals
        .get(handle)
        .ok_or_else(|| Error::new(Status::INVALID_SIGNAL, format!("signal {handle:#x}")))
}

/// Create a signal with `initial` value: an interrupt signal (waits sleep in the kernel).
pub fn create(runtime: &Runtime, initial: i64) -> Result<u64> {
    let signal = runtime.device.signal(initial)?;
    let handle = signal.handle();
    runtime.objects.signals.signals.insert(handle, signal);
    Ok(handle)
}

/// `hsa_signal_create`.
///
/// # Safety
///
/// `signal` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_signal_create(
    initial_value: i64,
    _num_consumers: u32,
    _consumers: *const u64,
    signal: *mut u64,
) -> Status {
    entry("hsa_signal_create", || {
        let runtime = runtime()?;
        if signal.is_null() {
            return Err(Error::invalid_argument("null signal"));
        }
        let handle = create(&runtime, initial_value)?;
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { signal.write(handle) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_signal_create`: attributes (`HSA_AMD_SIGNAL_AMD_GPU_ONLY`, `_IPC`) do not change
/// what aqueduct makes; IPC signals are refused as ROCr refuses them without IPC support.
///
/// # Safety
///
/// `signal` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_signal_create(
    initial_value: i64,
    _num_consumers: u32,
    _consumers: *const u64,
    attributes: u64,
    signal: *mut u64,
) -> Status {
    entry("hsa_amd_signal_create", || {
        /// `HSA_AMD_SIGNAL_IPC`.
        const IPC: u64 = 2;
        let runtime = runtime()?;
        if signal.is_null() {
            return Err(Error::invalid_argument("null signal"));
        }
        if attributes & IPC != 0 {
            return Err(Error::invalid_argument("IPC signals are not supported"));
        }
        let handle = create(&runtime, initial_value)?;
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { signal.write(handle) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_signal_destroy`.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_signal_destroy(signal: u64) -> Status {
    entry("hsa_signal_destroy", || {
        let runtime = runtime()?;
        runtime
            .objects
            .signals
            .signals
            .remove(signal)
            .ok_or_else(|| Error::new(Status::INVALID_SIGNAL, format!("signal {signal:#x}")))?;
        runtime.objects.copies.forget(signal);
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_signal_value_pointer`: the address of the value (the `amd_signal_t`'s `value`).
///
/// # Safety
///
/// `value_ptr` is null or valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_signal_value_pointer(
    signal: u64,
    value_ptr: *mut *mut i64,
) -> Status {
    entry("hsa_amd_signal_value_pointer", || {
        let runtime = runtime()?;
        self::signal(&runtime, signal)?;
        if value_ptr.is_null() {
            return Err(Error::invalid_argument("null value pointer"));
        }
        let address = signal + std::mem::offset_of!(aqueduct::aql::AmdSignal, value) as u64;
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { value_ptr.write(address as *mut i64) };
        Ok(Status::SUCCESS)
    })
}

/// Run `f` on the live signal of `handle`; 0 (and a log line) where there is none: the
/// value-returning signal functions have no status to report it with.
fn on_signal(
    name: &'static str,
    handle: u64,
    f: impl FnOnce(&Signal) -> aqueduct::Result<i64>,
) -> i64 {
    let outcome = runtime()
        .and_then(|runtime| signal(&runtime, handle))
        .and_then(|s| f(&s).map_err(Error::from));
    outcome.unwrap_or_else(|error| {
        tracing::debug!(function = name, %error, "signal operation failed");
        0
    })
}

/// A store: to a doorbell signal, the queue's doorbell is rung with the value.
fn store(name: &'static str, handle: u64, value: i64, order: MemoryOrder) {
    if let Ok(runtime) = runtime()
        && let Some(queue) = runtime.objects.signals.doorbells.get(handle)
    {
        if let Err(error) = queue.ring_doorbell(value as u64) {
            tracing::debug!(function = name, %error, "ringing a doorbell failed");
        }
        return;
    }
    on_signal(name, handle, |s| s.store(value, order).map(|()| 0));
}

macro_rules! loads {
    ($($name:ident => $order:expr),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(signal: u64) -> i64 {
            on_signal(stringify!($name), signal, |s| s.load($order))
        }
    )*};
}

macro_rules! stores {
    ($($name:ident => $order:expr),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(signal: u64, value: i64) {
            store(stringify!($name), signal, value, $order);
        }
    )*};
}

macro_rules! updates {
    ($($name:ident => $op:ident, $order:expr),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(signal: u64, value: i64) {
            on_signal(stringify!($name), signal, |s| s.$op(value, $order));
        }
    )*};
}

macro_rules! exchanges {
    ($($name:ident => $order:expr),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: the previous value.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(signal: u64, value: i64) -> i64 {
            on_signal(stringify!($name), signal, |s| s.exchange(value, $order))
        }
    )*};
}

macro_rules! compare_exchanges {
    ($($name:ident => $order:expr),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: the previous value.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(signal: u64, expected: i64, value: i64) -> i64 {
            on_signal(stringify!($name), signal, |s| {
                s.compare_exchange(expected, value, $order).map(|r| r.unwrap_or_else(|v| v))
            })
        }
    )*};
}

macro_rules! waits {
    ($($name:ident => $order:expr),* $(,)?) => {$(
        #[doc = concat!("`", stringify!($name), "`: the value last seen.")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name(
            signal: u64,
            condition: u32,
            compare_value: i64,
            timeout_hint: u64,
            _wait_state_hint: u32,
        ) -> i64 {
            on_signal(stringify!($name), signal, |s| wait(s, condition, compare_value, timeout_hint, $order))
        }
    )*};
}

/// A wait: `timeout_hint` is in system timestamp ticks (ns); `u64::MAX` waits for ever. A
/// timed-out wait returns the current value, as ROCr's does.
fn wait(
    signal: &Signal,
    condition: u32,
    compare: i64,
    timeout_hint: u64,
    order: MemoryOrder,
) -> aqueduct::Result<i64> {
    let condition = match condition {
        0 => Condition::Eq,
        1 => Condition::Ne,
        2 => Condition::Lt,
        3 => Condition::Gte,
        _ => return signal.load(order),
    };
    let timeout = (timeout_hint != u64::MAX).then(|| Duration::from_nanos(timeout_hint));
    match signal.wait(condition, compare, timeout) {
        Ok(value) => Ok(value),
        Err(error) if error.kind() == aqueduct::ErrorKind::Timeout => signal.load(order),
        Err(error) => Err(error),
    }
}

use MemoryOrder::{AcqRel, Acquire, Relaxed, Release};

loads! {
    hsa_signal_load_relaxed => Relaxed,
    hsa_signal_load_scacquire => Acquire,
    hsa_signal_load_acquire => Acquire,
}

stores! {
    hsa_signal_store_relaxed => Relaxed,
    hsa_signal_store_screlease => Release,
    hsa_signal_store_release => Release,
    hsa_signal_silent_store_relaxed => Relaxed,
    hsa_signal_silent_store_screlease => Release,
}

updates! {
    hsa_signal_add_relaxed => add, Relaxed,
    hsa_signal_add_scacquire => add, Acquire,
    hsa_signal_add_screlease => add, Release,
    hsa_signal_add_scacq_screl => add, AcqRel,
    hsa_signal_add_acquire => add, Acquire,
    hsa_signal_add_release => add, Release,
    hsa_signal_add_acq_rel => add, AcqRel,
    hsa_signal_subtract_relaxed => sub, Relaxed,
    hsa_signal_subtract_scacquire => sub, Acquire,
    hsa_signal_subtract_screlease => sub, Release,
    hsa_signal_subtract_scacq_screl => sub, AcqRel,
    hsa_signal_subtract_acquire => sub, Acquire,
    hsa_signal_subtract_release => sub, Release,
    hsa_signal_subtract_acq_rel => sub, AcqRel,
    hsa_signal_and_relaxed => and, Relaxed,
    hsa_signal_and_scacquire => and, Acquire,
    hsa_signal_and_screlease => and, Release,
    hsa_signal_and_scacq_screl => and, AcqRel,
    hsa_signal_and_acquire => and, Acquire,
    hsa_signal_and_release => and, Release,
    hsa_signal_and_acq_rel => and, AcqRel,
    hsa_signal_or_relaxed => or, Relaxed,
    hsa_signal_or_scacquire => or, Acquire,
    hsa_signal_or_screlease => or, Release,
    hsa_signal_or_scacq_screl => or, AcqRel,
    hsa_signal_or_acquire => or, Acquire,
    hsa_signal_or_release => or, Release,
    hsa_signal_or_acq_rel => or, AcqRel,
    hsa_signal_xor_relaxed => xor, Relaxed,
    hsa_signal_xor_scacquire => xor, Acquire,
    hsa_signal_xor_screlease => xor, Release,
    hsa_signal_xor_scacq_screl => xor, AcqRel,
    hsa_signal_xor_acquire => xor, Acquire,
    hsa_signal_xor_release => xor, Release,
    hsa_signal_xor_acq_rel => xor, AcqRel,
}

exchanges! {
    hsa_signal_exchange_relaxed => Relaxed,
    hsa_signal_exchange_scacquire => Acquire,
    hsa_signal_exchange_screlease => Release,
    hsa_signal_exchange_scacq_screl => AcqRel,
    hsa_signal_exchange_acquire => Acquire,
    hsa_signal_exchange_release => Release,
    hsa_signal_exchange_acq_rel => AcqRel,
}

compare_exchanges! {
    hsa_signal_cas_relaxed => Relaxed,
    hsa_signal_cas_scacquire => Acquire,
    hsa_signal_cas_screlease => Release,
    hsa_signal_cas_scacq_screl => AcqRel,
    hsa_signal_cas_acquire => Acquire,
    hsa_signal_cas_release => Release,
    hsa_signal_cas_acq_rel => AcqRel,
}

waits! {
    hsa_signal_wait_relaxed => Relaxed,
    hsa_signal_wait_scacquire => Acquire,
    hsa_signal_wait_acquire => Acquire,
}
