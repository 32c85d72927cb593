//! The simulated GPU's timestamp counter, shared by GET_CLOCK_COUNTERS, the command
//! processor's profiling timestamps and `s_memrealtime`, so that all three agree.
//!
//! Real parts run this counter at a fixed frequency reported by AMDGPU_INFO
//! (`gpu_counter_freq`, in kHz); MI200 and MI300 report 100 MHz. The simulator derives it from
//! `CLOCK_MONOTONIC_RAW`, so GPU and CPU timestamps can be correlated as on hardware.

/// Frequency of the simulated timestamp counter, in Hz.
pub const GPU_COUNTER_FREQUENCY_HZ: u64 = 100_000_000;

/// `CLOCK_MONOTONIC_RAW` in nanoseconds (what GET_CLOCK_COUNTERS reports as the CPU counter).
pub fn monotonic_raw_ns() -> u64 {
    let ts = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC_RAW)
        .expect("CLOCK_MONOTONIC_RAW is always available on Linux");
    ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64
}

/// `CLOCK_BOOTTIME` in nanoseconds (GET_CLOCK_COUNTERS' system counter).
pub fn boottime_ns() -> u64 {
    let ts = nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME)
        .expect("CLOCK_BOOTTIME is always available on Linux");
    ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64
}

/// The GPU timestamp now, in ticks of [`GPU_COUNTER_FREQUENCY_HZ`].
pub fn gpu_timestamp() -> u64 {
    ticks_at(monotonic_raw_ns())
}

/// The counter value at `CLOCK_MONOTONIC_RAW` time `ns`: whole ticks elapsed.
fn ticks_at(ns: u64) -> u64 {
    ns / (1_000_000_000 / GPU_COUNTER_FREQUENCY_HZ)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tick_is_ten_nanoseconds_of_the_raw_clock() {
        // 100 MHz: whole 10 ns steps, truncated.
        assert_eq!(ticks_at(0), 0);
        assert_eq!(ticks_at(9), 0);
        assert_eq!(ticks_at(10), 1);
        assert_eq!(ticks_at(19), 1);
        assert_eq!(ticks_at(1_000_000_000), GPU_COUNTER_FREQUENCY_HZ);
        // A year of uptime in nanoseconds fits, and stays exact.
        let year_ns = 365 * 24 * 3600 * 1_000_000_000u64;
        assert_eq!(ticks_at(year_ns + 25), year_ns / 10 + 2);
    }

    #[test]
    fn the_counter_reads_the_raw_clock_and_never_goes_back() {
        // Ordering only (no timing bound): each read lies between the raw clock reads around
        // it, and a later read is never smaller.
        let before = ticks_at(monotonic_raw_ns());
        let gpu = gpu_timestamp();
        let after = ticks_at(monotonic_raw_ns());
        assert!(
            before <= gpu && gpu <= after,
            "{before} <= {gpu} <= {after}"
        );
        assert!(gpu_timestamp() >= gpu);
    }
}
