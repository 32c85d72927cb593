//! `aqueduct bench`: whole paths on the current device (the GPU, or the simulator), each run
//! many times, reported as median and percentiles.
//!
//! The paths are the library's public calls, timed from the host; nothing here is logic a
//! library user would need.

mod chain;
mod compare;
mod copies;
mod cp_thread;
mod doorbell;
mod figures;
mod floor;
mod hip;
mod host;
mod loaded;
mod report;
mod rocr;
mod shader_gfx11;
mod watch;

use std::time::{Duration, Instant};

use aqueduct::{
    Arg, Condition, Device, Geometry, LoadOptions, MemoryLocation, MemoryOrder, QueueOptions,
};

pub use compare::{Against, ROCR_LIBRARY, Runtime, child};
pub use report::Format;
use report::{Figure, HipStatus, Run};

type Error = Box<dyn std::error::Error>;

/// The empty kernel, per target, so that the tool needs no file to measure dispatches.
const EMPTY: [(&str, &[u8]); 3] = [
    (
        "gfx90a",
        include_bytes!("../../tests/kernels/bin/gfx90a/empty.co5"),
    ),
    (
        "gfx942",
        include_bytes!("../../tests/kernels/bin/gfx942/empty.co5"),
    ),
    (
        "gfx1100",
        include_bytes!("../../tests/kernels/bin/gfx1100/empty.co5"),
    ),
];
/// A small real kernel for the load path.
const VECTOR_ADD: [(&str, &[u8]); 3] = [
    (
        "gfx90a",
        include_bytes!("../../tests/kernels/bin/gfx90a/vector_add.co5"),
    ),
    (
        "gfx942",
        include_bytes!("../../tests/kernels/bin/gfx942/vector_add.co5"),
    ),
    (
        "gfx1100",
        include_bytes!("../../tests/kernels/bin/gfx1100/vector_add.co5"),
    ),
];
/// The VALU-heavy loop (`tests/kernels/src/valu_loop.cl`) for the shader-throughput path.
const VALU_LOOP: [(&str, &[u8]); 3] = [
    (
        "gfx90a",
        include_bytes!("../../tests/kernels/bin/gfx90a/valu_loop.co5"),
    ),
    (
        "gfx942",
        include_bytes!("../../tests/kernels/bin/gfx942/valu_loop.co5"),
    ),
    (
        "gfx1100",
        include_bytes!("../../tests/kernels/bin/gfx1100/valu_loop.co5"),
    ),
];
/// VALU instructions per iteration of `valu_loop`'s loop in the `.co5` builds above
/// (`tools/tests/bench.rs` counts them in the committed disassembly).
pub const VALU_PER_ITERATION: u64 = 9;
/// Loop iterations per lane of one `valu_loop` launch.
const VALU_ITERATIONS: u32 = 20_000;
/// Lanes of one `valu_loop` launch: one workgroup, so one shader worker runs it (one wave64
/// on GFX9; two wave32 when the device is a gfx1100).
const VALU_LANES: u32 = 64;
const WAIT: Option<Duration> = Some(Duration::from_secs(30));

/// The built-in empty kernel for `processor` (`gfx90a`).
fn empty_kernel(processor: &str) -> Result<&'static [u8], String> {
    EMPTY
        .iter()
        .find(|(target, _)| *target == processor)
        .map(|(_, bytes)| *bytes)
        .ok_or_else(|| format!("no built-in empty kernel for {processor} (gfx90a, gfx942)"))
}

/// Which paths a run measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// aqueduct's own paths, then (with a ROCr library) the comparison.
    Every,
    /// Only the comparison with ROCr: the paths both runtimes share, in child processes. The
    /// soaks under load (`scripts/hang-soak.sh`, `sim/preload/soak.sh`) run this, the part
    /// where ROCr 5.2 can stall, without aqueduct's own paths (its 256 MiB copies alone take
    /// longer than a soak run's limit beside six CPU hogs on 2 cores).
    Comparison,
}

