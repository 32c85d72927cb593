//! The fault sweep: the quickstart path (open → load → queue → launch → wait → teardown) runs
//! once on the simulator to record every call it makes through the `Sys` seam, then once per
//! recorded call with that call failing, with an errno the kernel returns there, and once more
//! per ioctl with it interrupted (EINTR), which the driver must restart.
//!
//! Each run must end in a correct result or a clear error that carries the injected errno: no
//! panic, no hang. Afterwards the simulated kernel holds nothing of the process but its binding
//! (cleanly bound, or not bound at all, never half), a fresh open runs the path to a correct
//! result, and once the binding is released and the process' KFD state is gone the process
//! holds exactly the files and mappings it held before the run. A release the kernel refuses
//! (a FREE, UNMAP or DESTROY failing) leaves what it refused in the kernel, as on hardware: that
//! run must report the error and leave nothing else.
//!
//! One test in its own binary, so nothing else in the process moves the fd and mapping counts.

mod support;

use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct::kfd::{Errno, Sys};
use aqueduct::sim::{CallKind, FaultingSys, Machine, ResourceCounts, SeamCall};
use aqueduct::{Arg, Condition, Device, Geometry, MemoryLocation, MemoryOrder, QueueOptions};
use support::{binding_only, code_object, machine, pid};

/// Elements added by each run (the quickstart adds 2^20; the path is the same).
const ELEMENTS: u32 = 1024;
/// A run's wait for its kernel.
const WAIT: Duration = Duration::from_secs(20);
/// A run that takes longer than this hung.
const RUN_DEADLINE: Duration = Duration::from_secs(30);

/// How a quickstart run ended, when it did not end in a correct result.
#[derive(Debug)]
enum Failure {
    /// The API returned an error.
    Error(aqueduct::Error),
    /// The result was wrong.
    Wrong(String),
}

/// The quickstart example's path, with a small vector and a bounded wait.
fn quickstart(sys: Arc<dyn Sys>, code: &[u8]) -> Result<(), Failure> {
    let device = Device::open_on(sys).map_err(Failure::Error)?;
    let result = quickstart_on(&device, code);
    let shutdown = device.shutdown().map_err(Failure::Error);
    result.and(shutdown)
}

fn quickstart_on(device: &Device, code: &[u8]) -> Result<(), Failure> {
    let n = ELEMENTS;
    let gpu = &device.gpus().map_err(Failure::Error)?[0];
    let executable = device.load_code_object(gpu, code).map_err(Failure::Error)?;
    let kernel = executable.kernel("vector_add").map_err(Failure::Error)?;
    let a: Vec<i32> = (0..n as i32).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| 3 * i + 1).collect();
    let bytes = 4 * n as usize;
    let alloc = || {
        device
            .alloc(gpu, MemoryLocation::Device, bytes)
            .map_err(Failure::Error)
    };
    let (da, db, dc) = (alloc()?, alloc()?, alloc()?);
    da.write(0, &a).map_err(Failure::Error)?;
    db.write(0, &b).map_err(Failure::Error)?;
    let queue = device
        .create_queue(
            gpu,
            &QueueOptions {
                profiling: true,
                ..QueueOptions::default()
            },
        )
        .map_err(Failure::Error)?;
    let completion = queue
        .launch(
            &kernel,
            &Geometry::d1(n, 256),
            &[
                Arg::ptr(da.gpu_address()),
                Arg::ptr(db.gpu_address()),
                Arg::ptr(dc.gpu_address()),
                Arg::u32(n),
            ],
        )
        .map_err(Failure::Error)?
        .wait(Some(WAIT))
        .map_err(Failure::Error)?;
    let c: Vec<i32> = dc.to_vec().map_err(Failure::Error)?;
    if let Some(i) = (0..n as usize).find(|&i| c[i] != a[i].wrapping_add(b[i])) {
        return Err(Failure::Wrong(format!(
            "c[{i}] = {}, expected {}",
            c[i],
            a[i].wrapping_add(b[i])
        )));
    }
    if completion.gpu_time.is_none() {
        return Err(Failure::Wrong("no GPU timestamps".to_owned()));
    }
    Ok(())
}

/// What the process holds that the sweep checks.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Footprint {
    /// Open fds and what they name.
    fds: BTreeSet<String>,
    /// Memory mappings (a count: the addresses of heap arenas move).
    maps: usize,
}

