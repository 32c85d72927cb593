//! 10,000 open → allocate → queue → dispatch → teardown cycles in one process leave nothing
//! behind: open files, memory mappings, threads and resident memory stay flat. One test in
//! its own binary, so nothing else in the process moves the counts.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct::{Arg, Device, Geometry, MemoryLocation, QueueOptions};
use support::{binding_only, code_object, gpu, machine, pid};

const CYCLES: usize = 10_000;
const WARM_UP: usize = 100;
/// Resident memory may grow this much over the cycles (allocator caches, lazily touched
/// pages of the simulator's tables); a leak of one page per cycle would be 40 MiB.
const RSS_GROWTH_BOUND: u64 = 8 << 20;

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct ProcessFootprint {
    fds: usize,
    maps: usize,
    threads: usize,
    rss: u64,
}

fn footprint() -> ProcessFootprint {
    let count = |dir| std::fs::read_dir(dir).unwrap().count();
    let maps = std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .count();
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    ProcessFootprint {
        fds: count("/proc/self/fd"),
        maps,
        threads: count("/proc/self/task"),
        rss: pages * 4096,
    }
}

/// One cycle; the device ends by `shutdown()` or, with `drop_last`, by its last handle going.
fn cycle(sys: &Arc<dyn aqueduct::kfd::Sys>, code: &[u8], drop_last: bool) {
    let device = Device::open_on(Arc::clone(sys)).unwrap();
    let gpu = gpu(&device);
    let executable = device.load_code_object(&gpu, code).unwrap();
    let kernel = executable.kernel("atomic_counter").unwrap();
    let counter = device.alloc(&gpu, MemoryLocation::HostFine, 8).unwrap();
    let queue = device
        .create_queue(
            &gpu,
            &QueueOptions {
                packets: 64,
                ..QueueOptions::default()
            },
        )
        .unwrap();
    let args = [
        Arg::ptr(counter.gpu_address()),
        Arg::ptr(counter.gpu_address() + 4),
        Arg::u32(1),
    ];
    queue
        .launch(&kernel, &Geometry::d1(1, 1), &args)
        .unwrap()
        .wait(Some(Duration::from_secs(30)))
        .unwrap();
    assert_eq!(counter.to_vec::<u32>().unwrap(), [1, 0]);
    if !drop_last {
        device.shutdown().unwrap();
    }
}

#[test]
fn ten_thousand_reopen_cycles_leak_nothing() {
    let machine = machine();
    let sys: Arc<dyn aqueduct::kfd::Sys> = Arc::new(machine.clone());
    let code = code_object("gfx90a", "atomic_counter.co5");
    for i in 0..WARM_UP {
        cycle(&sys, &code, i % 2 == 0);
    }
    let before = footprint();
    let started = Instant::now();
    for i in 0..CYCLES {
        cycle(&sys, &code, i % 2 == 0);
        if i % 1000 == 999 {
            let now = footprint();
            assert_eq!(
                (now.fds, now.maps, now.threads),
                (before.fds, before.maps, before.threads),
                "after {} cycles",
                i + 1
            );
        }
    }
    let elapsed = started.elapsed();
    let after = footprint();
    eprintln!(
        "{CYCLES} cycles in {elapsed:?} ({:?} each); before {before:?}, after {after:?}",
        elapsed / CYCLES as u32
    );
    assert_eq!(after.fds, before.fds, "open files");
    assert_eq!(after.maps, before.maps, "memory mappings");
    assert_eq!(after.threads, before.threads, "threads");
    assert!(
        after.rss <= before.rss + RSS_GROWTH_BOUND,
        "resident memory grew by {} KiB",
        (after.rss - before.rss) >> 10
    );
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}
