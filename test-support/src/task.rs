//! Threads of this process as Linux shows them in `/proc/self/task/<tid>`: for a test that
//! needs "the waiter is really asleep" (blocked in the kernel, past any spinning) before it
//! acts, without a sleep that hopes so.
//!
//! A waiter thread records its [`id`] and announces that it is about to wait; the test then
//! waits with [`assert_asleep_within`] until the kernel shows that thread sleeping. A thread
//! that only spins, yields or runs is never seen asleep.

use std::time::Duration;

use crate::wait;

/// The calling thread's kernel thread id (`gettid(2)`).
pub fn id() -> i32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() }
}

/// The scheduler state of thread `tid` of this process (the third field of
/// `/proc/self/task/<tid>/stat`: `R` running, `S` sleeping, `D` in uninterruptible sleep,
/// ...), or `None` if the thread is gone.
pub fn state(tid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")).ok()?;
    // "tid (comm) S ...": the name may hold spaces and parentheses; the state follows the
    // last ')'.
    let (_, after_name) = stat.rsplit_once(')')?;
    after_name.trim_start().chars().next()
}

/// Whether thread `tid` is blocked in the kernel (state `S` or `D`).
pub fn is_asleep(tid: i32) -> bool {
    matches!(state(tid), Some('S' | 'D'))
}

/// Wait until thread `tid` is asleep in the kernel; panic with `what` (the wait it should be
/// asleep in) if it is not within `timeout`.
#[track_caller]
pub fn assert_asleep_within(tid: i32, timeout: Duration, what: &str) {
    wait::assert_until(timeout, &format!("thread {tid} asleep in {what}"), || {
        is_asleep(tid)
    });
}
