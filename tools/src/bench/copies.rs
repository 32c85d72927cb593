//! The copy paths of `aqueduct bench`: bandwidth of asynchronous copies on the GPU's copy
//! engine (host → device, device → host, device → device) at 1 MiB and 256 MiB, and the
//! latency of a 4-byte copy, each beside a plain `memcpy` of the same size in the same run.

use std::time::Instant;

use aqueduct::{Buffer, Condition, CopyOrder, Device, GpuAgent, MemoryLocation};

use super::report::Figure;
use super::{Error, WAIT, micros, progress};

/// The copy directions measured.
const DIRECTIONS: [(&str, &str, MemoryLocation, MemoryLocation); 3] = [
    (
        "h2d",
        "host → device",
        MemoryLocation::HostCoarse,
        MemoryLocation::Device,
    ),
    (
        "d2h",
        "device → host",
        MemoryLocation::Device,
        MemoryLocation::HostCoarse,
    ),
    (
        "d2d",
        "device → device",
        MemoryLocation::Device,
        MemoryLocation::Device,
    ),
];

/// Figure ids and names, per direction and size (`&'static` as the report wants them).
const IDS: [[(&str, &str); 2]; 3] = [
    [
        ("copy_h2d_1m", "copy engine, host → device, 1 MiB"),
        ("copy_h2d_256m", "copy engine, host → device, 256 MiB"),
    ],
    [
        ("copy_d2h_1m", "copy engine, device → host, 1 MiB"),
        ("copy_d2h_256m", "copy engine, device → host, 256 MiB"),
    ],
    [
        ("copy_d2d_1m", "copy engine, device → device, 1 MiB"),
        ("copy_d2d_256m", "copy engine, device → device, 256 MiB"),
    ],
];
const MEMCPY_IDS: [(&str, &str); 2] = [
    ("memcpy_1m", "memcpy on this machine, 1 MiB"),
    ("memcpy_256m", "memcpy on this machine, 256 MiB"),
];

fn gbps(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e9
}

/// Time one copy of all of `src` into `dst` through `queue`, to its completion signal.
fn timed_copy(
    device: &Device,
    queue: &aqueduct::CopyQueue,
    dst: &Buffer,
    src: &Buffer,
) -> Result<f64, Error> {
    let done = device.signal(1)?;
    let started = Instant::now();
    queue.copy(
        dst,
        0,
        src,
        0,
        src.len(),
        &CopyOrder {
            completion: Some(&done),
            ..CopyOrder::default()
        },
    )?;
    done.wait(Condition::Eq, 0, WAIT)?;
    Ok(started.elapsed().as_secs_f64())
}

/// Add the copy figures to `figures`.
pub(super) fn measure(
    device: &Device,
    gpu: &GpuAgent,
    iterations: usize,
    figures: &mut Vec<Figure>,
) -> Result<(), Error> {
    let queue = device.create_copy_queue(gpu)?;
    for (size_index, bytes) in [1usize << 20, 256 << 20].into_iter().enumerate() {
        let runs = if bytes > (1 << 20) {
            (iterations / 20).max(3)
        } else {
            iterations
        };
        progress(&format!("memcpy, {} MiB", bytes >> 20));
        let src = vec![0x5Au8; bytes];
        let mut dst = vec![0u8; bytes];
        let mut memcpy = Vec::with_capacity(runs);
        // One untimed warm-up each (first touches of fresh pages are not copy bandwidth).
        dst.copy_from_slice(&src);
        for _ in 0..runs {
            let started = Instant::now();
            dst.copy_from_slice(&src);
            std::hint::black_box(&mut dst);
            memcpy.push(gbps(bytes, started.elapsed().as_secs_f64()));
        }
        drop((src, dst));
        let memcpy_median = median(&memcpy);
        let (id, name) = MEMCPY_IDS[size_index];
        figures.push(Figure {
            id,
            name,
            unit: "GB/s",
            goal: "report (the baseline of the copy paths)",
            samples: memcpy,
            note: "<[u8]>::copy_from_slice between two host vectors, after one warm-up".into(),
        });
        for (direction, (_, what, from, to)) in DIRECTIONS.iter().enumerate() {
            progress(&format!("copy engine, {what}, {} MiB", bytes >> 20));
            let src = device.alloc(gpu, *from, bytes)?;
            let dst = device.alloc(gpu, *to, bytes)?;
            let mut samples = Vec::with_capacity(runs);
            timed_copy(device, &queue, &dst, &src)?;
            for _ in 0..runs {
                samples.push(gbps(bytes, timed_copy(device, &queue, &dst, &src)?));
            }
            let (id, name) = IDS[direction][size_index];
            figures.push(Figure {
                id,
                name,
                unit: "GB/s",
                goal: "≥ 0.5 × memcpy (simulator)",
                note: format!(
                    "CopyQueue::copy to its completion signal, after one warm-up; memcpy of the same size: \
                     {memcpy_median:.2} GB/s, ratio {:.2}",
                    median(&samples) / memcpy_median
                ),
                samples,
            });
        }
    }
    progress("copy engine, 4-byte latency");
    let src = device.alloc(gpu, MemoryLocation::HostCoarse, 4)?;
    let dst = device.alloc(gpu, MemoryLocation::Device, 4)?;
    let mut latency = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        latency.push(micros(std::time::Duration::from_secs_f64(timed_copy(
            device, &queue, &dst, &src,
        )?)));
    }
    figures.push(Figure {
        id: "copy_latency_4b",
        name: "copy engine, 4 bytes host → device, submit to completion",
        unit: "µs",
        goal: "report",
        samples: latency,
        note: "CopyQueue::copy, then a wait on its interrupt signal".into(),
    });
    Ok(())
}

fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(0.0)
}
