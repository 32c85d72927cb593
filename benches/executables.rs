//! Loading an executable through the safe API on the simulator: select, parse, validate,
//! allocate, place, relocate, map to the GPU, in bytes of code object per second (the loader
//! alone is `cargo bench -p amdgpu-loader --bench load`); and the cost of a load that finds the
//! same code object already loaded (content hash and table look-up).
//!
//!     cargo bench --bench executables -- --warm-up-time 1 --measurement-time 3

use std::sync::Arc;
use std::time::Duration;

use aqueduct::loader::synth::many_kernels;
use aqueduct::sim::{Machine, MachineConfig};
use aqueduct::{Device, LoadOptions};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn device() -> Device {
    let machine = Machine::new(
        MachineConfig::mi210()
            .with_compute_units(8)
            .with_vram(1 << 30),
    )
    .expect("a simulated MI210");
    Device::open_on(Arc::new(machine)).expect("open")
}

fn committed(file: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/kernels/bin/gfx90a/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn load(c: &mut Criterion) {
    let device = device();
    let gpu = device.gpus().expect("gpus")[0].clone();
    let private = LoadOptions::new().private();
    let inputs = [
        ("vector_add.co5", committed("vector_add.co5")),
        ("device_call.co5", committed("device_call.co5")),
        (
            "synthetic 300 kernels x 8 KiB",
            many_kernels(300, 8192, 1024, 0x53f),
        ),
    ];
    let mut group = c.benchmark_group("Device::load_with (private: a new load each time)");
    for (name, bytes) in &inputs {
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(*name, |b| {
            b.iter(|| device.load_with(&gpu, bytes, &private).expect("load"));
        });
    }
    group.finish();
    let mut group = c.benchmark_group("Device::load_code_object (already loaded: shared)");
    for (name, bytes) in &inputs {
        let _held = device.load_code_object(&gpu, bytes).expect("load");
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function(*name, |b| {
            b.iter(|| device.load_code_object(&gpu, bytes).expect("load"));
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = load
}
criterion_main!(benches);