fn footprint() -> Footprint {
    let fds = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .map(|entry| {
            let target = std::fs::read_link(entry.path())
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            format!("{} -> {target}", entry.file_name().to_string_lossy())
        })
        // The listing's own directory fd.
        .filter(|line| !line.ends_with(&format!("/proc/{}/fd", std::process::id())))
        .collect();
    let maps = std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .count();
    Footprint { fds, maps }
}

/// The errno the kernel returns for a failure of `kind` (a hard failure, not an interruption).
fn kernel_errno(kind: &CallKind) -> Errno {
    match kind {
        // drm_open answers ENODEV for an unplugged device.
        CallKind::Open(path) if path.starts_with("/dev/dri") => Errno::ENODEV,
        // close(2) reports EIO from a final flush; the fd is released regardless.
        CallKind::Close(_) => Errno::EIO,
        CallKind::Ioctl { .. } => match kind.kfd_request_name() {
            // copy_to_user of the answer.
            Some(
                "AMDKFD_IOC_GET_VERSION"
                | "AMDKFD_IOC_GET_PROCESS_APERTURES_NEW"
                | "AMDKFD_IOC_WAIT_EVENTS",
            ) => Errno::EFAULT,
            Some(
                "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"
                | "AMDKFD_IOC_MAP_MEMORY_TO_GPU"
                | "AMDKFD_IOC_CREATE_QUEUE"
                | "AMDKFD_IOC_CREATE_EVENT",
            ) => Errno::ENOMEM,
            // ACQUIRE_VM with another file, RUNTIME_ENABLE after another runtime's, XNACK with
            // queues alive.
            Some(
                "AMDKFD_IOC_ACQUIRE_VM" | "AMDKFD_IOC_RUNTIME_ENABLE" | "AMDKFD_IOC_SET_XNACK_MODE",
            ) => Errno::EBUSY,
            Some(_) => Errno::EINVAL,
            // The render node: drm_ioctl on an unplugged device.
            None => Errno::ENODEV,
        },
        // kfd_open (kfd_create_process) and other opens fail for memory; mmap for memory or
        // the map count; munmap when splitting a mapping exceeds the map count.
        CallKind::Open(_) | CallKind::Mmap(_) | CallKind::Munmap => Errno::ENOMEM,
        CallKind::Madvise(_) => Errno::EINVAL,
        CallKind::ReadFile(_) | CallKind::ReadDir(_) => Errno::ENODEV,
        CallKind::CharDevice(_) => Errno::EBADF,
    }
}

/// Whether `error` says what failed: its errno, or the errno's name or text in its message.
fn names_errno(error: &aqueduct::Error, errno: Errno) -> bool {
    if error.errno() == Some(errno) {
        return true;
    }
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    errno.name().is_some_and(|name| text.contains(name))
        || errno.description().is_some_and(|d| text.contains(d))
}

/// Requests the kernel can interrupt (return EINTR, or restart transparently with SA_RESTART):
/// WAIT_EVENTS sleeps interruptibly (`kfd_wait_on_events`: -ERESTARTSYS on a pending signal);
/// allocation, mapping, unmapping and freeing reserve their buffers with interruptible waits
/// (`amdgpu_bo_create` with `interruptible`, `drm_exec` with DRM_EXEC_INTERRUPTIBLE_WAIT in
/// `reserve_bo_and_vm`/`reserve_bo_and_cond_vms`). The rest take plain mutexes. From a read of
/// amdgpu_amdkfd_gpuvm.c and kfd_events.c, not checked on hardware.
const INTERRUPTIBLE: &[&str] = &[
    "AMDKFD_IOC_WAIT_EVENTS",
    "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU",
    "AMDKFD_IOC_MAP_MEMORY_TO_GPU",
    "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU",
    "AMDKFD_IOC_FREE_MEMORY_OF_GPU",
];

/// Requests that give something back to the kernel: refused, the kernel keeps the object
/// (until the process ends), as it would on hardware.
const RELEASES: &[&str] = &[
    "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU",
    "AMDKFD_IOC_FREE_MEMORY_OF_GPU",
    "AMDKFD_IOC_DESTROY_EVENT",
    "AMDKFD_IOC_DESTROY_QUEUE",
];

