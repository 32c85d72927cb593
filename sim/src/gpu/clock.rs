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
    monotonic_raw_ns() / (1_000_000_000 / GPU_COUNTER_FREQUENCY_HZ)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_ticks_follow_the_cpu_clock() {
        let (g0, c0) = (gpu_timestamp(), monotonic_raw_ns());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (g1, c1) = (gpu_timestamp(), monotonic_raw_ns());
        let gpu_ns = (g1 - g0) * 10;
        let cpu_ns = c1 - c0;
        assert!(
            gpu_ns.abs_diff(cpu_ns) < 1_000_000,
            "gpu {gpu_ns} ns vs cpu {cpu_ns} ns"
        );
    }
}