/// Measure every path of `scope` `iterations` times (at least 10) and print the figures;
/// with `against`, also aqueduct's and ROCr's figures for the same paths, side by side, and an
/// HSA library's on ROCr's paths if it names one (see `compare`); with `hip`, HIP's figures
/// for the launch paths beside aqueduct's (see `hip`).
pub fn run(
    iterations: usize,
    format: Format,
    against: Option<Against<'_>>,
    scope: Scope,
    hip: bool,
) -> Result<(), Error> {
    let iterations = iterations.max(10);
    let mut figures = match scope {
        Scope::Every => own_paths(iterations)?,
        Scope::Comparison => Vec::new(),
    };
    let device = Device::open()?;
    let description = device.description().to_owned();
    let simulated = device.is_simulated();
    let gpu = device.gpus()?[0].clone();
    let target = gpu.target_id.to_string();
    drop(device);
    let mut hip_not_measured = None;
    if hip {
        progress("HIP's launch paths (building the HIP program with hipcc)");
        match hip::measure(gpu.target_id.processor.name, iterations, &figures) {
            hip::HipSide::Measured(hip_figures) => figures.extend(hip_figures),
            hip::HipSide::NotMeasured(why) => hip_not_measured = Some(why),
        }
    }
    let hip_status = match (&hip_not_measured, hip) {
        (_, false) => HipStatus::NotAsked,
        (None, true) => HipStatus::Measured,
        (Some(why), true) => HipStatus::NotMeasured(why),
    };
    let comparison = against
        .map(|against| compare::run(iterations, against.rocr, against.library))
        .transpose()?;
    let host = host::Host::current();
    report::print(
        &figures,
        &Run {
            device: &description,
            simulated,
            target: &target,
            iterations,
            host: &host,
            comparison: comparison.as_ref(),
            comparison_only: scope == Scope::Comparison,
            hip: hip_status,
        },
        format,
    );
    Ok(())
}