/// Whether the path may end in a correct result when `kind` fails: the calls the driver can do
/// without, each falling back to a stated default. Every other failure must end in an error:
/// a failure swallowed where it matters is what the sweep is for.
fn optional(kind: &CallKind) -> bool {
    let file_name = |path: &Path| path.file_name().and_then(|n| n.to_str()).map(str::to_owned);
    match kind {
        // The marketing name (the agent's name falls back to empty) and the live VRAM use
        // (informational; AVAILABLE_MEMORY is what allocation decisions use).
        CallKind::ReadFile(path) => {
            matches!(file_name(path).as_deref(), Some("name" | "used_memory"))
        }
        // SET_XNACK_MODE is a query here: the mode is then "unknown". A refused
        // RUNTIME_ENABLE is recorded (RuntimeState::Refused) and queues work without it.
        // AMDGPU_INFO_DEV_INFO on the render node (no KFD name): the timestamp frequency falls
        // back to 100 MHz, with a warning.
        CallKind::Ioctl { .. } => matches!(
            kind.kfd_request_name(),
            Some("AMDKFD_IOC_SET_XNACK_MODE" | "AMDKFD_IOC_RUNTIME_ENABLE") | None
        ),
        _ => false,
    }
}

/// What a run failing a call must end in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// An interrupted call, restarted: a correct result and nothing left.
    Restarted,
    /// A clear error carrying the errno (or a correct result, where the call was optional),
    /// and nothing left but a clean binding.
    Failed,
    /// A release the kernel refused: a clear error, and the kernel keeps what it refused.
    Refused,
    /// DESTROY_QUEUE refused: the queue may still run, so its memory, and with it the open
    /// driver, is kept for the rest of the process; the device reopens on it.
    QueueKept,
}

fn expectation(kind: &CallKind, errno: Errno) -> Expect {
    let name = kind.kfd_request_name();
    if errno == Errno::EINTR {
        Expect::Restarted
    } else if name == Some("AMDKFD_IOC_DESTROY_QUEUE") {
        Expect::QueueKept
    } else if *kind == CallKind::Munmap || name.is_some_and(|n| RELEASES.contains(&n)) {
        Expect::Refused
    } else {
        Expect::Failed
    }
}

/// `a - b`, field by field (negative: fewer than the binding).
fn minus(a: ResourceCounts, b: ResourceCounts) -> [i64; 6] {
    let f = |c: ResourceCounts| {
        [
            c.processes,
            c.buffer_objects,
            c.queues,
            c.events,
            c.cpu_mappings,
            c.open_files,
        ]
    };
    let (a, b) = (f(a), f(b));
    std::array::from_fn(|i| a[i] as i64 - b[i] as i64)
}

struct Sweep {
    machine: Machine,
    faulting: Arc<FaultingSys>,
    sys: Arc<dyn Sys>,
    code: Arc<Vec<u8>>,
}

/// What one run did.
#[derive(Debug)]
struct RunReport {
    outcome: Result<(), String>,
    delivered: bool,
    after_run: ResourceCounts,
    elapsed: Duration,
}

impl Sweep {
    fn new() -> Self {
        let machine = machine();
        let faulting = Arc::new(FaultingSys::new(Arc::new(machine.clone())));
        let sys: Arc<dyn Sys> = faulting.clone();
        Self {
            machine,
            faulting,
            sys,
            code: Arc::new(code_object("gfx90a", "vector_add.co5")),
        }
    }

    /// One run failing `fault` (none: record), with a deadline.
    fn run(&self, fault: Option<(&SeamCall, Errno)>) -> RunReport {
        let label = fault
            .as_ref()
            .map_or("the recording run".to_owned(), |(c, e)| {
                format!("{c} failing with {e}")
            });
        self.faulting
            .start_run(fault.map(|(call, errno)| (call.clone(), errno)));
        let started = Instant::now();
        let (sys, code) = (Arc::clone(&self.sys), Arc::clone(&self.code));
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
            test_support::watchdog::within(RUN_DEADLINE, move || quickstart(sys, &code))
        }));
        let elapsed = started.elapsed();
        self.faulting.disarm();
        let outcome = match outcome {
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                panic!("{label}: panicked or hung: {message}");
            }
            Ok(Ok(())) => Ok(()),
            Ok(Err(Failure::Wrong(what))) => panic!("{label}: wrong result: {what}"),
            Ok(Err(Failure::Error(error))) => {
                if let Some((_, errno)) = &fault {
                    assert!(
                        names_errno(&error, *errno),
                        "{label}: the error does not say what failed: {error:?}"
                    );
                }
                Err(error.to_string())
            }
        };
        RunReport {
            outcome,
            delivered: self.faulting.delivered(),
            after_run: self.machine.process_counts(pid()),
            elapsed,
        }
    }

    /// Release the binding and the process' KFD state, as the end of the process would.
    fn forget_process(&self) {
        aqueduct::kfd::release_simulated_bindings();
        let _ = self.machine.exit_process(pid());
    }
}

