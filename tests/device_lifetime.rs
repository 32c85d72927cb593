//! The process-wide device: one per process while open, torn down completely when the last
//! handle goes or at `shutdown()`, stale handles answering `Closed`, and opened again.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct::{Condition, Device, ErrorKind, MemoryLocation, MemoryOrder, QueueOptions};
use support::{CounterDispatches, atomic_counter, binding_only, device, gpu, machine, pid};
use test_support::watchdog;

const WAIT: Option<Duration> = Some(Duration::from_secs(30));

#[test]
fn every_open_returns_the_same_device_while_one_is_open() {
    let machine = machine();
    let sys: Arc<dyn aqueduct::kfd::Sys> = Arc::new(machine.clone());
    let first = Device::open_on(Arc::clone(&sys)).unwrap();
    let watchdog = watchdog::arm(watchdog::HANG_DEADLINE, "eight threads opening the device");
    let handles: Vec<Device> = std::thread::scope(|scope| {
        let spawned: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| Device::open_on(Arc::clone(&sys)).unwrap()))
            .collect();
        spawned.into_iter().map(|t| t.join().unwrap()).collect()
    });
    drop(watchdog);
    assert!(handles.iter().all(|d| *d == first));
    drop((first, handles));
    // All handles gone: the next open is a new device.
    let second = Device::open_on(Arc::clone(&sys)).unwrap();
    let third = Device::open_on(sys).unwrap();
    assert_eq!(second, third);
    drop((second, third));
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}

#[test]
fn the_last_handle_tears_everything_down_and_the_next_open_starts_from_zero() {
    let machine = machine();
    for round in 0..3 {
        let device = Device::open_on(Arc::new(machine.clone())).unwrap();
        let gpu = gpu(&device);
        let (executable, kernel) = atomic_counter(&device, &gpu);
        let dispatches = CounterDispatches::new(&device, &gpu, kernel, 4);
        let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
        let done = device.signal(4).unwrap();
        for i in 0..4 {
            queue
                .dispatch(&dispatches.packet(i, done.handle()))
                .unwrap();
        }
        queue.wait(&done, Condition::Eq, 0, WAIT).unwrap();
        assert_eq!(
            dispatches.counters.to_vec::<u32>().unwrap(),
            [1; 4],
            "round {round}"
        );
        let live = machine.process_counts(pid());
        assert!(
            live.queues == 1 && live.buffer_objects > 1 && live.events > 0,
            "{live:?}"
        );
        drop((queue, done, dispatches, executable, device));
        assert_eq!(
            machine.process_counts(pid()),
            binding_only(1),
            "round {round}"
        );
    }
}

#[test]
fn shutdown_with_live_handles_destroys_everything_and_every_stale_call_says_closed() {
    let (machine, device) = device();
    let gpu = gpu(&device);
    let (executable, kernel) = atomic_counter(&device, &gpu);
    let dispatches = CounterDispatches::new(&device, &gpu, kernel, 1);
    let buffer = device.alloc(&gpu, MemoryLocation::Device, 4096).unwrap();
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let signal = device.signal(1).unwrap();
    let polling = device.polling_signal(1).unwrap();
    let clone = device.clone();

    device.shutdown().unwrap();
    assert_eq!(
        machine.process_counts(pid()),
        binding_only(1),
        "nothing left in the kernel"
    );
    assert!(clone.is_closed());
    // Shutting down twice is fine.
    clone.shutdown().unwrap();

    let closed = |what: &str, result: aqueduct::Result<()>| match result {
        Err(e) if e.kind() == ErrorKind::Closed => {}
        other => panic!("{what}: expected Closed, got {other:?}"),
    };
    closed("gpus", clone.gpus().map(drop));
    closed("cpus", clone.cpus().map(drop));
    closed(
        "kfd_interface_version",
        clone.kfd_interface_version().map(drop),
    );
    closed("live_objects", clone.live_objects().map(drop));
    closed("kfd", clone.kfd().map(drop));
    closed(
        "alloc",
        clone.alloc(&gpu, MemoryLocation::HostFine, 64).map(drop),
    );
    closed("signal", clone.signal(0).map(drop));
    closed("polling_signal", clone.polling_signal(0).map(drop));
    closed(
        "create_queue",
        clone.create_queue(&gpu, &QueueOptions::default()).map(drop),
    );
    closed(
        "load_code_object",
        clone.load_code_object(&gpu, b"").map(drop),
    );
    closed("buffer.write", buffer.write(0, &[1u8]));
    closed("buffer.read", buffer.read(0, &mut [0u8; 1]));
    closed("buffer.to_vec", buffer.to_vec::<u8>().map(drop));
    closed("buffer.fill", buffer.fill(0));
    closed("buffer.copy_from", buffer.copy_from(&dispatches.olds));
    closed("buffer.allow_access", buffer.allow_access(&[&gpu]));
    // SAFETY: the pointer is not used.
    closed("buffer.host_ptr", unsafe { buffer.host_ptr() }.map(drop));
    for s in [&signal, &polling] {
        closed("signal.value", s.value().map(drop));
        closed("signal.load", s.load(MemoryOrder::Relaxed).map(drop));
        closed("signal.store", s.store(0, MemoryOrder::Release));
        closed("signal.add", s.add(1, MemoryOrder::AcqRel).map(drop));
        closed("signal.sub", s.sub(1, MemoryOrder::AcqRel).map(drop));
        closed("signal.and", s.and(1, MemoryOrder::AcqRel).map(drop));
        closed("signal.or", s.or(1, MemoryOrder::AcqRel).map(drop));
        closed("signal.xor", s.xor(1, MemoryOrder::AcqRel).map(drop));
        closed(
            "signal.exchange",
            s.exchange(1, MemoryOrder::AcqRel).map(drop),
        );
        closed(
            "signal.compare_exchange",
            s.compare_exchange(1, 0, MemoryOrder::AcqRel).map(drop),
        );
        closed("signal.wait", s.wait(Condition::Eq, 0, WAIT).map(drop));
        closed("signal.timestamps", s.timestamps().map(drop));
    }
    closed(
        "queue.submit",
        queue.dispatch(&dispatches.packet(0, 0)).map(drop),
    );
    closed("queue.barrier_and", queue.barrier_and(&[], None).map(drop));
    closed(
        "queue.barrier_or",
        queue.barrier_or(&[&signal], None).map(drop),
    );
    closed(
        "queue.barrier_value",
        queue
            .barrier_value(&signal, Condition::Eq, 0, -1, None)
            .map(drop),
    );
    closed(
        "queue.wait",
        queue.wait(&signal, Condition::Eq, 0, WAIT).map(drop),
    );
    closed("queue.finish", queue.finish(WAIT));
    closed("queue.error", queue.error().map(drop));
    closed("queue.read_index", queue.read_index().map(drop));
    closed("queue.write_index", queue.write_index().map(drop));
    closed("queue.update", queue.update(100, 7));
    closed("queue.set_cu_mask", queue.set_cu_mask(&[1]));
    closed("queue.reserve_scratch", queue.reserve_scratch(1024));
    closed(
        "queue.launch",
        queue
            .launch(&dispatches.kernel, &aqueduct::Geometry::d1(1, 1), &[])
            .map(drop),
    );
    closed(
        "executable.kernel_names",
        executable.kernel_names().map(drop),
    );
    closed("executable.functions", executable.functions().map(drop));
    closed("executable.function", executable.function("f").map(drop));
    closed(
        "executable.kernel",
        executable.kernel("atomic_counter").map(drop),
    );
    closed("executable.variable", executable.variable("x").map(drop));
    closed(
        "executable.write_variable",
        executable.write_variable("x", 0, &[]),
    );
    closed(
        "executable.read_variable",
        executable.read_variable("x", 0, &mut []),
    );

    // Dropping stale handles does nothing more, and a fresh open works.
    drop((buffer, queue, signal, polling, executable, dispatches));
    let fresh = Device::open_on(Arc::new(machine.clone())).unwrap();
    assert_ne!(fresh, clone);
    let queue = fresh.create_queue(&gpu, &QueueOptions::default()).unwrap();
    queue.finish(WAIT).unwrap();
}

