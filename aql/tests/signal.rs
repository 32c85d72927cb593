//! Signal operations and host waits on host memory.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use test_support::{task, wait, watchdog};

use aql::{
    AmdSignal, Condition, MemoryOrder, SignalKind, SignalRef, SignalSleeper, WaitError, init_signal,
};

const ORDERS: [MemoryOrder; 4] = [
    MemoryOrder::Relaxed,
    MemoryOrder::Acquire,
    MemoryOrder::Release,
    MemoryOrder::AcqRel,
];

/// An `amd_signal_t` in host memory.
struct HostSignal {
    memory: NonNull<AmdSignal>,
}

// SAFETY: the signal memory is owned here and only accessed atomically through SignalRefs.
unsafe impl Sync for HostSignal {}

impl HostSignal {
    fn new(value: i64, mailbox: Option<(u64, u32)>) -> Self {
        // Garbage first, to see `init_signal` set every field.
        let garbage = AmdSignal {
            kind: -7,
            value: -7,
            event_mailbox_ptr: 7,
            event_id: 7,
            reserved1: 7,
            start_ts: 7,
            end_ts: 7,
            queue_ptr: 7,
            reserved3: [7; 2],
        };
        let memory = NonNull::new(Box::into_raw(Box::new(garbage))).unwrap();
        // SAFETY: a fresh, aligned, exclusively owned amd_signal_t.
        unsafe { init_signal(memory, value, mailbox) };
        Self { memory }
    }

    fn signal(&self) -> SignalRef {
        // SAFETY: the memory lives as long as `self`, which outlives every SignalRef the tests
        // use (they are scoped inside the test's borrow of `self`); access is atomic only.
        unsafe { SignalRef::new(self.memory) }
    }

    /// What the CP does when profiling: write the timestamps.
    fn write_timestamps(&self, start: u64, end: u64) {
        // SAFETY: aligned fields of the owned signal, accessed atomically.
        unsafe {
            AtomicU64::from_ptr(&raw mut (*self.memory.as_ptr()).start_ts)
                .store(start, Ordering::Relaxed);
            AtomicU64::from_ptr(&raw mut (*self.memory.as_ptr()).end_ts)
                .store(end, Ordering::Release);
        }
    }
}

impl Drop for HostSignal {
    fn drop(&mut self) {
        // SAFETY: made by Box::into_raw in `new`; no SignalRef is used after the drop.
        drop(unsafe { Box::from_raw(self.memory.as_ptr()) });
    }
}

/// CPU time the calling thread has used.
fn thread_cpu() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a rusage into the pointer it is given.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage");
    // SAFETY: zeroed, then filled by a successful getrusage.
    let usage = unsafe { usage.assume_init() };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// Block until the waiter thread whose id lands in `tid` is asleep in the kernel: past the
/// spin budget (which only yields), in one of its naps.
fn napping(tid: &AtomicI32) {
    wait::assert_until(Duration::from_secs(30), "the waiter's thread id", || {
        tid.load(Ordering::Acquire) != 0
    });
    task::assert_asleep_within(
        tid.load(Ordering::Acquire),
        Duration::from_secs(30),
        "a signal wait's nap",
    );
}

#[test]
fn init_sets_every_field() {
    let host = HostSignal::new(3, Some((0x7000_0000_0010, 42)));
    let signal = host.signal();
    assert_eq!(signal.handle(), host.memory.as_ptr() as u64);
    assert_eq!(signal.handle() % 64, 0);
    assert_eq!(signal.kind(), SignalKind::USER);
    assert_eq!(signal.load(MemoryOrder::Acquire), 3);
    assert_eq!(signal.event_mailbox(), Some((0x7000_0000_0010, 42)));
    assert_eq!((signal.start_ts(), signal.end_ts()), (0, 0));
    // SAFETY: reading the owned signal while no one else touches it.
    let raw = unsafe { host.memory.as_ptr().read() };
    assert_eq!(
        (raw.reserved1, raw.queue_ptr, raw.reserved3),
        (0, 0, [0, 0])
    );
    let plain = HostSignal::new(-1, None);
    assert_eq!(plain.signal().event_mailbox(), None);
    assert_eq!(plain.signal().load(MemoryOrder::Relaxed), -1);
}

#[test]
fn operations_with_every_order() {
    let host = HostSignal::new(0, None);
    let signal = host.signal();
    for order in ORDERS {
        signal.store(10, order);
        assert_eq!(signal.load(order), 10, "{order:?}");
        assert_eq!(signal.add(5, order), 10);
        assert_eq!(signal.sub(20, order), 15);
        assert_eq!(signal.load(order), -5);
        signal.store(0b1100, order);
        assert_eq!(signal.and(0b1010, order), 0b1100);
        assert_eq!(signal.or(0b0001, order), 0b1000);
        assert_eq!(signal.xor(0b1111, order), 0b1001);
        assert_eq!(signal.exchange(77, order), 0b0110);
        assert_eq!(signal.compare_exchange(77, 78, order), Ok(77));
        assert_eq!(signal.compare_exchange(77, 79, order), Err(78));
        assert_eq!(signal.load(order), 78);
        // Wrapping, as the hardware's 64-bit atomics.
        signal.store(i64::MAX, order);
        assert_eq!(signal.add(1, order), i64::MAX);
        assert_eq!(signal.load(order), i64::MIN);
    }
}