/// aqueduct's own paths, each measured `iterations` times, on a device of their own.
fn own_paths(iterations: usize) -> Result<Vec<Figure>, Error> {
    let device = Device::open()?;
    let gpu = device.gpus()?[0].clone();
    let processor = gpu.target_id.processor.name;
    let pick = |table: &[(&str, &'static [u8])]| {
        table
            .iter()
            .find(|(target, _)| *target == processor)
            .map(|(_, bytes)| *bytes)
            .ok_or_else(|| {
                format!("no built-in benchmark kernels for {processor} (gfx90a, gfx942, gfx1100)")
            })
    };
    let (empty_code, vector_add_code, valu_code) =
        (pick(&EMPTY)?, pick(&VECTOR_ADD)?, pick(&VALU_LOOP)?);
    let mut figures = Vec::new();

    progress("the machine's wake-up floor (futex ping-pong)");
    let floor_samples = floor::wakeup_round_trips(iterations);
    let floor = median(&floor_samples);
    let times_floor = |samples: &[f64]| {
        format!(
            "; median {:.1}× the wake-up floor ({floor:.1} µs)",
            median(samples) / floor
        )
    };

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
        id: "dispatch_spin",
        name: "dispatch → completion, empty kernel, host spinning",
        unit: "µs",
        goal: "≤ 10 µs median (simulator)",
        note: format!("Launch::is_complete in a loop{}", times_floor(&spin)),
        samples: spin,
    });
    figures.push(Figure {
        id: "dispatch_event_wait",
        name: "dispatch → completion, empty kernel, waiting on a signal",
        unit: "µs",
        goal: "report; no busy-wait",
        note: format!(
            "Queue::wait: spins {:?}, then sleeps on the signal's event{}",
            aqueduct::aql::signal::SPIN_BUDGET,
            times_floor(&sleep)
        ),
        samples: sleep,
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
        id: "packets_batched",
        name: "packets through one queue, batches of 4096 barrier-AND packets",
        unit: "M/s",
        goal: "≥ 1 M/s (simulator)",
        samples: rates,
        note: "submit all, then Queue::finish".into(),
    });

    progress("back-to-back dispatches");
    let back_to_back = 64usize;
    let mut dispatch_rates = Vec::new();
    for _ in 0..(iterations / 10).max(3) {
        let started = Instant::now();
        let mut last = None;
        for _ in 0..back_to_back {
            last = Some(queue.launch(&empty, &one, &[])?);
        }
        if let Some(last) = last {
            last.wait(WAIT)?;
        }
        dispatch_rates.push(back_to_back as f64 / started.elapsed().as_secs_f64() / 1e3);
    }
    figures.push(Figure {
        id: "dispatch_back_to_back",
        name: "back-to-back dispatches of the empty kernel through one queue",
        unit: "k/s",
        goal: "report",
        samples: dispatch_rates,
        note: format!(
            "{back_to_back} Queue::launch calls, then a wait on the last (each launch's kernarg \
             segment is reused only after its packet completed)"
        ),
    });

    progress("prepared launches and command-list replays, host cost");
    host_costs(&device, &queue, &empty, iterations, &mut figures)?;

    progress("launch host cost, a 10-kernel chain, its command list (HIP's paths)");
    chain::measure(&queue, &empty, iterations, &mut figures)?;

    progress("host ↔ device signal ping-pong");
    let ping = device.signal(1)?;
    let pong = device.signal(1)?;
    let mut round_trips = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        ping.store(1, MemoryOrder::Release)?;
        pong.store(1, MemoryOrder::Release)?;
        queue.barrier_and(&[&ping], Some(&pong))?;
        let started = Instant::now();
        ping.store(0, MemoryOrder::Release)?;
        queue.wait(&pong, Condition::Eq, 0, WAIT)?;
        round_trips.push(micros(started.elapsed()));
    }
    figures.push(Figure {
        id: "signal_ping_pong",
        name: "host ↔ device signal ping-pong through the command processor",
        unit: "µs",
        goal: "report",
        note: format!(
            "a barrier-AND waits on a signal the host then sets to 0; its completion signal \
             wakes the host (Queue::wait){}",
            times_floor(&round_trips)
        ),
        samples: round_trips,
    });
    figures.push(Figure {
        id: "wakeup_floor",
        name: "the machine's floor: futex ping-pong round trip between two threads",
        unit: "µs",
        goal: "report (CP round trips above are given as multiples of it)",
        samples: floor_samples,
        note: "std::thread::park/unpark (futex wait/wake), mean of 200 round trips per sample"
            .into(),
    });
    doorbell::measure(&device, &gpu, iterations, floor, &mut figures)?;

    // A copy path that fails (a 256 MiB copy past its limit on a machine loaded many times
    // over) must not take the figures measured before it along: say so and go on.
    if let Err(error) = copies::measure(&device, &gpu, iterations, &mut figures) {
        eprintln!("aqueduct bench: the copy paths stopped: {error}");
    }

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
        id: "load",
        name: "load vector_add (parse, validate, upload, relocate, map)",
        unit: "MB/s",
        goal: "report (a small object: the ioctls and mappings of one load dominate)",
        samples: loads,
        note: format!(
            "{} bytes of code object, a private load each time",
            vector_add_code.len()
        ),
    });

    progress("load a large executable");
    let large = large_code_object(vector_add_code);
    let mut large_loads = Vec::new();
    for _ in 0..(iterations / 4).max(10) {
        let started = Instant::now();
        let loaded = device.load_with(&gpu, &large, &LoadOptions::new().private())?;
        let elapsed = started.elapsed();
        drop(loaded);
        large_loads.push(large.len() as f64 / elapsed.as_secs_f64() / 1e6);
    }
    figures.push(Figure {
        id: "load_large",
        name: "load a large executable (parse, validate, upload, relocate, map)",
        unit: "MB/s",
        goal: "≥ 1000 MB/s",
        samples: large_loads,
        note: format!(
            "{} bytes: {LARGE_KERNELS} kernels of {LARGE_KERNEL_CODE} bytes and {LARGE_RELOCATIONS} relocations \
             (amdgpu_loader::synth::many_kernels), a private load each time",
            large.len()
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
        .map(Arg::buffer)
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
            id: "vector_add_gpu_time",
            name: "vector_add of 65536 integers, GPU time",
            unit: "µs",
            goal: "report",
            samples: kernel_times,
            note: "profiling timestamps".into(),
        });
    }

    progress("shader throughput, VALU-heavy kernel");
    let valu = device.load_code_object(&gpu, valu_code)?;
    let valu_loop = valu.kernel("valu_loop")?;
    let out = device.alloc(&gpu, MemoryLocation::Device, 4 * VALU_LANES as usize)?;
    let lane_ops = u64::from(VALU_LANES) * u64::from(VALU_ITERATIONS) * VALU_PER_ITERATION;
    let mut throughput = Vec::new();
    for _ in 0..(iterations / 10).max(3) {
        let done = profiled
            .launch(
                &valu_loop,
                &Geometry::d1(VALU_LANES, VALU_LANES),
                &[Arg::buffer(&out), Arg::u32(VALU_ITERATIONS)],
            )?
            .wait(WAIT)?;
        if let Some(time) = done.gpu_time.filter(|t| !t.is_zero()) {
            #[allow(clippy::cast_precision_loss, reason = "a figure, not a count")]
            throughput.push(lane_ops as f64 / time.as_secs_f64() / 1e6);
        }
    }
    if !throughput.is_empty() {
        figures.push(Figure {
            id: "valu_lane_ops",
            name: "shader throughput, VALU-heavy kernel (one wave64)",
            unit: "M lane-ops/s",
            goal: "≥ 100 M lane-ops/s per core (simulator)",
            samples: throughput,
            note: format!(
                "valu_loop: {VALU_LANES} lanes × {VALU_ITERATIONS} iterations × \
                 {VALU_PER_ITERATION} VALU instructions over the kernel's GPU time; one workgroup \
                 runs on one simulator worker"
            ),
        });
    }
    drop((queue, big, profiled, executable, buffers, valu, out));
    if device.is_simulated() {
        // The GFX11 core beside the GFX9 one, on a simulated RX 7900 XTX of its own.
        figures.push(shader_gfx11::valu_throughput((iterations / 10).max(3))?);
    }

    progress("device open → close");
    drop(device);
    let mut cycles = Vec::new();
    for _ in 0..iterations {
        let started = Instant::now();
        let device = Device::open()?;
        device.shutdown()?;
        cycles.push(micros(started.elapsed()));
    }
    let tenth = (cycles.len() / 10).max(1);
    let early = median(&cycles[..tenth]);
    let late = median(&cycles[cycles.len() - tenth..]);
    figures.push(Figure {
        id: "open_close",
        name: "device open → close (full teardown)",
        unit: "µs",
        goal: "≤ 2 ms median; no growth",
        samples: cycles,
        note: format!(
            "Device::open then shutdown; median of the first tenth {early:.0} µs, of the last \
             tenth {late:.0} µs"
        ),
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
        id: "signal_store_load",
        name: "interrupt signal store (with SET_EVENT) + load",
        unit: "µs",
        goal: "report",
        samples: stores,
        note: "Signal::store wakes sleepers with one ioctl".into(),
    });
    drop((signal, device));
    Ok(figures)
}