#[test]
fn every_seam_call_of_the_quickstart_can_fail_cleanly() {
    let sweep = Sweep::new();
    // The recording run, from an unbound process.
    let recording = sweep.run(None);
    assert_eq!(recording.outcome, Ok(()));
    assert!(recording.elapsed < RUN_DEADLINE);
    let calls = sweep.faulting.calls();
    assert_eq!(recording.after_run, binding_only(1));
    sweep.forget_process();
    // A second clean run settles lazily made process state (thread stacks, allocator pools,
    // the shader core's decode cache, which holds the last code object run).
    assert_eq!(sweep.run(None).outcome, Ok(()));
    sweep.forget_process();
    let baseline = footprint();

    let mut plans: Vec<(SeamCall, Errno)> = calls
        .iter()
        .map(|call| (call.clone(), kernel_errno(&call.kind)))
        .collect();
    plans.extend(
        calls
            .iter()
            .filter(|call| {
                call.kind
                    .kfd_request_name()
                    .is_some_and(|n| INTERRUPTIBLE.contains(&n))
            })
            .map(|call| (call.clone(), Errno::EINTR)),
    );
    let started = Instant::now();
    let (mut errors, mut succeeded, mut not_reached) = (0, 0, Vec::new());
    for (call, errno) in &plans {
        let label = format!("{call} failing with {errno}");
        let expect = expectation(&call.kind, *errno);
        match expect {
            Expect::Restarted | Expect::Failed => {
                let report = sweep.run(Some((call, *errno)));
                if !report.delivered {
                    // A call whose occurrence depends on timing (a wait that found its
                    // signal set already).
                    not_reached.push(label.clone());
                }
                match &report.outcome {
                    Ok(()) => succeeded += 1,
                    Err(_) => errors += 1,
                }
                if expect == Expect::Restarted {
                    assert_eq!(report.outcome, Ok(()), "{label}: not restarted");
                } else if report.delivered && !optional(&call.kind) {
                    assert!(
                        report.outcome.is_err(),
                        "{label}: the failure was swallowed"
                    );
                }
                // Cleanly bound (some of the binding made, never anything else) or unbound.
                let left = minus(report.after_run, binding_only(1));
                assert!(
                    left.iter().all(|&n| n <= 0),
                    "{label}: the kernel holds more than the binding: {:?}",
                    report.after_run
                );
                let fresh = sweep.run(None);
                assert_eq!(fresh.outcome, Ok(()), "{label}: a fresh open after it");
                assert_eq!(
                    fresh.after_run,
                    binding_only(1),
                    "{label}: after a fresh run"
                );
            }
            Expect::Refused | Expect::QueueKept => {
                // What the kernel keeps, it keeps for the life of the process: each of these
                // runs in a process of its own (a fork child, unbound like this one now).
                errors += 1;
                test_support::fork::assert_child_passes(RUN_DEADLINE * 4, || {
                    refused_release(&sweep, call, *errno, expect);
                    Ok(())
                });
            }
        }
        sweep.forget_process();
        let now = footprint();
        assert_eq!(now, baseline, "{label}: the process' files and mappings");
    }
    eprintln!(
        "fault sweep: {} of {} runs clean ({} seam calls recorded; {} runs reached their fault; \
         {errors} ended in a clear error, {succeeded} in a correct result; not reached: \
         {not_reached:?}) in {:?}",
        plans.len(),
        plans.len(),
        calls.len(),
        plans.len() - not_reached.len(),
        started.elapsed()
    );
    assert!(
        not_reached.len() * 10 <= plans.len(),
        "too many faults not reached: {not_reached:?}"
    );
    a_store_whose_wake_up_failed_still_ends_a_wait(&sweep);
}

