//! What the fault sweeps share (`tests/fault_sweep.rs` on the in-process simulator,
//! `tests/fault_sweep_hw.rs` on the real system-call path under the LD_PRELOAD simulator): the
//! quickstart path, the errno the kernel returns for each call, which failures may pass, and
//! one run with a fault, its deadline and the checks every run must pass.

#![allow(dead_code, reason = "each sweep uses a different part")]

use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct::kfd::{Errno, Sys};
use aqueduct::sim::{CallKind, FaultingSys, OPENED_ELSEWHERE, SeamCall};
use aqueduct::{Arg, Device, Geometry, MemoryLocation, QueueOptions};

/// Elements added by each run (the quickstart adds 2^20; the path is the same).
pub const ELEMENTS: u32 = 1024;
/// A run's wait for its kernel.
pub const WAIT: Duration = Duration::from_secs(20);
/// A run that takes longer than this hung.
pub const RUN_DEADLINE: Duration = Duration::from_secs(30);

/// How a quickstart run ended, when it did not end in a correct result.
#[derive(Debug)]
pub enum Failure {
    /// The API returned an error.
    Error(aqueduct::Error),
    /// The result was wrong.
    Wrong(String),
}

/// The quickstart example's path, with a small vector and a bounded wait.
pub fn quickstart(sys: Arc<dyn Sys>) -> Result<(), Failure> {
    let device = Device::open_on(sys).map_err(Failure::Error)?;
    let result = quickstart_on(&device);
    let shutdown = device.shutdown().map_err(Failure::Error);
    result.and(shutdown)
}

fn quickstart_on(device: &Device) -> Result<(), Failure> {
    let n = ELEMENTS;
    let gpu = &device.gpus().map_err(Failure::Error)?[0];
    // The committed vector_add for the GPU's target, as the example loads it.
    let processor = gpu.target_id.processor.name;
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests/kernels/bin",
        processor,
        "vector_add.co5",
    ]
    .iter()
    .collect();
    let code =
        std::fs::read(&path).map_err(|e| Failure::Wrong(format!("{}: {e}", path.display())))?;
    let executable = device
        .load_code_object(gpu, &code)
        .map_err(Failure::Error)?;
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
pub struct Footprint {
    /// Open fds and what they name.
    pub fds: BTreeSet<String>,
    /// Memory mappings (a count: the addresses of heap arenas move).
    pub maps: usize,
}