/// Launches per timed batch of the host-cost paths: fewer than a prepared launch's kernarg
/// segments, so no issue waits for an earlier one.
const HOST_BATCH: usize = 32;
/// Empty-kernel launches in the replayed command list.
const LIST_LAUNCHES: usize = 16;
/// Replays per timed batch (the list's copies in flight).
const LIST_BATCH: usize = 4;

/// The host cost of `Queue::launch`, `PreparedLaunch::issue` and `CommandList::replay` of the
/// empty kernel, timed in batches that never wait for a kernarg segment (the waits between
/// batches are not timed). Each is timed twice: with the simulated CP running (it reads the
/// ring while the host writes it: on a busy machine the cache lines ping-pong between the two
/// threads), and with the CP held behind a barrier-value packet until the batch is out (the
/// host's own cost: what the figures report).
fn host_costs(
    device: &Device,
    queue: &aqueduct::Queue,
    empty: &aqueduct::Kernel,
    iterations: usize,
    figures: &mut Vec<Figure>,
) -> Result<(), Error> {
    let one = Geometry::d1(1, 1);
    let gate = device.signal(1)?;
    // Time `batch` (which publishes `units` of work) `iterations` times, CP held or not;
    // `drain` waits for the batch's work.
    let timed = |held: bool,
                 units: usize,
                 batch: &mut dyn FnMut() -> Result<(), Error>,
                 drain: &mut dyn FnMut() -> Result<(), Error>|
     -> Result<Vec<f64>, Error> {
        let mut samples = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            if held {
                gate.store(1, MemoryOrder::Release)?;
                queue.barrier_value(&gate, Condition::Eq, 0, -1, None)?;
            }
            let started = Instant::now();
            batch()?;
            samples.push(nanos(started.elapsed()) / units as f64);
            if held {
                gate.store(0, MemoryOrder::Release)?;
            }
            drain()?;
        }
        Ok(samples)
    };
    let mut launch_batch = || {
        for _ in 0..HOST_BATCH {
            queue.launch(empty, &one, &[])?;
        }
        Ok(())
    };
    let mut queue_drain = || Ok(queue.finish(WAIT)?);
    let launches_running = timed(false, HOST_BATCH, &mut launch_batch, &mut queue_drain)?;
    let launches = timed(true, HOST_BATCH, &mut launch_batch, &mut queue_drain)?;
    // The floor of any publish through the safe API: a prebuilt barrier-AND packet.
    let marker = aqueduct::aql::builder::barrier_and(&[], 0)?;
    let mut submit_batch = || {
        for _ in 0..HOST_BATCH {
            queue.submit(&marker)?;
        }
        Ok(())
    };
    let submits = timed(true, HOST_BATCH, &mut submit_batch, &mut queue_drain)?;
    let prepared = std::cell::RefCell::new(queue.prepare(empty, &one, &[])?);
    // The first issue of each batch, alone: the first host work after the wait for the batch
    // before (one clock read and one push more per batch, well under a nanosecond a launch).
    let first_issues = std::cell::RefCell::new(Vec::with_capacity(iterations));
    let mut issue_batch = || {
        let mut prepared = prepared.borrow_mut();
        let started = Instant::now();
        prepared.issue(&[])?;
        first_issues.borrow_mut().push(nanos(started.elapsed()));
        for _ in 1..HOST_BATCH {
            prepared.issue(&[])?;
        }
        Ok(())
    };
    let mut issue_drain = || Ok(prepared.borrow().finish(WAIT)?);
    let issues_running = timed(false, HOST_BATCH, &mut issue_batch, &mut issue_drain)?;
    first_issues.borrow_mut().clear();
    let issues = timed(true, HOST_BATCH, &mut issue_batch, &mut issue_drain)?;
    let later_issues = after_the_first(&issues, &first_issues.borrow(), HOST_BATCH, 1);
    figures.push(Figure {
        id: "prepared_launch",
        name: "prepared launch of the empty kernel, host cost per launch",
        unit: "ns",
        goal: "≤ 100 ns (simulator)",
        note: format!(
            "PreparedLaunch::issue × {HOST_BATCH} timed with the CP held behind a barrier-value \
             packet, then released and finished (not timed); the first issue of a batch (the \
             first host work after the wait for the batch before) {:.0} ns, the other {} {:.0} \
             ns (medians); Queue::launch timed the same way: \
             median {:.0} ns ({:.1}× the prepared launch); Queue::submit of a prebuilt \
             barrier-AND packet (one packet and its doorbell, the floor of any publish through \
             the safe API) {:.0} ns; with the CP running: prepared {:.0} ns, Queue::launch {:.0} \
             ns",
            median(&first_issues.borrow()),
            HOST_BATCH - 1,
            median(&later_issues),
            median(&launches),
            median(&launches) / median(&issues),
            median(&submits),
            median(&issues_running),
            median(&launches_running),
        ),
        samples: issues,
    });
    let mut list = queue.record();
    for _ in 0..LIST_LAUNCHES {
        list.launch(empty, &one, &[])?;
    }
    let replays = measure_replays(list.in_flight(LIST_BATCH as u32).finish()?, &timed)?;
    figures.push(Figure {
        id: "command_list_replay",
        name: "command-list replay, host cost per packet",
        unit: "ns",
        goal: "≤ 30 ns (simulator)",
        note: format!(
            "CommandList::replay × {LIST_BATCH} of {LIST_LAUNCHES} empty-kernel launches and \
             the completion barrier ({} packets, one doorbell a replay), timed with the CP held \
             as above; {}",
            replays.packets,
            replays.split()
        ),
        samples: replays.held.clone(),
    });
    figures.push(Figure {
        id: "command_list_replay_after_wait",
        name: "command-list replay after the queue drained, host cost per packet",
        unit: "ns",
        goal: "report (≤ 30 ns is the goal for replays in a run)",
        note: format!(
            "the first replay of each command_list_replay batch alone: the host's first work \
             after waiting {:.0} µs (median) for the batch before to complete, so its first \
             touches of the list, the queue, the signal and the ring come back to memory the \
             CP or other work used last; a user who replays, waits and replays again pays this",
            median(&replays.drains)
        ),
        samples: replays.first,
    });
    // The same with copies and fills in the list (the driver's blit kernels): their packets
    // are prebuilt like a launch's, so a replay should cost the same per packet.
    let src = device.alloc(
        queue_gpu(device, queue)?,
        aqueduct::MemoryLocation::Device,
        4096,
    )?;
    let dst = device.alloc(
        queue_gpu(device, queue)?,
        aqueduct::MemoryLocation::Device,
        4096,
    )?;
    let mut list = queue.record();
    for i in 0..LIST_LAUNCHES / 3 {
        list.launch(empty, &one, &[])?;
        list.copy(&dst, 256 * i, &src, 256 * i + 1, 255)?;
        list.fill(&dst, 2048 + 256 * i, 256, 0x5a5a_5a5a)?;
    }
    list.launch(empty, &one, &[])?;
    let copy_replays = measure_replays(list.in_flight(LIST_BATCH as u32).finish()?, &timed)?;
    figures.push(Figure {
        id: "command_list_replay_copies",
        name: "command-list replay with copies and fills, host cost per packet",
        unit: "ns",
        goal: "≤ 30 ns (simulator)",
        note: format!(
            "CommandList::replay × {LIST_BATCH} of {} empty-kernel launches, {} copies (255 \
             bytes, unaligned) and {} fills (256 bytes) and the completion barrier ({} \
             packets, one doorbell a replay), timed with the CP held as above; {}. The host \
             path is the same code as command_list_replay's; what differs is the wait before \
             each batch: the simulated shader runs the copies and fills on the host's cores, \
             and after a wait of a millisecond or more the host's first touches of its queue, \
             signals and ring are cold (the empty-kernel list measures as much or more after a \
             2 ms pause), and ring slots the CP consumed long ago come from further away",
            LIST_LAUNCHES / 3 + 1,
            LIST_LAUNCHES / 3,
            LIST_LAUNCHES / 3,
            copy_replays.packets,
            copy_replays.split()
        ),
        samples: copy_replays.held,
    });
    Ok(())
}

