//! The host cost of `Queue::launch` on the simulator: claiming a kernarg segment, checking
//! and writing the arguments, publishing the packet and ringing the doorbell, for an empty
//! kernel (timed in batches of launches that fit the free segments; the waits for them are
//! not timed), a command list's replay (launches only, and launches with copies and fills),
//! and a launch followed by its wait (dispatch → completion, the simulated CP
//! and shader core included).
//!
//!     cargo bench --bench launch -- --warm-up-time 1 --measurement-time 3

use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct::kernarg::{Arg, Geometry};
use aqueduct::sim::{Machine, MachineConfig};
use aqueduct::{Device, MemoryLocation, QueueOptions};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Launches per timed batch: fewer than a queue's kernarg segments, so no launch waits for
/// an earlier one to complete.
const BATCH: u64 = 32;
/// Empty-kernel launches in the replayed command list.
const LIST_LAUNCHES: usize = 16;
/// Replays per timed batch: the list's copies in flight.
const LIST_BATCH: u64 = 4;

fn launch(c: &mut Criterion) {
    let machine = Machine::new(
        MachineConfig::mi210()
            .with_compute_units(8)
            .with_vram(1 << 30),
    )
    .expect("a simulated MI210");
    let device = Device::open_on(Arc::new(machine)).expect("open");
    let gpu = device.gpus().expect("gpus")[0].clone();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/kernels/bin/gfx90a/empty.co5"
    );
    let code = std::fs::read(path).expect("the committed empty kernel");
    let executable = device.load_code_object(&gpu, &code).expect("load");
    let kernel = executable.kernel("empty").expect("kernel");
    let queue = device
        .create_queue(&gpu, &QueueOptions::default())
        .expect("queue");
    let geometry = Geometry::d1(64, 64);
    let args: [Arg<'_>; 0] = [];
    let wait = Some(Duration::from_secs(30));
    c.bench_function("Queue::launch (empty kernel, host cost)", |b| {
        b.iter_custom(|iterations| {
            let mut timed = Duration::ZERO;
            let mut left = iterations;
            while left > 0 {
                let batch = left.min(BATCH);
                let start = Instant::now();
                let mut last = None;
                for _ in 0..batch {
                    last = Some(queue.launch(&kernel, &geometry, &args).expect("launch"));
                }
                timed += start.elapsed();
                queue.finish(wait).expect("finish");
                drop(last);
                left -= batch;
            }
            timed
        });
    });
    let mut prepared = queue.prepare(&kernel, &geometry, &args).expect("prepare");
    c.bench_function("PreparedLaunch::issue (empty kernel, host cost)", |b| {
        b.iter_custom(|iterations| {
            let mut timed = Duration::ZERO;
            let mut left = iterations;
            while left > 0 {
                let batch = left.min(BATCH);
                let start = Instant::now();
                for _ in 0..batch {
                    prepared.issue(&args).expect("issue");
                }
                timed += start.elapsed();
                prepared.finish(wait).expect("finish");
                left -= batch;
            }
            timed
        });
    });
    let mut list = queue.record();
    for _ in 0..LIST_LAUNCHES {
        list.launch(&kernel, &geometry, &args).expect("record");
    }
    let mut list = list.in_flight(LIST_BATCH as u32).finish().expect("list");
    let packets = list.packets() as u64;
    let mut group = c.benchmark_group("CommandList::replay");
    group.throughput(Throughput::Elements(packets));
    group.bench_function(
        "16 empty kernels + completion barrier (host cost per replay)",
        |b| {
            b.iter_custom(|iterations| {
                let mut timed = Duration::ZERO;
                let mut left = iterations;
                while left > 0 {
                    let batch = left.min(LIST_BATCH);
                    let start = Instant::now();
                    for _ in 0..batch {
                        list.replay().expect("replay");
                    }
                    timed += start.elapsed();
                    list.finish(wait).expect("finish");
                    left -= batch;
                }
                timed
            });
        },
    );
    drop(list);
    // The same with the driver's copies and fills recorded between the launches.
    let src = device
        .alloc(&gpu, MemoryLocation::Device, 4096)
        .expect("source");
    let dst = device
        .alloc(&gpu, MemoryLocation::Device, 4096)
        .expect("destination");
    let mut list = queue.record();
    for i in 0..LIST_LAUNCHES / 3 {
        list.launch(&kernel, &geometry, &args).expect("record");
        list.copy(&dst, 256 * i, &src, 256 * i + 1, 255)
            .expect("record a copy");
        list.fill(&dst, 2048 + 256 * i, 256, 0x5a5a_5a5a)
            .expect("record a fill");
    }
    list.launch(&kernel, &geometry, &args).expect("record");
    let mut list = list.in_flight(LIST_BATCH as u32).finish().expect("list");
    group.throughput(Throughput::Elements(list.packets() as u64));
    group.bench_function(
        "6 empty kernels, 5 copies, 5 fills + completion barrier (host cost per replay)",
        |b| {
            b.iter_custom(|iterations| {
                let mut timed = Duration::ZERO;
                let mut left = iterations;
                while left > 0 {
                    let batch = left.min(LIST_BATCH);
                    let start = Instant::now();
                    for _ in 0..batch {
                        list.replay().expect("replay");
                    }
                    timed += start.elapsed();
                    list.finish(wait).expect("finish");
                    left -= batch;
                }
                timed
            });
        },
    );
    group.finish();
    c.bench_function("Queue::launch + Launch::wait (empty kernel)", |b| {
        b.iter(|| {
            queue
                .launch(&kernel, &geometry, &args)
                .expect("launch")
                .wait(wait)
                .expect("wait")
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = launch
}
criterion_main!(benches);
