//! Host cost to publish one kernel-dispatch packet: reserve (compare-and-swap on
//! `write_dispatch_id`), body stores, the header's release store and a doorbell that records
//! its value (a plain store, standing for the MMIO write without `kfd::Doorbell`'s fence).
//!
//! - `single producer`: one thread; every `slots` packets the ring is drained inline (headers
//!   set back to INVALID, read index released), outside the timed region;
//! - `8 producers`: eight threads share one producer while a consumer thread drains the ring
//!   as the CP does; the figure is wall time per packet over all threads.
//!
//! Run: `cargo bench -p aql --bench publish -- --warm-up-time 1 --measurement-time 3`.

#![allow(missing_docs)]

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use aql::{AqlPacket, DispatchBuilder, DispatchLimits, Doorbell, RawPacket};
use common::{HostQueue, INVALID_WORD};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const SLOTS: u32 = 1024;
const PRODUCERS: u64 = 8;

/// Keeps the last value rung, as a doorbell register would.
#[derive(Default)]
struct RecordingDoorbell(AtomicU64);

impl Doorbell for RecordingDoorbell {
    fn ring(&self, write_index: u64) {
        self.0.store(write_index, Ordering::Relaxed);
    }
}

fn dispatch() -> RawPacket {
    DispatchBuilder::new(0x7f00_0000_1000, 0x7f00_0000_2000)
        .grid_1d(1 << 20, 256)
        .completion_signal(0x7f00_0000_3000)
        .build(&DispatchLimits::GFX9)
        .expect("a valid dispatch")
        .to_raw()
}

/// What the CP does to consumed packets: INVALID headers, then the read index.
fn drain(queue: &HostQueue) {
    let read = queue.read_index().load(Ordering::Relaxed);
    let write = queue.write_index().load(Ordering::Acquire);
    for index in read..write {
        queue.half(index, 0).store(INVALID_WORD, Ordering::Relaxed);
    }
    queue.read_index().store(write, Ordering::Release);
}

fn publish(c: &mut Criterion) {
    let packet = dispatch();
    let mut group = c.benchmark_group("publish dispatch packet");
    group.throughput(Throughput::Elements(1));

    // Each queue outlives its producer (declared first, dropped last).
    let queue = HostQueue::new(SLOTS);
    let producer = queue.producer(RecordingDoorbell::default());
    group.bench_function("single producer", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            let mut left = iters;
            while left > 0 {
                let batch = left.min(u64::from(SLOTS));
                let start = Instant::now();
                for _ in 0..batch {
                    let index = producer
                        .submit(black_box(&packet), None, &|| None)
                        .expect("room");
                    black_box(index);
                }
                timed += start.elapsed();
                drain(&queue);
                left -= batch;
            }
            timed
        });
    });

    let shared_queue = HostQueue::new(SLOTS);
    let shared = shared_queue.producer(RecordingDoorbell::default());
    let (queue, producer) = (&shared_queue, &shared);
    group.bench_function("8 producers", |b| {
        b.iter_custom(|iters| {
            let per_thread = iters.div_ceil(PRODUCERS);
            let total = per_thread * PRODUCERS;
            let start = Instant::now();
            thread::scope(|s| {
                s.spawn(|| {
                    queue.consume_with(
                        total as usize,
                        Instant::now() + Duration::from_secs(600),
                        |raw| {
                            black_box(raw);
                        },
                    );
                });
                for _ in 0..PRODUCERS {
                    s.spawn(|| {
                        for _ in 0..per_thread {
                            black_box(producer.submit(black_box(&packet), None, &|| None))
                                .expect("room");
                        }
                    });
                }
            });
            // Per packet of the `iters` asked for.
            start.elapsed().mul_f64(iters as f64 / total as f64)
        });
    });
    group.finish();
}

criterion_group!(benches, publish);
criterion_main!(benches);
