//! The CPU time the server thread used: what serving (and idling between calls) cost.

use std::time::Duration;

/// CPU time (user + system) of the calling thread, from `getrusage(RUSAGE_THREAD)`; `None`
/// where the call fails.
pub fn thread_cpu_time() -> Option<Duration> {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is a valid, writable `rusage`; getrusage writes it whole on success
    // and touches nothing else.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: getrusage returned 0, so it initialised `usage` (and zeroed() already made
    // every byte a valid value of the plain-integer struct).
    let usage = unsafe { usage.assume_init() };
    let time = |t: libc::timeval| {
        Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
    };
    Some(time(usage.ru_utime) + time(usage.ru_stime))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_busy_thread_uses_cpu_time() {
        let before = super::thread_cpu_time().unwrap();
        let started = std::time::Instant::now();
        let mut x = 0u64;
        while started.elapsed() < std::time::Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(super::thread_cpu_time().unwrap() > before);
    }
}
