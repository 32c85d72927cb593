//! How the server thread waits when the GPU has nothing for it: the idle policy.
//!
//! No doorbell exists in this protocol generation, so the server polls. It spins (yielding
//! its core) for the first [`SPIN_ROUNDS`] empty rounds after work, then sleeps with a
//! growing timeout up to [`MAX_SLEEP`]: a call made after a long quiet spell waits at most
//! about a millisecond for the server to notice it, and an idle server costs one scan of the
//! mailboxes per millisecond (a few microseconds of CPU). The sleep is a `park_timeout`, so
//! the program runner wakes the thread at once when it needs it (to stop, or to drain the
//! last calls after a kernel ends).

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::Thread;
use std::time::Duration;

/// Empty rounds spent yielding before the first sleep.
pub const SPIN_ROUNDS: u32 = 64;
/// The first sleep.
pub const MIN_SLEEP: Duration = Duration::from_micros(20);
/// The longest sleep.
pub const MAX_SLEEP: Duration = Duration::from_millis(1);

/// The server's pause between polls, and the flag that ends it.
#[derive(Debug, Default)]
pub struct Waiter {
    stop: AtomicBool,
}

impl Waiter {
    /// Pause after `rounds` empty polls; `false` once the server should stop.
    pub fn pause(&self, rounds: u32) -> bool {
        if self.stopped() {
            return false;
        }
        if rounds < SPIN_ROUNDS {
            std::thread::yield_now();
        } else {
            std::thread::park_timeout(sleep_after(rounds));
        }
        !self.stopped()
    }

    /// Whether the server should stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Ask the server to stop and wake it.
    pub fn stop(&self, server: &Thread) {
        self.stop.store(true, Ordering::Release);
        server.unpark();
    }
}

/// The sleep after `rounds` empty polls: doubling from [`MIN_SLEEP`] to [`MAX_SLEEP`].
pub fn sleep_after(rounds: u32) -> Duration {
    let doublings = rounds.saturating_sub(SPIN_ROUNDS).min(16);
    MIN_SLEEP.saturating_mul(1 << doublings).min(MAX_SLEEP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleeps_grow_to_the_cap() {
        assert_eq!(sleep_after(SPIN_ROUNDS), MIN_SLEEP);
        assert_eq!(sleep_after(SPIN_ROUNDS + 1), MIN_SLEEP * 2);
        assert_eq!(sleep_after(u32::MAX), MAX_SLEEP);
    }
}
