//! The cost of one host call from a GPU program: a round trip through LLVM libc's RPC
//! protocol (the GPU opens a port and sends a packet, the server notices it, writes, answers,
//! the GPU sees the answer), timed on the GPU with `s_memrealtime` by the `ping` program
//! (tests/kernels/src/programs/ping.c) while calls come back to back, and the RPC server's
//! CPU time while a program computes for a second without calls (`quiet`).
//!
//!     cargo bench --bench program_rpc -- --warm-up-time 1 --measurement-time 3
//!
//! The figures, and the load they were measured under, are in the README; the round trip
//! depends mostly on whether the simulated GPU's thread and the server's get a core at once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct::Device;
use aqueduct::program::{Output, Program, RunOptions};
use aqueduct::sim::{Machine, MachineConfig};
use criterion::{Criterion, criterion_group, criterion_main};

fn program(device: &Device, name: &str) -> Program {
    let gpu = device.gpus().expect("gpus")[0].clone();
    let path = format!(
        "{}/tests/kernels/bin/programs/gfx942/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let code = std::fs::read(&path).expect("a committed program");
    Program::new(device, &gpu, code).expect("a GPU program")
}

fn options(args: &[&str]) -> RunOptions {
    RunOptions {
        args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
        stdout: Output::Capture,
        stderr: Output::Capture,
        timeout: Some(Duration::from_secs(120)),
        ..RunOptions::default()
    }
}

fn rpc(c: &mut Criterion) {
    let machine = Machine::new(
        MachineConfig::mi300x()
            .with_compute_units(8)
            .with_vram(1 << 30),
    )
    .expect("a simulated MI300X");
    let device = Device::open_on(Arc::new(machine)).expect("open");
    let frequency = device.gpus().expect("gpus")[0].timestamp_frequency_hz as f64;

    let quiet = program(&device, "quiet");
    let started = Instant::now();
    let exit = quiet.run(&options(&["quiet", "1000"])).expect("quiet");
    let wall = started.elapsed();
    if let Some(cpu) = exit.server_cpu_time {
        println!(
            "idle RPC server, 4096 ports: {cpu:?} of CPU over {wall:?} ({:.2} % of a core)",
            100.0 * cpu.as_secs_f64() / wall.as_secs_f64()
        );
    }

    let ping = program(&device, "ping");
    c.bench_function("GPU program host call round trip (empty write)", |b| {
        b.iter_custom(|calls| {
            let calls = calls.max(1);
            let exit = ping
                .run(&options(&["ping", &calls.to_string()]))
                .expect("ping");
            let text = String::from_utf8_lossy(&exit.stdout).into_owned();
            let ticks: f64 = text
                .trim()
                .strip_prefix("ticks ")
                .and_then(|t| t.parse().ok())
                .expect("ticks <T>");
            Duration::from_secs_f64(ticks / frequency)
        });
    });
}

criterion_group!(benches, rpc);
criterion_main!(benches);
