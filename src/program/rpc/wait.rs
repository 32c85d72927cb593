//! How the server thread waits when the GPU has nothing for it: the idle policy.
//!
//! No doorbell exists in this protocol generation, so the server polls. The policy is set by
//! how long the server has been idle (since its last served call, or since a wait inside a
//! call began), not by how many polls came up empty: a poll is cheap on an idle host and
//! slow on a busy one, and a count of them says nothing about time.
//! - For the first [`HOT`] it polls every [`NAP`] (a few microseconds): a GPU program that
//!   makes calls in a row (a loop of `printf`s, `malloc`s) makes its next one within
//!   microseconds, and must not find the server in a long sleep. Not `sched_yield`: on a
//!   busy host a yield hands the core to another runnable thread for the rest of its time
//!   slice (measured: 2.1 ms a round trip with naps against 3.9 ms with yields, with two
//!   busy loops on this 2-core machine; 19 µs against 26–43 µs without them).
//! - After that it sleeps between polls for an eighth of the time it has been idle, at least
//!   [`MIN_SLEEP`] and at most [`MAX_SLEEP`]: a call after an idle spell of `t` waits at most
//!   about `t / 8` more for the server to notice it (never more than 2 ms: a call that comes
//!   after at least 16 ms of quiet), and an idle server costs one scan of the mailboxes every
//!   2 ms (a few microseconds of CPU each; at 1 ms the bench measured up to 1.8 % of a core
//!   at load average 4).
//!
//! The sleep is a wait on a condition variable, so the program runner wakes the thread at
//! once when it needs it (to stop, or to drain the last calls after a kernel ends). It is
//! not `std::thread::park`: the server thread is not a `std::thread`
//! (the `server` module says why). The thread's timer slack is cut to [`TIMER_SLACK`]
//! ([`tighten_timer_slack`]): with Linux's default of 50 µs, a 20 µs sleep lasts about 70.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long after its last work the server polls without sleeping.
pub const HOT: Duration = Duration::from_micros(200);
/// The pause between polls while hot: a real sleep, not a yield (a yield on a busy host
/// hands the core away for the rest of another thread's time slice; a thread woken from a
/// short sleep runs again at once). About 5 µs on an idle host with [`TIMER_SLACK`].
pub const NAP: Duration = Duration::from_micros(1);
/// The shortest sleep.
pub const MIN_SLEEP: Duration = Duration::from_micros(20);
/// The longest sleep.
pub const MAX_SLEEP: Duration = Duration::from_millis(2);
/// The server thread's timer slack: how much later than asked the kernel may end its sleeps.
pub const TIMER_SLACK: Duration = Duration::from_micros(1);

/// The server's pause between polls, the wake-up bell and the flag that ends it.
#[derive(Debug, Default)]
pub struct Waiter {
    stop: AtomicBool,
    /// Set by [`Waiter::wake`], cleared by the pause it ends.
    rung: Mutex<bool>,
    bell: Condvar,
}

impl Waiter {
    /// Pause between two polls, the server having been idle since `idle_since`; `false`
    /// once the server should stop.
    pub fn pause(&self, idle_since: Instant) -> bool {
        if self.stopped() {
            return false;
        }
        let idle = idle_since.elapsed();
        if idle < HOT {
            std::thread::sleep(NAP);
        } else {
            let mut rung = self.rung.lock().unwrap_or_else(PoisonError::into_inner);
            if !*rung && !self.stopped() {
                rung = self
                    .bell
                    .wait_timeout(rung, sleep_after(idle))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            *rung = false;
        }
        !self.stopped()
    }

    /// Whether the server should stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// End the server's current (or next) sleep at once.
    pub fn wake(&self) {
        *self.rung.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.bell.notify_all();
    }

    /// Ask the server to stop and wake it.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        self.wake();
    }
}

/// The sleep after `idle` without work: an eighth of it, within [`MIN_SLEEP`]..=[`MAX_SLEEP`].
pub fn sleep_after(idle: Duration) -> Duration {
    (idle / 8).clamp(MIN_SLEEP, MAX_SLEEP)
}

/// Cut the calling thread's timer slack to [`TIMER_SLACK`] (Linux `PR_SET_TIMERSLACK`),
/// so its short sleeps last about as long as asked. Best effort: where it fails the sleeps
/// are only longer.
pub fn tighten_timer_slack() {
    let nanos = TIMER_SLACK.as_nanos().try_into().unwrap_or(1);
    if let Err(error) = nix::sys::prctl::set_timerslack(nanos) {
        tracing::debug!(%error, "PR_SET_TIMERSLACK failed; the RPC server sleeps longer");
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn sleeps_grow_with_idle_time_to_the_cap() {
        assert_eq!(sleep_after(HOT), MIN_SLEEP.max(HOT / 8));
        assert_eq!(
            sleep_after(Duration::from_millis(4)),
            Duration::from_micros(500)
        );
        assert_eq!(sleep_after(Duration::from_secs(60)), MAX_SLEEP);
        assert_eq!(sleep_after(Duration::from_millis(16)), MAX_SLEEP);
    }

    #[test]
    fn timer_slack_is_tightened() {
        std::thread::spawn(|| {
            tighten_timer_slack();
            let slack = nix::sys::prctl::get_timerslack().expect("PR_GET_TIMERSLACK");
            assert_eq!(u128::try_from(slack).unwrap(), TIMER_SLACK.as_nanos());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_stop_ends_the_pauses() {
        let waiter = Arc::new(Waiter::default());
        let sleeper = Arc::clone(&waiter);
        let idle_long = Instant::now()
            .checked_sub(Duration::from_secs(3600))
            .unwrap();
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            while sleeper.pause(idle_long) {}
            started.elapsed()
        });
        waiter.stop();
        let slept = thread.join().unwrap();
        assert!(slept < Duration::from_secs(5), "{slept:?}");
    }
}
