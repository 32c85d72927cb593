//! Host-side costs of the safe API on the simulator: a full device open → close cycle, and
//! publishing a packet through `Queue::submit` (the safe API's overhead over `aql`'s
//! producer, which `cargo bench -p aql` measures alone).
//!
//!     cargo bench --bench device

use std::sync::Arc;
use std::time::Duration;

use aqueduct::sim::{Machine, MachineConfig};
use aqueduct::{Device, QueueOptions};
use criterion::{Criterion, criterion_group, criterion_main};

fn machine() -> Arc<dyn aqueduct::kfd::Sys> {
    Arc::new(
        Machine::new(
            MachineConfig::mi210()
                .with_compute_units(8)
                .with_vram(1 << 30),
        )
        .expect("a simulated MI210"),
    )
}

fn open_close(c: &mut Criterion) {
    let sys = machine();
    // The first open makes the process binding; every later one reuses it, as in a program.
    drop(Device::open_on(Arc::clone(&sys)).expect("open"));
    c.bench_function("device open → close (full teardown)", |b| {
        b.iter(|| {
            let device = Device::open_on(Arc::clone(&sys)).expect("open");
            device.shutdown().expect("shutdown");
        });
    });
    c.bench_function("device open → queue → close", |b| {
        b.iter(|| {
            let device = Device::open_on(Arc::clone(&sys)).expect("open");
            let gpu = device.gpus().expect("gpus")[0].clone();
            let queue = device
                .create_queue(
                    &gpu,
                    &QueueOptions {
                        packets: 64,
                        ..QueueOptions::default()
                    },
                )
                .expect("queue");
            drop(queue);
            device.shutdown().expect("shutdown");
        });
    });
}

fn submit(c: &mut Criterion) {
    let sys = machine();
    let device = Device::open_on(sys).expect("open");
    let gpu = device.gpus().expect("gpus")[0].clone();
    let queue = device
        .create_queue(
            &gpu,
            &QueueOptions {
                packets: 4096,
                ..QueueOptions::default()
            },
        )
        .expect("queue");
    let marker = aqueduct::aql::builder::barrier_and(&[], 0).expect("a barrier packet");
    c.bench_function("Queue::submit (barrier-AND, CP draining)", |b| {
        b.iter(|| queue.submit(&marker).expect("submit"));
    });
    queue.finish(Some(Duration::from_secs(30))).expect("finish");
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(5));
    targets = open_close, submit
}
criterion_main!(benches);