/// The host cost of replaying one command list, as `host_costs` times it.
struct ListReplays {
    /// Packets per replay.
    packets: usize,
    /// ns per packet of each held batch (the figure).
    held: Vec<f64>,
    /// ns per packet of each batch with the CP running.
    running: Vec<f64>,
    /// ns per packet of the first replay of each held batch (the first host work after the
    /// previous batch's drain).
    first: Vec<f64>,
    /// ns per packet of the other replays of each held batch.
    rest: Vec<f64>,
    /// µs each held batch's drain (the CP's work, untimed in the figure) took.
    drains: Vec<f64>,
}

impl ListReplays {
    /// The note's account of where a batch's time goes.
    fn split(&self) -> String {
        format!(
            "the first replay of a batch {:.0} ns per packet, the other {} {:.0} ns \
             (medians); the wait for the batch before (not timed) {:.0} µs; with the CP \
             running: median {:.0} ns",
            median(&self.first),
            LIST_BATCH - 1,
            median(&self.rest),
            median(&self.drains),
            median(&self.running)
        )
    }
}

/// A batch timer: `timed` of `host_costs`.
type Timer<'a> = dyn Fn(
        bool,
        usize,
        &mut dyn FnMut() -> Result<(), Error>,
        &mut dyn FnMut() -> Result<(), Error>,
    ) -> Result<Vec<f64>, Error>
    + 'a;

