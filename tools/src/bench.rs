//! `aqueduct bench`: whole paths on the current device (the GPU, or the simulator), each run
//! many times, reported as median and percentiles.
//!
//! The paths are the library's public calls, timed from the host; nothing here is logic a
//! library user would need.

use std::time::{Duration, Instant};

use aqueduct::{
    Arg, Condition, Device, Geometry, LoadOptions, MemoryLocation, MemoryOrder, QueueOptions,
};

type Error = Box<dyn std::error::Error>;

/// The empty kernel, per target, so that the tool needs no file to measure dispatches.
const EMPTY: [(&str, &[u8]); 2] = [
    (
        "gfx90a",
        include_bytes!("../../tests/kernels/bin/gfx90a/empty.co5"),
    ),
    (
        "gfx942",
        include_bytes!("../../tests/kernels/bin/gfx942/empty.co5"),
    ),
];
/// A small real kernel for the load path.
const VECTOR_ADD: [(&str, &[u8]); 2] = [
    (
        "gfx90a",
        include_bytes!("../../tests/kernels/bin/gfx90a/vector_add.co5"),
    ),
    (
        "gfx942",
        include_bytes!("../../tests/kernels/bin/gfx942/vector_add.co5"),
    ),
];
const WAIT: Option<Duration> = Some(Duration::from_secs(30));

/// One measured path.
struct Figure {
    name: &'static str,
    unit: &'static str,
    samples: Vec<f64>,
    note: String,
}

impl Figure {
    fn percentile(&self, p: f64) -> f64 {
        let mut sorted = self.samples.clone();
        sorted.sort_by(f64::total_cmp);
        let index = ((sorted.len() - 1) as f64 * p).round() as usize;
        sorted[index]
    }
}

