//! Queue lifetime on the command processor: DESTROY_QUEUE (even mid-kernel or mid-wait),
//! UPDATE_QUEUE suspension and resumption, and idle processors that use no CPU.

mod cp_support;

use std::time::Duration;

use aql::PacketType;
use cp_support::{Behaviour, Bench, Gate, barrier, dispatch, raw, wait_for};
use test_support::watchdog;

#[test]
fn destroying_a_queue_aborts_a_hung_kernel_and_then_leaves_memory_alone() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    bench.shader.set(bench.kernel(9), Behaviour::Hang);
    let signal = bench.interrupt_signal(1);
    let next = bench.signal(1);
    queue.submit(&raw(&dispatch(bench.kernel(9), signal.handle)));
    queue.submit(&raw(&dispatch(bench.kernel(0), next.handle)));
    wait_for("the kernel to start", || started(&bench));

    queue.running.stop();

    let launches = bench.shader.launches();
    assert_eq!(launches.len(), 1);
    assert!(launches[0].aborted, "the shader core saw the abort flag");
    // Nothing after the abort: no completion, no read index advance, no event, no error.
    // (stop() has joined the processor thread, so nothing can come later: these are exact.)
    assert_eq!(bench.value(signal), 1);
    assert_eq!(bench.value(next), 1);
    assert_eq!(queue.read_index(), 0);
    assert_eq!(queue.inactive_value(), 0);
    assert!(bench.sink.log().is_empty());
    // A second stop, a doorbell after stop and the final drop are all harmless.
    queue.running.stop();
    queue.ring_doorbell(1);
}

/// Whether the fake core is inside a dispatch (a Hang kernel records its launch only when it
/// ends, so look at its activity instead).
fn started(bench: &Bench) -> bool {
    bench.shader.max_active() == 1
}

#[test]
fn destroying_a_queue_ends_a_barrier_wait() {
    // A stop that did not end the wait would hang: the watchdog makes that a failure.
    watchdog::within(watchdog::DEFAULT_DEADLINE, || {
        let bench = Bench::new();
        let queue = bench.queue(64);
        let dep = bench.signal(1);
        let done = bench.signal(1);
        queue.submit(&raw(&barrier(
            PacketType::BARRIER_AND,
            [dep.handle, 0, 0, 0, 0],
            done.handle,
        )));
        // Inside the barrier wait, having seen the dependency unsatisfied.
        queue.settle();
        queue.running.stop();
        // stop() has joined the processor: a dependency satisfied now completes nothing.
        bench.set_value(dep, 0);
        assert_eq!(bench.value(done), 1);
    });
}

#[test]
fn idle_and_never_used_queues_stop_and_drop_cleanly() {
    watchdog::within(watchdog::DEFAULT_DEADLINE, idle_and_never_used_queues);
}

/// Stopping or dropping a queue that is idle or was never used returns (or the test hangs).
fn idle_and_never_used_queues() {
    let bench = Bench::new();
    let idle = bench.queue(64);
    idle.running.stop();
    let dropped = bench.queue(64);
    drop(dropped);
    let used = bench.queue(64);
    let signal = bench.signal(1);
    used.submit(&raw(&dispatch(bench.kernel(0), signal.handle)));
    bench.wait_value(signal, 0);
    drop(used);
}

#[test]
fn percentage_zero_suspends_and_a_later_update_resumes() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let ring_bytes = queue.slots * 64;
    queue.running.update(queue.ring, ring_bytes, 0, 7);
    let signal = bench.signal(1);
    queue.submit(&raw(&dispatch(bench.kernel(0), signal.handle)));
    queue.settle();
    assert_eq!(
        bench.value(signal),
        1,
        "a suspended queue processes nothing"
    );
    assert_eq!(queue.read_index(), 0);

    queue.running.update(queue.ring, ring_bytes, 100, 7);
    bench.wait_value(signal, 0);
}