#[test]
fn shutdown_ends_waits_in_progress_with_closed() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let signal = device.signal(1).unwrap();
    let polling = device.polling_signal(1).unwrap();
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "three waits without a time-out to end with Closed at shutdown",
    );
    std::thread::scope(|scope| {
        let waiters = [
            scope.spawn(|| signal.wait(Condition::Eq, 0, None)),
            scope.spawn(|| queue.wait(&signal, Condition::Eq, 0, None)),
            scope.spawn(|| polling.wait(Condition::Eq, 0, None)),
        ];
        // Whether or not they are asleep yet, each must end with Closed, not hang.
        device.shutdown().unwrap();
        for waiter in waiters {
            let outcome = waiter.join().unwrap();
            assert_eq!(outcome.unwrap_err().kind(), ErrorKind::Closed);
        }
    });
}

#[test]
fn sixteen_threads_opening_using_and_closing_at_once_leak_nothing() {
    let machine = machine();
    let sys: Arc<dyn aqueduct::kfd::Sys> = Arc::new(machine.clone());
    let watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "sixteen threads opening, using and closing the device",
    );
    std::thread::scope(|scope| {
        for t in 0..16 {
            let sys = Arc::clone(&sys);
            scope.spawn(move || {
                for round in 0..20 {
                    let device = Device::open_on(Arc::clone(&sys)).unwrap();
                    let gpu = gpu(&device);
                    let buffer = device.alloc(&gpu, MemoryLocation::HostFine, 4096).unwrap();
                    buffer.write(0, &[t as u32, round]).unwrap();
                    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
                    queue.finish(WAIT).unwrap();
                    let mut back = [0u32; 2];
                    buffer.read(0, &mut back).unwrap();
                    assert_eq!(back, [t as u32, round]);
                }
            });
        }
    });
    drop(watchdog);
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}

#[test]
fn a_one_second_wait_costs_the_waiting_thread_almost_no_cpu() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let signal = device.signal(1).unwrap();
    let cpu = |f: &dyn Fn()| {
        let usage = || {
            // SAFETY: rusage is plain data; all zeroes is a valid value.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: getrusage writes one struct rusage through the pointer.
            let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &raw mut usage) };
            assert_eq!(rc, 0);
            let t = |tv: libc::timeval| Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000);
            t(usage.ru_utime) + t(usage.ru_stime)
        };
        let before = usage();
        f();
        usage().saturating_sub(before)
    };
    let started = Instant::now();
    let spent = cpu(&|| {
        let e = queue
            .wait(&signal, Condition::Eq, 0, Some(Duration::from_secs(1)))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Timeout);
    });
    let waited = started.elapsed();
    // The wait really lasted its second (a wait that gave up at once would cost no CPU
    // either); the upper bound only catches a wait that ignores its time-out.
    assert!(
        waited >= Duration::from_secs(1) && waited < Duration::from_secs(10),
        "a 1 s wait took {waited:?}"
    );
    assert!(
        spent < Duration::from_millis(20),
        "a 1 s wait used {spent:?} of CPU"
    );
}
