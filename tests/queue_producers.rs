//! Many producer threads on one queue, and barrier packets across two queues, on the
//! simulated GPU: every packet runs exactly once and dependencies hold.

mod support;

use std::time::Duration;

use aqueduct::{Condition, MemoryOrder, QueueOptions};
use support::{CounterDispatches, atomic_counter, device, gpu};
use test_support::watchdog;

const THREADS: usize = 8;
const PER_THREAD: usize = 10_000;
const WAIT: Option<Duration> = Some(Duration::from_secs(120));

#[test]
fn eight_threads_publish_ten_thousand_packets_each_and_every_one_runs_once() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let (_executable, kernel) = atomic_counter(&device, &gpu);
    let total = THREADS * PER_THREAD;
    let dispatches = CounterDispatches::new(&device, &gpu, kernel, total);
    // A small ring: each slot is reused about 80 times, with producers racing on it.
    let queue = device
        .create_queue(
            &gpu,
            &QueueOptions {
                packets: 1024,
                ..QueueOptions::default()
            },
        )
        .unwrap();
    let done = device.signal(total as i64).unwrap();
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "the producer threads to submit every packet",
    );
    std::thread::scope(|scope| {
        for t in 0..THREADS {
            let (queue, done, dispatches) = (&queue, &done, &dispatches);
            scope.spawn(move || {
                for k in 0..PER_THREAD {
                    let i = t * PER_THREAD + k;
                    queue
                        .dispatch(&dispatches.packet(i, done.handle()))
                        .unwrap();
                }
            });
        }
    });
    queue.wait(&done, Condition::Eq, 0, WAIT).unwrap();
    let counts: Vec<u32> = dispatches.counters.to_vec().unwrap();
    let olds: Vec<u32> = dispatches.olds.to_vec().unwrap();
    let lost: Vec<usize> = (0..total).filter(|&i| counts[i] == 0).collect();
    let twice: Vec<usize> = (0..total).filter(|&i| counts[i] > 1).collect();
    assert!(
        lost.is_empty(),
        "{} packets never ran, first {:?}",
        lost.len(),
        &lost[..lost.len().min(8)]
    );
    assert!(
        twice.is_empty(),
        "{} packets ran more than once, first {:?}",
        twice.len(),
        &twice[..twice.len().min(8)]
    );
    assert!(
        olds.iter().all(|&o| o == 0),
        "each counter was 0 when its one packet ran"
    );
    assert_eq!(queue.read_index().unwrap(), total as u64);
    assert_eq!(queue.write_index().unwrap(), total as u64);
    assert_eq!(done.value().unwrap(), 0);
}

/// Queue A: a barrier on `dependency`, then a dispatch on the shared counter. Queue B,
/// submitted afterwards: a dispatch on the same counter that completes `dependency`. If the
/// barrier holds, B's dispatch sees the counter first (old 0) and A's second (old 1).
fn ordered_across_queues(
    barrier: impl FnOnce(&aqueduct::Queue, &aqueduct::Signal, &aqueduct::Signal),
) {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let (_executable, kernel) = atomic_counter(&device, &gpu);
    let dispatches = CounterDispatches::new(&device, &gpu, kernel, 2);
    // Both dispatches count on counter 0: point segment 1's counter there too.
    let offset = dispatches.stride + dispatches.kernel.args[0].offset as usize;
    dispatches
        .kernargs
        .write(offset, &[dispatches.counters.gpu_address()])
        .unwrap();
    let a = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let b = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let dependency = device.signal(1).unwrap();
    let never = device.signal(1).unwrap();
    let done = device.signal(2).unwrap();
    barrier(&a, &dependency, &never);
    a.dispatch(&dispatches.packet(0, done.handle())).unwrap();
    let b_done = device.signal(1).unwrap();
    b.dispatch(&dispatches.packet(1, b_done.handle())).unwrap();
    b.wait(&b_done, Condition::Eq, 0, WAIT).unwrap();
    dependency.store(0, MemoryOrder::Release).unwrap();
    done.sub(1, MemoryOrder::Release).unwrap();
    a.wait(&done, Condition::Eq, 0, WAIT).unwrap();
    let olds: Vec<u32> = dispatches.olds.to_vec().unwrap();
    assert_eq!(olds, [1, 0], "queue A's dispatch ran after queue B's");
    assert_eq!(dispatches.counters.to_vec::<u32>().unwrap()[0], 2);
}

#[test]
fn barrier_and_orders_work_across_two_queues() {
    ordered_across_queues(|a, dependency, _| {
        a.barrier_and(&[dependency], None).unwrap();
    });
}

#[test]
fn barrier_or_waits_for_any_dependency() {
    ordered_across_queues(|a, dependency, never| {
        a.barrier_or(&[never, dependency], None).unwrap();
    });
}

#[test]
fn barrier_value_waits_for_the_masked_condition() {
    ordered_across_queues(|a, dependency, _| {
        // Holds while (1 & 0xff) < 1 is false; the store of 0 releases it.
        a.barrier_value(dependency, Condition::Lt, 1, 0xff, None)
            .unwrap();
    });
}