/// Time `list`'s replays with `timed` (running, then held), `LIST_BATCH` a batch, splitting
/// each held batch into its first replay and the rest, and timing the waits between batches.
/// The split costs the timed batch one clock read and one push (well under a nanosecond per
/// packet).
fn measure_replays(list: aqueduct::CommandList, timed: &Timer<'_>) -> Result<ListReplays, Error> {
    let packets = list.packets();
    let list = std::cell::RefCell::new(list);
    let firsts = std::cell::RefCell::new(Vec::with_capacity(1024));
    let drains = std::cell::RefCell::new(Vec::with_capacity(1024));
    let mut replay_batch = || {
        let mut list = list.borrow_mut();
        let started = Instant::now();
        list.replay()?;
        firsts.borrow_mut().push(nanos(started.elapsed()));
        for _ in 1..LIST_BATCH {
            list.replay()?;
        }
        Ok(())
    };
    let mut replay_drain = || {
        let started = Instant::now();
        list.borrow().finish(WAIT)?;
        drains.borrow_mut().push(micros(started.elapsed()));
        Ok(())
    };
    let units = LIST_BATCH * packets;
    let running = timed(false, units, &mut replay_batch, &mut replay_drain)?;
    firsts.borrow_mut().clear();
    drains.borrow_mut().clear();
    let held = timed(true, units, &mut replay_batch, &mut replay_drain)?;
    #[allow(clippy::cast_precision_loss, reason = "a figure, not a count")]
    let first = firsts
        .borrow()
        .iter()
        .map(|first| first / packets as f64)
        .collect();
    let rest = after_the_first(&held, &firsts.borrow(), units, packets);
    Ok(ListReplays {
        packets,
        held,
        running,
        first,
        rest,
        drains: drains.into_inner(),
    })
}

