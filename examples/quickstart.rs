//! Run a kernel: open the device (a GPU through /dev/kfd, or the built-in simulator where there
//! is none), load a committed `vector_add` code object for its target, add two vectors of a
//! million integers, check every element, and print the kernel's GPU time and the wall time.
//!
//!     cargo run --release --example quickstart [ELEMENTS]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use aqueduct::{Arg, Device, Geometry, MemoryLocation, QueueOptions};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("quickstart: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let n: u32 = match std::env::args().nth(1) {
        Some(text) => text
            .parse()
            .map_err(|_| format!("{text:?} is not a number of elements"))?,
        None => 1 << 20,
    };
    let started = Instant::now();
    let device = Device::open()?;
    let gpu = &device.gpus()?[0];
    println!(
        "device: {} — GPU {:#x}, {}, {} CUs",
        device.description(),
        gpu.gpu_id,
        gpu.target_id,
        gpu.compute_units
    );

    // The committed test kernels are built for the targets aqueduct is tested on.
    let processor = gpu.target_id.processor.name;
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests/kernels/bin",
        processor,
        "vector_add.co5",
    ]
    .iter()
    .collect();
    let code = std::fs::read(&path).map_err(|e| {
        format!(
            "{}: {e} (no committed vector_add for {processor})",
            path.display()
        )
    })?;
    let executable = device.load_code_object(gpu, &code)?;
    let kernel = executable.kernel("vector_add")?;

    let a: Vec<i32> = (0..n as i32).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| 3 * i + 1).collect();
    let bytes = 4 * n as usize;
    let (da, db, dc) = (
        device.alloc(gpu, MemoryLocation::Device, bytes)?,
        device.alloc(gpu, MemoryLocation::Device, bytes)?,
        device.alloc(gpu, MemoryLocation::Device, bytes)?,
    );
    da.write(0, &a)?;
    db.write(0, &b)?;

    let queue = device.create_queue(
        gpu,
        &QueueOptions {
            profiling: true,
            ..QueueOptions::default()
        },
    )?;
    let launched = Instant::now();
    let completion = queue
        .launch(
            &kernel,
            &Geometry::d1(n, 256),
            &[
                Arg::buffer(&da),
                Arg::buffer(&db),
                Arg::buffer(&dc),
                Arg::u32(n),
            ],
        )?
        .wait(None)?;
    let round_trip = launched.elapsed();

    let c: Vec<i32> = dc.to_vec()?;
    if let Some(i) = (0..n as usize).find(|&i| c[i] != a[i].wrapping_add(b[i])) {
        return Err(format!("c[{i}] = {}, expected {}", c[i], a[i].wrapping_add(b[i])).into());
    }
    println!("vector_add of {n} elements: every element checked");
    match completion.gpu_time {
        Some(time) => println!("kernel time (GPU timestamps): {time:?}"),
        None => println!("kernel time: no timestamps"),
    }
    println!("launch → completion seen by the host: {round_trip:?}");
    println!("wall time, open to checked result: {:?}", started.elapsed());
    device.shutdown()?;
    Ok(())
}
