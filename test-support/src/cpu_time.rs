//! CPU time this process has used, for tests that prove something idle costs nothing (a
//! parked command processor, a sleeping waiter): measure across a window, compare with it.

use std::time::Duration;

/// User plus system CPU time of the whole process so far (`getrusage(RUSAGE_SELF)`).
pub fn of_process() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one rusage through the pointer it is given, which is valid.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage(RUSAGE_SELF)");
    // SAFETY: getrusage succeeded and filled the struct (it was zeroed before anyway).
    let usage = unsafe { usage.assume_init() };
    let tv = |t: libc::timeval| {
        Duration::new(
            u64::try_from(t.tv_sec).unwrap_or(0),
            u32::try_from(t.tv_usec).unwrap_or(0) * 1000,
        )
    };
    tv(usage.ru_utime) + tv(usage.ru_stime)
}
