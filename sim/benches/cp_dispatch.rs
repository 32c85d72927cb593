//! The command processor's packet path in isolation (no kernel execution): how long one packet
//! takes from doorbell to completion signal, and how many packets a queue completes per second
//! when they are submitted in batches. The shader core is a no-op, so these numbers are the
//! simulator's own overhead on top of whatever the kernels cost.

#[path = "../tests/cp_support/mod.rs"]
mod cp_support;

use std::hint::black_box;
use std::time::Duration;

use aql::PacketType;
use cp_support::{Bench, barrier, dispatch, raw};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// Spin (with yields) until the signal reaches `value`: the host side of a busy-wait.
fn spin_until(bench: &Bench, signal: cp_support::TestSignal, value: i64) {
    while bench.value(signal) != value {
        std::thread::yield_now();
    }
}

fn round_trip(c: &mut Criterion) {
    let bench = Bench::new();
    let queue = bench.queue(256);
    let signal = bench.signal(0);
    let mut group = c.benchmark_group("cp_round_trip");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("dispatch", |b| {
        let packet = raw(&dispatch(bench.kernel(0), signal.handle));
        b.iter(|| {
            bench.set_value(signal, 1);
            queue.submit(black_box(&packet));
            spin_until(&bench, signal, 0);
        });
    });
    group.bench_function("barrier_and", |b| {
        let packet = raw(&barrier(PacketType::BARRIER_AND, [0; 5], signal.handle));
        b.iter(|| {
            bench.set_value(signal, 1);
            queue.submit(black_box(&packet));
            spin_until(&bench, signal, 0);
        });
    });
    group.finish();
}

fn batches(c: &mut Criterion) {
    const BATCH: u64 = 64;
    let bench = Bench::new();
    let queue = bench.queue(256);
    let signal = bench.signal(0);
    let packet = raw(&dispatch(bench.kernel(0), signal.handle));
    let mut group = c.benchmark_group("cp_batch");
    group.throughput(Throughput::Elements(BATCH));
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("dispatch_x64", |b| {
        b.iter(|| {
            bench.set_value(signal, BATCH as i64);
            for _ in 0..BATCH {
                queue.submit(black_box(&packet));
            }
            spin_until(&bench, signal, 0);
        });
    });
    group.finish();
}

criterion_group!(benches, round_trip, batches);
criterion_main!(benches);