#[test]
fn profiling_timestamps_are_readable() {
    let host = HostSignal::new(1, None);
    host.write_timestamps(1000, 2500);
    let signal = host.signal();
    assert_eq!(signal.start_ts(), 1000);
    assert_eq!(signal.end_ts(), 2500);
}

#[test]
fn waits_return_at_once_when_the_condition_holds() {
    let host = HostSignal::new(5, None);
    let signal = host.signal();
    let cases = [
        (Condition::Eq, 5, true),
        (Condition::Eq, 4, false),
        (Condition::Ne, 4, true),
        (Condition::Ne, 5, false),
        (Condition::Lt, 6, true),
        (Condition::Lt, 5, false),
        (Condition::Gte, 5, true),
        (Condition::Gte, 6, false),
    ];
    for (condition, compare, holds) in cases {
        assert_eq!(condition.holds(5, compare), holds);
        let result = signal.wait(condition, compare, Some(Duration::ZERO), None);
        if holds {
            assert_eq!(result, Ok(5), "{condition:?} {compare}");
        } else {
            assert_eq!(
                result,
                Err(WaitError::Timeout { last: 5 }),
                "{condition:?} {compare}"
            );
        }
    }
    // Signed comparison: -1 < 0.
    signal.store(-1, MemoryOrder::Release);
    assert_eq!(
        signal.wait(Condition::Lt, 0, Some(Duration::ZERO), None),
        Ok(-1)
    );
}

#[test]
fn a_wait_is_woken_by_another_threads_store() {
    let host = HostSignal::new(3, None);
    let signal = host.signal();
    for (condition, compare, value) in [
        (Condition::Eq, 0, 0),
        (Condition::Ne, 3, 4),
        (Condition::Lt, 1, -10),
        (Condition::Gte, 100, 100),
    ] {
        signal.store(3, MemoryOrder::Release);
        let _watchdog = watchdog::arm(watchdog::HANG_DEADLINE, "the waiter to end");
        let tid = AtomicI32::new(0);
        thread::scope(|s| {
            let waiter = s.spawn(|| {
                tid.store(task::id(), Ordering::Release);
                signal.wait(condition, compare, Some(Duration::from_secs(30)), None)
            });
            // Past the spin budget (which only yields), so the waiter is napping.
            napping(&tid);
            signal.store(value, MemoryOrder::Release);
            assert_eq!(waiter.join().unwrap(), Ok(value), "{condition:?}");
        });
    }
}

#[test]
fn a_timed_out_wait_returns_the_last_value() {
    let host = HostSignal::new(9, None);
    let signal = host.signal();
    let start = Instant::now();
    assert_eq!(
        signal.wait(Condition::Eq, 0, Some(Duration::from_millis(30)), None),
        Err(WaitError::Timeout { last: 9 })
    );
    assert!(start.elapsed() >= Duration::from_millis(30));

    // The value seen last, not the first: the waiter has seen 9 (it naps) when 8 comes, well
    // before its time runs out.
    let _watchdog = watchdog::arm(watchdog::HANG_DEADLINE, "the waiter to time out");
    let tid = AtomicI32::new(0);
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            tid.store(task::id(), Ordering::Release);
            signal.wait(Condition::Eq, 0, Some(Duration::from_secs(2)), None)
        });
        napping(&tid);
        signal.store(8, MemoryOrder::Release);
        assert_eq!(waiter.join().unwrap(), Err(WaitError::Timeout { last: 8 }));
    });
}

/// A sleeper on a condition variable standing for the signal's kernel event, which is
/// auto-reset as KFD's signal events are: a wake that comes before the sleep is not lost, the
/// sleep that follows it returns at once and consumes it.
#[derive(Default)]
struct CondvarSleeper {
    fired: Mutex<bool>,
    event: Condvar,
    sleeps: AtomicUsize,
    wakes: AtomicUsize,
}

impl SignalSleeper for CondvarSleeper {
    fn sleep(&self, timeout: Duration) -> Result<(), String> {
        self.sleeps.fetch_add(1, Ordering::Relaxed);
        let fired = self.fired.lock().unwrap();
        let (mut fired, _) = self
            .event
            .wait_timeout_while(fired, timeout, |fired| !*fired)
            .unwrap();
        *fired = false;
        Ok(())
    }

    fn wake(&self) -> Result<(), String> {
        self.wakes.fetch_add(1, Ordering::Relaxed);
        *self.fired.lock().unwrap() = true;
        self.event.notify_all();
        Ok(())
    }
}

