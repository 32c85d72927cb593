//! Queue lifetime on the command processor: DESTROY_QUEUE (even mid-kernel or mid-wait),
//! UPDATE_QUEUE suspension and resumption, and idle processors that use no CPU.

mod cp_support;

use std::time::Duration;

use aql::PacketType;
use cp_support::{Behaviour, Bench, Gate, SETTLE, barrier, dispatch, raw, wait_for};

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
    std::thread::sleep(SETTLE);
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
    let bench = Bench::new();
    let queue = bench.queue(64);
    let dep = bench.signal(1);
    let done = bench.signal(1);
    queue.submit(&raw(&barrier(
        PacketType::BARRIER_AND,
        [dep.handle, 0, 0, 0, 0],
        done.handle,
    )));
    std::thread::sleep(SETTLE);
    queue.running.stop();
    bench.set_value(dep, 0);
    std::thread::sleep(SETTLE);
    assert_eq!(bench.value(done), 1);
}

#[test]
fn idle_and_never_used_queues_stop_and_drop_cleanly() {
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
    std::thread::sleep(SETTLE);
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
    std::thread::sleep(SETTLE);
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

/// CPU time a thread of this process has used, from its schedstat (nanoseconds).
fn thread_cpu_ns(name: &str) -> Option<u64> {
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let task = task.ok()?.path();
        let comm = std::fs::read_to_string(task.join("comm")).ok()?;
        if comm.trim_end() == name {
            let schedstat = std::fs::read_to_string(task.join("schedstat")).ok()?;
            return schedstat.split_whitespace().next()?.parse().ok();
        }
    }
    None
}

#[test]
fn an_idle_processor_uses_no_cpu() {
    use std::io::Write;
    let bench = Bench::new();
    let queue = bench.queue(64);
    let signal = bench.signal(1);
    queue.submit(&raw(&dispatch(bench.kernel(0), signal.handle)));
    bench.wait_value(signal, 0);
    let name = queue.thread_name.as_str();
    let Some(before) = thread_cpu_ns(name) else {
        let _ = std::io::stderr().write_all(b"skipped: no /proc/self/task/*/schedstat here\n");
        return;
    };
    std::thread::sleep(Duration::from_millis(500));
    let after = thread_cpu_ns(name).expect("the processor thread still exists");
    // A parked thread accrues nothing; allow a little for the wake-up that ended the last
    // packet's bookkeeping. Polling, even at 1 kHz, would show several milliseconds.
    assert!(
        after - before < 2_000_000,
        "idle processor used {} µs of CPU in 500 ms",
        (after - before) / 1000
    );
}
