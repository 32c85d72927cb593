//! What a host wait sleeps on: the signal's kernel event, behind a trait this crate is handed
//! (it makes no system call itself).

use std::time::Duration;

/// Sleeping on a signal's kernel event; `kfd` implements it with WAIT_EVENTS and SET_EVENT.
pub trait SignalSleeper: Send + Sync {
    /// Sleep until the signal's event may have fired or `timeout` passes (spurious wake-ups
    /// are fine). `Err` means the sleep itself failed, with why.
    fn sleep(&self, timeout: Duration) -> Result<(), String>;

    /// Wake whoever sleeps on the event (after a host-side update of an interrupt signal).
    fn wake(&self) -> Result<(), String>;
}