#[test]
fn a_long_wait_sleeps_and_costs_almost_no_cpu() {
    let host = HostSignal::new(1, Some((0x7000_0000_0000, 5)));
    let signal = host.signal();
    let sleeper = CondvarSleeper::default();
    let _watchdog = watchdog::arm(watchdog::HANG_DEADLINE, "a 1 s wait to time out");
    let (outcome, elapsed, cpu) = thread::scope(|s| {
        s.spawn(|| {
            let start = Instant::now();
            let cpu_before = thread_cpu();
            let outcome = signal.wait(
                Condition::Eq,
                0,
                Some(Duration::from_secs(1)),
                Some(&sleeper),
            );
            (
                outcome,
                start.elapsed(),
                thread_cpu().saturating_sub(cpu_before),
            )
        })
        .join()
        .unwrap()
    });
    assert_eq!(outcome, Err(WaitError::Timeout { last: 1 }));
    assert!(
        elapsed >= Duration::from_secs(1) && elapsed < Duration::from_secs(10),
        "a 1 s wait took {elapsed:?}"
    );
    assert!(sleeper.sleeps.load(Ordering::Relaxed) >= 1);
    assert!(
        cpu < Duration::from_millis(20),
        "a 1 s wait used {cpu:?} of CPU"
    );
    eprintln!(
        "1 s wait with sleeper: {cpu:?} of CPU, {} sleeps",
        sleeper.sleeps.load(Ordering::Relaxed)
    );
}

#[test]
fn a_sleeping_wait_is_woken_by_notify() {
    let host = HostSignal::new(1, Some((0x7000_0000_0000, 5)));
    let signal = host.signal();
    let sleeper = CondvarSleeper::default();
    let _watchdog = watchdog::arm(watchdog::HANG_DEADLINE, "the sleeping wait to end");
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            let cpu_before = thread_cpu();
            let outcome = signal.wait(
                Condition::Eq,
                0,
                Some(Duration::from_secs(60)),
                Some(&sleeper),
            );
            (outcome, thread_cpu().saturating_sub(cpu_before))
        });
        // Past its spin budget, the wait has gone to the sleeper (a wake from here on is not
        // lost: the event stays set until a sleep consumes it).
        wait::assert_until(Duration::from_secs(30), "the wait to sleep", || {
            sleeper.sleeps.load(Ordering::Relaxed) >= 1
        });
        signal.store(0, MemoryOrder::Release);
        signal.notify(&sleeper).unwrap();
        let (outcome, cpu) = waiter.join().unwrap();
        assert_eq!(outcome, Ok(0));
        assert!(
            sleeper.sleeps.load(Ordering::Relaxed) >= 1,
            "the wait never slept"
        );
        assert!(
            cpu < Duration::from_millis(20),
            "a sleeping wait used {cpu:?} of CPU"
        );
    });
    assert_eq!(sleeper.wakes.load(Ordering::Relaxed), 1);

    // A signal without a mailbox has no event to wake.
    let plain = HostSignal::new(1, None);
    plain.signal().notify(&sleeper).unwrap();
    assert_eq!(sleeper.wakes.load(Ordering::Relaxed), 1);
}

#[test]
fn a_wait_without_sleeper_naps_instead_of_spinning() {
    let host = HostSignal::new(1, None);
    let signal = host.signal();
    let _watchdog = watchdog::arm(watchdog::HANG_DEADLINE, "a 1 s wait to time out");
    let (outcome, cpu) = thread::scope(|s| {
        s.spawn(|| {
            let cpu_before = thread_cpu();
            let outcome = signal.wait(Condition::Eq, 0, Some(Duration::from_secs(1)), None);
            (outcome, thread_cpu().saturating_sub(cpu_before))
        })
        .join()
        .unwrap()
    });
    assert_eq!(outcome, Err(WaitError::Timeout { last: 1 }));
    // About a thousand 1 ms naps: a spinning wait would use close to the whole second.
    assert!(
        cpu < Duration::from_millis(200),
        "a 1 s wait used {cpu:?} of CPU"
    );
    eprintln!("1 s wait without sleeper: {cpu:?} of CPU");
}

struct FailingSleeper;

impl SignalSleeper for FailingSleeper {
    fn sleep(&self, _timeout: Duration) -> Result<(), String> {
        Err("WAIT_EVENTS: EBADF".to_owned())
    }

    fn wake(&self) -> Result<(), String> {
        Err("SET_EVENT: EBADF".to_owned())
    }
}

#[test]
fn a_failing_sleeper_ends_the_wait_with_its_reason() {
    let host = HostSignal::new(2, Some((0x7000_0000_0000, 5)));
    let signal = host.signal();
    assert_eq!(
        signal.wait(Condition::Eq, 0, None, Some(&FailingSleeper)),
        Err(WaitError::Sleep {
            reason: "WAIT_EVENTS: EBADF".to_owned(),
            last: 2
        })
    );
    assert_eq!(
        signal.notify(&FailingSleeper),
        Err("SET_EVENT: EBADF".to_owned())
    );
}
