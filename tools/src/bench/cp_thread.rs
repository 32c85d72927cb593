//! The simulated command processor's thread as `/proc/self/task` shows it: which thread serves
//! a queue, whether it sleeps (parked), and the CPU time it has used. Only the simulator (in
//! this process, or behind the LD_PRELOAD interposer) has such a thread; on hardware none is
//! found and the figures that need it are not measured.

use std::time::{Duration, Instant};

use amdgpu_sim::cp::PROCESSOR_THREAD_PREFIX;

/// Linux truncates a thread's name to 15 bytes (`TASK_COMM_LEN` less the NUL).
const COMM_BYTES: usize = 15;

/// One thread of this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpThread {
    tid: u32,
}

impl CpThread {
    /// The ids of this process' threads now.
    pub fn threads() -> Vec<u32> {
        std::fs::read_dir("/proc/self/task")
            .map(|dir| {
                dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The processor of queue `queue_id` on GPU `gpu_id` (its thread is named
    /// `cp-gpu<gpu_id>-q<queue_id>`), among the threads not in `before` (the shader workers a
    /// processor starts inherit its name; they start after it, so the lowest id is the
    /// processor). Waits up to `within` for the thread to have named itself; `None` if no such
    /// thread appears (no simulator in this process).
    pub fn of_queue(gpu_id: u32, queue_id: u32, before: &[u32], within: Duration) -> Option<Self> {
        let name = format!("{PROCESSOR_THREAD_PREFIX}{gpu_id}-q{queue_id}");
        let name = &name.as_bytes()[..name.len().min(COMM_BYTES)];
        let deadline = Instant::now() + within;
        loop {
            let found = Self::threads()
                .into_iter()
                .filter(|tid| !before.contains(tid))
                .filter(|tid| {
                    std::fs::read(format!("/proc/self/task/{tid}/comm"))
                        .is_ok_and(|comm| comm.strip_suffix(b"\n").unwrap_or(&comm) == name)
                })
                .min();
            if let Some(tid) = found {
                return Some(Self { tid });
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The calling thread.
    pub fn current() -> Option<Self> {
        let link = std::fs::read_link("/proc/thread-self").ok()?;
        let tid = link.file_name()?.to_str()?.parse().ok()?;
        Some(Self { tid })
    }

    /// Whether the thread sleeps now (`S`: interruptible sleep, where a parked processor
    /// waits on its condition variable's futex); `None` if its state cannot be read.
    pub fn sleeping(self) -> Option<bool> {
        let stat = std::fs::read_to_string(format!("/proc/self/task/{}/stat", self.tid)).ok()?;
        // The name, in parentheses, may hold anything: the state follows the last ')'.
        let state = stat.rsplit_once(')')?.1.split_whitespace().next()?;
        Some(state == "S")
    }

    /// CPU time the thread has used (`schedstat`'s first field, in ns; up to date for a
    /// thread that is not running, as the scheduler accounts it at every switch); `None` if
    /// the kernel does not report it.
    pub fn cpu_time(self) -> Option<Duration> {
        self.schedstat(0)
    }

    /// Time the thread has spent runnable but waiting for a core (`schedstat`'s second
    /// field): the scheduler's share of its latency.
    pub fn run_delay(self) -> Option<Duration> {
        self.schedstat(1)
    }

    /// Field `index` of the thread's `schedstat`, in ns.
    fn schedstat(self, index: usize) -> Option<Duration> {
        let stat =
            std::fs::read_to_string(format!("/proc/self/task/{}/schedstat", self.tid)).ok()?;
        let nanos: u64 = stat.split_whitespace().nth(index)?.parse().ok()?;
        Some(Duration::from_nanos(nanos))
    }

    /// Wait until the thread is parked: more than `quiet` since `since` (the processor's spin
    /// window after its last packet) and asleep. Sleeps between looks, leaving the cores to
    /// the processor. False if that does not happen within `within`.
    pub fn wait_parked(self, since: Instant, quiet: Duration, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            if since.elapsed() > quiet && self.sleeping() == Some(true) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parked_thread_is_found_by_name_sleeps_and_has_used_cpu() {
        let before = CpThread::threads();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let worker = std::thread::Builder::new()
            .name(format!("{PROCESSOR_THREAD_PREFIX}7-q3"))
            .spawn(move || {
                // Some work, then a sleep until told to end.
                let mut x = 0u64;
                for i in 0..100_000u64 {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
                }
                let _ = rx.recv();
                x
            })
            .unwrap();
        let thread = CpThread::of_queue(7, 3, &before, Duration::from_secs(30)).unwrap();
        assert!(CpThread::of_queue(7, 4, &before, Duration::ZERO).is_none());
        assert!(thread.wait_parked(Instant::now(), Duration::ZERO, Duration::from_secs(30)));
        assert!(thread.cpu_time().unwrap() > Duration::ZERO);
        tx.send(()).unwrap();
        worker.join().unwrap();
    }
}