/// The cost per unit of what each timed batch did after its first part: `per_unit` holds each
/// batch's cost per unit (`units` a batch), `firsts` the time its first `first_units` units
/// took (ns), in the same order.
fn after_the_first(per_unit: &[f64], firsts: &[f64], units: usize, first_units: usize) -> Vec<f64> {
    #[allow(clippy::cast_precision_loss, reason = "a figure, not a count")]
    per_unit
        .iter()
        .zip(firsts)
        .map(|(per_unit, first)| (per_unit * units as f64 - first) / (units - first_units) as f64)
        .collect()
}

/// The GPU agent `queue` runs on.
fn queue_gpu<'d>(
    device: &'d Device,
    queue: &aqueduct::Queue,
) -> Result<&'d aqueduct::GpuAgent, Error> {
    Ok(device
        .gpus()?
        .iter()
        .find(|gpu| gpu.gpu_id == queue.gpu_id())
        .ok_or_else(|| aqueduct::Error::InvalidArgument("the queue's GPU is not listed".into()))?)
}

fn nanos(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e9
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

fn progress(what: &str) {
    eprintln!("aqueduct bench: {what}…");
}

/// The median of `samples` (not empty).
fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// Kernels in the large synthetic code object of the `load_large` path.
const LARGE_KERNELS: usize = 300;
/// Bytes of machine code per kernel of that object.
const LARGE_KERNEL_CODE: usize = 8192;
/// Relocations in its data table.
const LARGE_RELOCATIONS: usize = 1024;

/// A code object of about 3 MB for the current GPU: the loader's synthetic many-kernel object,
/// with the `e_flags` of `small` (a committed object of the same target: its machine, and the
/// xnack and sramecc settings clang chose for it, which a gfx1100 object must leave
/// "unsupported"), so that it loads on the device `small` was chosen for.
fn large_code_object(small: &[u8]) -> Vec<u8> {
    /// `e_flags` of an ELF64 header.
    const E_FLAGS: std::ops::Range<usize> = 48..52;
    let e_flags = small
        .get(E_FLAGS)
        .and_then(|bytes| bytes.try_into().ok())
        .map_or(0, u32::from_le_bytes);
    amdgpu_loader::synth::many_kernels(LARGE_KERNELS, LARGE_KERNEL_CODE, LARGE_RELOCATIONS, e_flags)
}