#[test]
fn suspension_waits_for_a_running_kernel_and_holds_the_next_packet() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let gate = Gate::new();
    bench
        .shader
        .set(bench.kernel(1), Behaviour::Gate(gate.clone()));
    let first = bench.signal(1);
    let second = bench.signal(1);
    queue.submit(&raw(&dispatch(bench.kernel(1), first.handle)));
    queue.submit(&raw(&dispatch(bench.kernel(2), second.handle)));
    wait_for("the first kernel", || gate.arrived() == 1);

    queue.running.update(queue.ring, queue.slots * 64, 0, 7);
    gate.open();
    bench.wait_value(first, 0);
    queue.settle();
    assert_eq!(bench.value(second), 1, "suspended at the packet boundary");

    queue.running.update(queue.ring, queue.slots * 64, 100, 7);
    bench.wait_value(second, 0);
}

#[test]
fn an_update_moves_the_ring() {
    let bench = Bench::new();
    let queue = bench.queue(16);
    let signal = bench.signal(1);
    queue.submit(&raw(&dispatch(bench.kernel(0), signal.handle)));
    bench.wait_value(signal, 0);

    // A new ring of 32 slots; indices carry on (packet 1 goes to its slot 1).
    let ring = bench.vm.alloc(32 * 64);
    for i in 0..32 {
        bench.vm.store_u32(ring + 64 * i, 1);
    }
    queue.running.update(ring, 32 * 64, 100, 7);
    let signal = bench.signal(1);
    let index = queue.reserve();
    let packet = raw(&dispatch(bench.kernel(4), signal.handle));
    bench.vm.write_body(ring + 64 * index, &packet);
    bench
        .vm
        .store_u32_release(ring + 64 * index, packet.0[0] as u32);
    queue.ring_doorbell(index);
    bench.wait_value(signal, 0);
    assert_eq!(bench.shader.launches()[1].request.packet_va, ring + 64);
}

/// CPU time the thread of this process named `name` has used, from its schedstat
/// (nanoseconds). Tasks that vanish mid-scan (other tests' threads exiting) are passed over; a
/// missing `name` is a failure.
fn thread_cpu_ns(name: &str) -> u64 {
    let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task");
    for task in tasks.flatten() {
        let task = task.path();
        let Ok(comm) = std::fs::read_to_string(task.join("comm")) else {
            continue;
        };
        if comm.trim_end() == name {
            let schedstat = std::fs::read_to_string(task.join("schedstat"))
                .unwrap_or_else(|e| panic!("{}: {e}", task.join("schedstat").display()));
            return schedstat
                .split_whitespace()
                .next()
                .and_then(|ns| ns.parse().ok())
                .unwrap_or_else(|| panic!("unreadable schedstat {schedstat:?}"));
        }
    }
    panic!("no thread named {name} in /proc/self/task")
}

#[test]
fn an_idle_processor_uses_no_cpu() {
    // Scheduler statistics are a kernel option (CONFIG_SCHED_INFO): skip only where the
    // kernel has none at all.
    if !std::path::Path::new("/proc/self/schedstat").exists() {
        return test_support::hardware::skip(
            "an_idle_processor_uses_no_cpu",
            "no /proc/self/schedstat here",
        );
    }
    let bench = Bench::new();
    let queue = bench.queue(64);
    let signal = bench.signal(1);
    queue.submit(&raw(&dispatch(bench.kernel(0), signal.handle)));
    bench.wait_value(signal, 0);
    queue.settle();
    let name = queue.thread_name.as_str();
    let before = thread_cpu_ns(name);
    std::thread::sleep(Duration::from_millis(500));
    let after = thread_cpu_ns(name);
    // A parked thread accrues nothing; allow a little for the wake-up that ended the last
    // packet's bookkeeping. Polling, even at 1 kHz, would show several milliseconds.
    assert!(
        after - before < 2_000_000,
        "idle processor used {} µs of CPU in 500 ms",
        (after - before) / 1000
    );
}