/// A run whose release the kernel refuses, in a process of its own: the error says so, the
/// kernel keeps what it refused and nothing else, and the device still opens and runs (twice,
/// with nothing building up); once the process' KFD state is gone, it holds the files it held
/// before.
fn refused_release(sweep: &Sweep, call: &SeamCall, errno: Errno, expect: Expect) {
    let label = format!("{call} failing with {errno}");
    let before = footprint();
    let report = sweep.run(Some((call, errno)));
    assert!(report.delivered, "{label}: not reached");
    assert!(
        report.outcome.is_err(),
        "{label}: the refusal went unreported"
    );
    let fresh = sweep.run(None);
    assert_eq!(fresh.outcome, Ok(()), "{label}: a fresh open after it");
    let kept = minus(fresh.after_run, binding_only(1));
    // A refused munmap keeps no object in the kernel (a buffer's was freed first), at most
    // the mapping itself (the doorbell page's); every other refusal keeps its object there.
    let as_expected = if call.kind == CallKind::Munmap {
        kept[1..4] == [0; 3] && kept[4] <= 1
    } else {
        kept != [0; 6]
    };
    assert!(
        kept.iter().all(|&n| n >= 0) && kept[0] == 0 && kept[5] == 0 && as_expected,
        "{label}: kept {:?}",
        fresh.after_run
    );
    assert_eq!(
        kept[2],
        i64::from(expect == Expect::QueueKept),
        "{label}: queues kept: {:?}",
        fresh.after_run
    );
    let again = sweep.run(None);
    assert_eq!(
        again.outcome,
        Ok(()),
        "{label}: a second fresh open after it"
    );
    assert_eq!(
        again.after_run, fresh.after_run,
        "{label}: what was kept changed"
    );
    if expect == Expect::QueueKept {
        // The queue's memory, and with it the open driver, stays for the process' life.
        return;
    }
    sweep.forget_process();
    let after = footprint();
    assert_eq!(after.fds, before.fds, "{label}: open files");
    // Mappings are not compared here: a fork child's first threads make malloc arenas of
    // their own, which moves the count. (A refused FREE or UNMAP keeps the buffer's range
    // reserved, a refused munmap keeps the pages until closing the driver unmaps the address
    // space whole.)
}

/// A waiter asleep in the kernel on a signal, whose value is then stored with the wake-up
/// (SET_EVENT) failing: the store reports the failure and the waiter still returns, long
/// before its timeout (waits sleep in slices and look again).
fn a_store_whose_wake_up_failed_still_ends_a_wait(sweep: &Sweep) {
    const TIMEOUT: Duration = Duration::from_secs(20);
    sweep.faulting.start_run(None);
    let device = Device::open_on(Arc::clone(&sweep.sys)).unwrap();
    let signal = device.signal(1).unwrap();
    let waiter = {
        let signal = signal.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let seen = signal.wait(Condition::Eq, 0, Some(TIMEOUT));
            (seen, started.elapsed())
        })
    };
    let wait_events =
        |call: &SeamCall| call.kind.kfd_request_name() == Some("AMDKFD_IOC_WAIT_EVENTS");
    test_support::wait::assert_until(TIMEOUT, "the waiter sleeping in WAIT_EVENTS", || {
        sweep.faulting.calls().iter().any(wait_events)
    });
    let set_event = SeamCall {
        kind: CallKind::Ioctl {
            file: "/dev/kfd".into(),
            request: request_of("AMDKFD_IOC_SET_EVENT"),
        },
        occurrence: 1,
    };
    sweep
        .faulting
        .start_run(Some((set_event.clone(), Errno::EINVAL)));
    let stored = signal.store(0, MemoryOrder::Release);
    assert!(
        sweep.faulting.delivered(),
        "the store issued no {set_event}"
    );
    let error = stored.unwrap_err();
    assert!(names_errno(&error, Errno::EINVAL), "{error}");
    let (seen, waited) =
        test_support::watchdog::within(TIMEOUT * 2, move || waiter.join()).unwrap();
    assert_eq!(seen.unwrap(), 0);
    assert!(waited < TIMEOUT / 2, "the wait took {waited:?}");

    // And a wait whose sleep in the kernel fails ends at once with that error.
    let wait_events = SeamCall {
        kind: CallKind::Ioctl {
            file: "/dev/kfd".into(),
            request: request_of("AMDKFD_IOC_WAIT_EVENTS"),
        },
        occurrence: 1,
    };
    sweep
        .faulting
        .start_run(Some((wait_events.clone(), Errno::EFAULT)));
    let started = Instant::now();
    let error = signal
        .wait(Condition::Eq, 5, Some(TIMEOUT))
        .expect_err("a wait on a value never stored");
    assert!(
        sweep.faulting.delivered(),
        "the wait issued no {wait_events}"
    );
    assert!(names_errno(&error, Errno::EFAULT), "{error}");
    assert!(started.elapsed() < TIMEOUT / 2, "{:?}", started.elapsed());
    drop(signal);
    device.shutdown().unwrap();
}

/// The request number of the KFD request named `name`.
fn request_of(name: &str) -> u32 {
    aqueduct::kfd::request::ALL
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no request {name}"))
        .opcode
        .raw()
}