pub fn footprint() -> Footprint {
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
pub fn kernel_errno(kind: &CallKind) -> Errno {
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
pub fn names_errno(error: &aqueduct::Error, errno: Errno) -> bool {
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
pub const INTERRUPTIBLE: &[&str] = &[
    "AMDKFD_IOC_WAIT_EVENTS",
    "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU",
    "AMDKFD_IOC_MAP_MEMORY_TO_GPU",
    "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU",
    "AMDKFD_IOC_FREE_MEMORY_OF_GPU",
];

/// Requests that give something back to the kernel: refused, the kernel keeps the object
/// (until the process ends), as it would on hardware.
pub const RELEASES: &[&str] = &[
    "AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU",
    "AMDKFD_IOC_FREE_MEMORY_OF_GPU",
    "AMDKFD_IOC_DESTROY_EVENT",
    "AMDKFD_IOC_DESTROY_QUEUE",
];

/// Whether the path may end in a correct result when `kind` fails: the calls the driver can do
/// without, each falling back to a stated default. Every other failure must end in an error:
/// a failure swallowed where it matters is what the sweep is for.
pub fn optional(kind: &CallKind) -> bool {
    let file_name = |path: &Path| path.file_name().and_then(|n| n.to_str()).map(str::to_owned);
    match kind {
        // The marketing name (the agent's name falls back to empty) and the live VRAM use
        // (informational; AVAILABLE_MEMORY is what allocation decisions use).
        // /proc/self/maps (the real kernel's path only): where an unloaded copy of the driver
        // would have left its binding record. Unreadable (no /proc in a container, say), no
        // record is found and the open binds afresh; should a copy have bound already,
        // ACQUIRE_VM then refuses with EBUSY, and that error names this case.
        CallKind::ReadFile(path) => {
            path == Path::new("/proc/self/maps")
                || matches!(file_name(path).as_deref(), Some("name" | "used_memory"))
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
pub enum Expect {
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

pub fn expectation(kind: &CallKind, errno: Errno) -> Expect {
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

/// Every run to fail: each recorded call with the kernel's errno there, and each call the
/// kernel can interrupt with EINTR.
pub fn plans(calls: &[SeamCall]) -> Vec<(SeamCall, Errno)> {
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
    plans
}

/// How one run went.
#[derive(Debug)]
pub struct Outcome {
    /// `Err(message)`: the run ended in an error (which carried the injected errno).
    pub result: Result<(), String>,
    /// Whether the planned call was made (and failed).
    pub delivered: bool,
    /// How long the run took.
    pub elapsed: Duration,
}

/// Run the quickstart path through `faulting` (which `sys` is), failing `fault` (none: fail
/// nothing). Panics, naming the fault, if the run panicked, hung, computed a wrong result or
/// ended in an error that does not carry the injected errno.
pub fn run_path(
    faulting: &FaultingSys,
    sys: &Arc<dyn Sys>,
    fault: Option<(&SeamCall, Errno)>,
) -> Outcome {
    let label = fault
        .as_ref()
        .map_or("a run without faults".to_owned(), |(c, e)| {
            format!("{c} failing with {e}")
        });
    faulting.start_run(fault.map(|(call, errno)| (call.clone(), errno)));
    let started = Instant::now();
    let sys = Arc::clone(sys);
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
        test_support::watchdog::within(RUN_DEADLINE, move || quickstart(sys))
    }));
    let elapsed = started.elapsed();
    faulting.disarm();
    let result = match outcome {
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
    Outcome {
        result,
        delivered: faulting.delivered(),
        elapsed,
    }
}

/// Whether a run failing `call` (one of the recorded `calls`) may end in a correct result: an
/// [`optional`] call, or one that writes the binding's handoff record (the real kernel's path
/// only), which is best effort by design (`ProcessBinding::publish`): without a record a later
/// copy of the driver cannot take the binding over, and ACQUIRE_VM's EBUSY names that case.
/// Those are the `fstat` of `/dev/kfd` (the record names its device number), the mmap of the
/// record's memfd (a file not opened through the seam) and the madvise right after it.
pub fn may_pass(call: &SeamCall, calls: &[SeamCall]) -> bool {
    let is_record_mmap = |c: &SeamCall| matches!(&c.kind, CallKind::Mmap(Some(path)) if path == Path::new(OPENED_ELSEWHERE));
    let follows_record_mmap = calls
        .windows(2)
        .any(|w| is_record_mmap(&w[0]) && w[1] == *call);
    optional(&call.kind)
        || matches!(call.kind, CallKind::CharDevice(_))
        || is_record_mmap(call)
        || (matches!(call.kind, CallKind::Madvise(_)) && follows_record_mmap)
}

/// Check what a run failing `call` with `errno` ended in, against its [`Expect`]ation:
/// restarted runs succeed, refused releases report, and other failures end in an error
/// unless the run may pass ([`may_pass`]).
pub fn check_outcome(call: &SeamCall, errno: Errno, outcome: &Outcome, calls: &[SeamCall]) {
    let label = format!("{call} failing with {errno}");
    match expectation(&call.kind, errno) {
        Expect::Restarted => assert_eq!(outcome.result, Ok(()), "{label}: not restarted"),
        Expect::Refused | Expect::QueueKept => {
            assert!(outcome.delivered, "{label}: not reached");
            assert!(
                outcome.result.is_err(),
                "{label}: the refusal went unreported"
            );
        }
        Expect::Failed => {
            if outcome.delivered && !may_pass(call, calls) {
                assert!(
                    outcome.result.is_err(),
                    "{label}: the failure was swallowed"
                );
            }
        }
    }
}