pub fn run(iterations: usize, json: bool) -> Result<(), Error> {
    let iterations = iterations.max(10);
    let device = Device::open()?;
    let gpu = device.gpus()?[0].clone();
    let processor = gpu.target_id.version.processor_name();
    let pick = |table: &[(&str, &'static [u8])]| {
        table
            .iter()
            .find(|(target, _)| *target == processor)
            .map(|(_, bytes)| *bytes)
            .ok_or_else(|| {
                format!("no built-in benchmark kernels for {processor} (gfx90a, gfx942)")
            })
    };
    let (empty_code, vector_add_code) = (pick(&EMPTY)?, pick(&VECTOR_ADD)?);
    let mut figures = Vec::new();

    progress("dispatch → completion, empty kernel");
    let executable = device.load_code_object(&gpu, empty_code)?;
    let empty = executable.kernel("empty")?;
    let queue = device.create_queue(&gpu, &QueueOptions::default())?;
    let one = Geometry::d1(1, 1);
    let mut spin = Vec::with_capacity(iterations);
    let mut sleep = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let started = Instant::now();
        let launch = queue.launch(&empty, &one, &[])?;
        while !launch.is_complete()? {
            std::hint::spin_loop();
        }
        spin.push(micros(started.elapsed()));
        let signal = device.signal(1)?;
        let started = Instant::now();
        queue.launch_with(
            &empty,
            &one,
            &[],
            &aqueduct::LaunchOptions {
                completion: Some(&signal),
                ..Default::default()
            },
        )?;
        queue.wait(&signal, Condition::Eq, 0, WAIT)?;
        sleep.push(micros(started.elapsed()));
    }
    figures.push(Figure {
        name: "dispatch → completion, empty kernel, host spinning",
        unit: "µs",
        samples: spin,
        note: "Launch::is_complete in a loop".into(),
    });
    figures.push(Figure {
        name: "dispatch → completion, empty kernel, waiting on a signal",
        unit: "µs",
        samples: sleep,
        note: format!(
            "Queue::wait: spins {:?}, then sleeps on the signal's event",
            aqueduct::aql::signal::SPIN_BUDGET
        ),
    });

    progress("packets per second, batched");
    let batch = 4096usize;
    let marker = aqueduct::aql::builder::barrier_and(&[], 0)?;
    let big = device.create_queue(
        &gpu,
        &QueueOptions {
            packets: 8192,
            ..QueueOptions::default()
        },
    )?;
    let mut rates = Vec::new();
    for _ in 0..(iterations / 10).max(3) {
        let started = Instant::now();
        for _ in 0..batch {
            big.submit(&marker)?;
        }
        big.finish(WAIT)?;
        rates.push(batch as f64 / started.elapsed().as_secs_f64() / 1e6);
    }
    figures.push(Figure {
        name: "packets through one queue, batches of 4096 barrier-AND packets",
        unit: "M/s",
        samples: rates,
        note: "submit all, then Queue::finish".into(),
    });

    progress("load an executable");
    let mut loads = Vec::new();
    for _ in 0..iterations {
        let started = Instant::now();
        let loaded = device.load_with(&gpu, vector_add_code, &LoadOptions::new().private())?;
        let elapsed = started.elapsed();
        drop(loaded);
        loads.push(vector_add_code.len() as f64 / elapsed.as_secs_f64() / 1e6);
    }
    figures.push(Figure {
        name: "load vector_add (parse, validate, upload, relocate, map)",
        unit: "MB/s",
        samples: loads,
        note: format!(
            "{} bytes of code object, a private load each time",
            vector_add_code.len()
        ),
    });

    progress("kernel time, vector_add of 65536 elements");
    let vector_add = device
        .load_code_object(&gpu, vector_add_code)?
        .kernel("vector_add")?;
    let n = 65536u32;
    let buffers: Vec<_> = (0..3)
        .map(|_| device.alloc(&gpu, MemoryLocation::Device, 4 * n as usize))
        .collect::<Result<_, _>>()?;
    let profiled = device.create_queue(
        &gpu,
        &QueueOptions {
            profiling: true,
            ..QueueOptions::default()
        },
    )?;
    let args: Vec<Arg<'_>> = buffers
        .iter()
        .map(|b| Arg::ptr(b.gpu_address()))
        .chain([Arg::u32(n)])
        .collect();
    let mut kernel_times = Vec::new();
    for _ in 0..(iterations / 10).max(3) {
        let done = profiled
            .launch(&vector_add, &Geometry::d1(n, 256), &args)?
            .wait(WAIT)?;
        if let Some(time) = done.gpu_time {
            kernel_times.push(micros(time));
        }
    }
    if !kernel_times.is_empty() {
        figures.push(Figure {
            name: "vector_add of 65536 integers, GPU time",
            unit: "µs",
            samples: kernel_times,
            note: "profiling timestamps".into(),
        });
    }
    drop((queue, big, profiled, executable, buffers));

    progress("device open → close");
    drop(device);
    let mut cycles = Vec::new();
    for _ in 0..iterations {
        let started = Instant::now();
        let device = Device::open()?;
        device.shutdown()?;
        cycles.push(micros(started.elapsed()));
    }
    figures.push(Figure {
        name: "device open → close (full teardown)",
        unit: "µs",
        samples: cycles,
        note: "Device::open then shutdown".into(),
    });

    let device = Device::open()?;
    let signal = device.signal(0)?;
    progress("host signal store + load");
    let mut stores = Vec::new();
    for i in 0..iterations {
        let started = Instant::now();
        signal.store(i as i64, MemoryOrder::Release)?;
        let _ = signal.load(MemoryOrder::Acquire)?;
        stores.push(micros(started.elapsed()));
    }
    figures.push(Figure {
        name: "interrupt signal store (with SET_EVENT) + load",
        unit: "µs",
        samples: stores,
        note: "Signal::store wakes sleepers with one ioctl".into(),
    });
    let description = device.description().to_owned();
    let simulated = device.is_simulated();
    drop((signal, device));
    report(
        &figures,
        &description,
        simulated,
        &gpu.target_id.to_string(),
        iterations,
        json,
    );
    Ok(())
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn progress(what: &str) {
    eprintln!("aqueduct bench: {what}…");
}

fn report(
    figures: &[Figure],
    device: &str,
    simulated: bool,
    target: &str,
    iterations: usize,
    json: bool,
) {
    if json {
        let rows: Vec<serde_json::Value> = figures
            .iter()
            .map(|f| {
                serde_json::json!({
                    "name": f.name,
                    "unit": f.unit,
                    "samples": f.samples.len(),
                    "median": f.percentile(0.5),
                    "p10": f.percentile(0.1),
                    "p90": f.percentile(0.9),
                    "min": f.percentile(0.0),
                    "max": f.percentile(1.0),
                    "note": f.note,
                })
            })
            .collect();
        let report = serde_json::json!({
            "schema": 1,
            "device": device,
            "simulated": simulated,
            "target": target,
            "iterations": iterations,
            "figures": rows,
        });
        println!("{report}");
        return;
    }
    println!("{device} ({target}), {iterations} iterations");
    println!(
        "{:<64} {:>12} {:>12} {:>12}  unit",
        "path", "median", "p10", "p90"
    );
    for f in figures {
        println!(
            "{:<64} {:>12.2} {:>12.2} {:>12.2}  {}",
            f.name,
            f.percentile(0.5),
            f.percentile(0.1),
            f.percentile(0.9),
            f.unit
        );
    }
}
