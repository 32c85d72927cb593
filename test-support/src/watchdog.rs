//! A deadline for tests that can only fail by hanging (a lost wake-up, a deadlock): the body
//! runs on its own thread and the test fails, naming the deadline, if it has not finished by
//! then. A CI run then reports a failed test instead of a time-out of the whole job.
//!
//! The abandoned thread keeps running (a thread cannot be killed); the test process ends when
//! libtest's main returns, which it does without joining test threads.

use std::sync::mpsc;
use std::time::Duration;

/// A generous deadline for tests whose work takes milliseconds: long enough for a loaded
/// 2-core CI machine, short enough to beat any job time-out.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(60);

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
