//! Deadlines for tests that can only fail by hanging (a lost wake-up, a deadlock), so that a
//! CI run reports a failed test instead of a time-out of the whole job.
//!
//! - [`within`]: the body runs on its own thread and the test fails, naming the deadline, if
//!   it has not finished by then. The abandoned thread keeps running (a thread cannot be
//!   killed); the test process ends when libtest's main returns, which it does without
//!   joining test threads.
//! - [`arm`]: where the body cannot move to another thread (it borrows the test's locals, or
//!   waits in `thread::scope`), a deadline on the whole test binary, named by what it waits
//!   for.

use std::sync::mpsc;
use std::time::Duration;

/// A generous deadline for tests whose work takes milliseconds: long enough for a loaded
/// 2-core CI machine, short enough to beat any job time-out.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);

/// The deadline for [`arm`]: it ends the whole test binary, so it must never fire on a slow
/// run (the waits it bounds have time-outs of their own of up to minutes), only on a hang.
pub const HANG_DEADLINE: Duration = Duration::from_secs(600);

/// Run `body` on a new thread and return its result; panic if it has not finished within
/// `deadline`. A panic in `body` is passed on unchanged.
#[track_caller]
pub fn within<T: Send + 'static>(
    deadline: Duration,
    body: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done, outcome) = mpsc::sync_channel(1);
    let worker = std::thread::Builder::new()
        .name("watchdog-body".to_owned())
        .spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
            let _ = done.send(result);
        })
        .unwrap_or_else(|err| panic!("watchdog: cannot start the test body's thread: {err}"));
    match outcome.recv_timeout(deadline) {
        Ok(Ok(value)) => {
            let _ = worker.join();
            value
        }
        Ok(Err(payload)) => {
            let _ = worker.join();
            std::panic::resume_unwind(payload)
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("watchdog: the test did not finish within {deadline:?} (hung?)")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            panic!("watchdog: the test body's thread ended without a result")
        }
    }
}

/// A deadline on the whole test binary for a wait the test cannot bound itself: the join of a
/// scoped thread (a panic cannot leave `thread::scope` while a thread in it still runs), a
/// wait without a time-out, a `Barrier`. If the returned [`Armed`] is still alive `deadline`
/// from now, the watchdog says on stderr which test waited for what and ends the process with
/// status 101, the status of a failed test run, so the run fails instead of hanging.
///
/// Keep the value until the wait is over (`let _watchdog = ...`; `let _ = ...` would disarm it
/// at once). Dropping it disarms the watchdog and joins its thread, so a test that counts
/// the process' threads sees none of it afterwards.
#[must_use = "the watchdog is disarmed when this value is dropped"]
pub fn arm(deadline: Duration, what: &str) -> Armed {
    let test = std::thread::current()
        .name()
        .unwrap_or("an unnamed thread")
        .to_owned();
    let message =
        format!("watchdog: {test}: not within {deadline:?}: {what}; ending the test process\n");
    let (disarm, disarmed) = mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("watchdog".to_owned())
        .spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = disarmed.recv_timeout(deadline) {
                fire(&message);
            }
        })
        .unwrap_or_else(|err| panic!("watchdog: cannot start its thread: {err}"));
    Armed {
        disarm: Some(disarm),
        thread: Some(thread),
    }
}

/// An armed [`arm`] watchdog; dropping it disarms it.
#[derive(Debug)]
pub struct Armed {
    disarm: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Armed {
    fn drop(&mut self) {
        // Closing the channel wakes the watchdog's thread, which then ends.
        drop(self.disarm.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Say why on stderr and end the process at once: no exit handlers or destructors, which
/// could wait on the very thread that hangs (the stdout lock, a mutex of the code under test).
fn fire(message: &str) -> ! {
    // Straight to fd 2 with write(2): libtest's capture would hide it, and std's stderr
    // handle takes a lock a hung thread might hold.
    let mut rest = message.as_bytes();
    while !rest.is_empty() {
        // SAFETY: `rest` is valid for reads of its length.
        let written = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
        match usize::try_from(written) {
            Ok(n) if n > 0 => rest = &rest[n..],
            _ => break,
        }
    }
    // SAFETY: _exit ends the process; nothing of it runs afterwards.
    unsafe { libc::_exit(FIRED_STATUS) }
}

/// The exit status of a process the watchdog ended: libtest's own for a failed run.
pub const FIRED_STATUS: i32 = 101;
