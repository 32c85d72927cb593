//! ROCr's side of the comparison: the same paths as aqueduct's, through `libhsa-runtime64`
//! loaded at run time; also the side of an HSA library measured in ROCr's place
//! (`--rocr-library`), which takes the same calls. It runs in a child process of `aqueduct bench` (see `compare`), never
//! beside aqueduct in one process: a real kernel keeps one KFD process per address space and
//! lets a process acquire a GPU's VM only once, so two drivers cannot both bind.

mod hsa;

use std::ffi::{CString, c_void};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use aqueduct::aql::builder::{DispatchBuilder, DispatchLimits};
use aqueduct::aql::packet::FenceScope;
use zerocopy::IntoBytes;

use super::figures::{Measured, Outcome, Samples};
use super::watch::step;
use hsa::{Handle, Hsa};

/// Ring size of every queue both sides create.
const QUEUE_PACKETS: u32 = 256;
/// How long one dispatch may take before the child gives up on ROCr.
const DISPATCH_DEADLINE: Duration = Duration::from_secs(30);

/// Why ROCr 5.2's child can stall for good in `hsa_queue_destroy` (issue 27), said after the
/// stall. Every queue's `queue_inactive_signal` is fired through one auto-reset KFD event
/// (`AqlQueue::queue_event_`); the async-events thread sleeps on it for the utility queue's
/// signal while `~AqlQueue` sleeps on it for the handler of the queue being destroyed. When the
/// destroying thread is preempted between its look at the signal and its WAIT_EVENTS, the
/// handler's SET_EVENT finds no waiter, the async thread's next WAIT_EVENTS consumes the set
/// (auto-reset), and the destroying thread then sleeps with nothing left to wake it. The kernel
/// does the same (`kfd_events.c`; the simulator replays it in
/// sim/tests/shared_event_wakeups.rs); ROCr closed the hole in 2023 with event ages, which
/// 5.2's thunk does not pass.
pub const QUEUE_DESTROY_STALL: &str = " (ROCr 5.2's own lost wake-up: its async-events thread \
     consumed the auto-reset queue event meant for the destroying thread; the kernel allows it, \
     see sim/tests/shared_event_wakeups.rs)";

/// Measure ROCr from `library`: one cold `hsa_init` and its `hsa_shut_down`, and with
/// `iterations > 0` also queue creation, dispatch round trips and `iterations` reinit cycles.
pub fn measure(library: &str, iterations: usize) -> Outcome {
    let hsa = match Hsa::load(library) {
        Ok(hsa) => hsa,
        Err(error) => return Outcome::NotInstalled(error.to_string()),
    };
    let mut samples = Samples::default();
    step("hsa_init");
    let started = Instant::now();
    // SAFETY: `hsa_init` takes no arguments; it may be called at any time.
    let status = unsafe { (hsa.init)() };
    samples.init.push(micros(started.elapsed()));
    if let Err(why) = hsa.check("hsa_init", status) {
        return Outcome::Unavailable(format!("the runtime has no GPU to see: {why}"));
    }
    let result = measure_initialised(&hsa, iterations, &mut samples);
    step("hsa_shut_down");
    let started = Instant::now();
    // SAFETY: paired with the successful `hsa_init` above; nothing of ROCr's is used after.
    let status = unsafe { (hsa.shut_down)() };
    samples.shutdown.push(micros(started.elapsed()));
    let detail = match result.and_then(|agent| hsa.check("hsa_shut_down", status).map(|()| agent)) {
        Ok(agent) => agent,
        Err(why) => return Outcome::Unavailable(why),
    };
    for i in 1..=iterations {
        step(&format!(
            "hsa_init and hsa_shut_down again ({i} of {iterations})"
        ));
        let started = Instant::now();
        // SAFETY: as above: after a completed `hsa_shut_down`, a new `hsa_init`.
        let status = unsafe { (hsa.init)() };
        samples.reinit.push(micros(started.elapsed()));
        if let Err(why) = hsa.check("hsa_init (again)", status) {
            return Outcome::Unavailable(why);
        }
        let started = Instant::now();
        // SAFETY: paired with the `hsa_init` just above.
        let status = unsafe { (hsa.shut_down)() };
        samples.shutdown.push(micros(started.elapsed()));
        if let Err(why) = hsa.check("hsa_shut_down", status) {
            return Outcome::Unavailable(why);
        }
    }
    Outcome::Measured(Measured {
        samples,
        detail: format!("{} on {detail}", loaded_library(library)),
        // Taken while the library is still loaded (`hsa` is dropped after this).
        loaded: runtime_files(),
    })
}

/// The paths that need an initialised runtime; returns the GPU agent's name.
fn measure_initialised(
    hsa: &Hsa,
    iterations: usize,
    samples: &mut Samples,
) -> Result<String, String> {
    let (gpu, name) = first_gpu(hsa)?;
    if iterations == 0 {
        return Ok(name);
    }
    let code = super::empty_kernel(&name)?;
    for i in 1..=iterations {
        step(&format!("hsa_queue_create ({i} of {iterations})"));
        let started = Instant::now();
        let queue = create_queue(hsa, gpu)?;
        samples.queue_create.push(micros(started.elapsed()));
        step(&format!("hsa_queue_destroy ({i} of {iterations})"));
        let started = Instant::now();
        // SAFETY: `queue` came from `hsa_queue_create` and is destroyed once.
        let status = unsafe { (hsa.queue_destroy)(queue.as_ptr()) };
        samples.queue_destroy.push(micros(started.elapsed()));
        hsa.check("hsa_queue_destroy", status)?;
    }

    step("load the empty kernel");
    let limits = dispatch_limits(hsa, gpu, &name)?;
    let (reader, executable, kernel_object) = load_empty(hsa, gpu, code)?;
    let queue = create_queue(hsa, gpu)?;
    let mut done = Handle::default();
    // SAFETY: `done` is valid for the write; no consumers list.
    hsa.check("hsa_signal_create", unsafe {
        (hsa.signal_create)(1, 0, std::ptr::null(), &raw mut done)
    })?;
    let mut result = Ok(());
    for i in 1..=iterations {
        step(&format!("dispatch ({i} of {iterations})"));
        let spin = dispatch(hsa, queue, &limits, kernel_object, done, Wait::Spin);
        let sleep = spin.and_then(|spin| {
            samples.dispatch_spin.push(spin);
            dispatch(hsa, queue, &limits, kernel_object, done, Wait::Blocked)
        });
        match sleep {
            Ok(sleep) => samples.dispatch_event_wait.push(sleep),
            Err(why) => {
                result = Err(why);
                break;
            }
        }
    }
    step("hsa_queue_destroy (the dispatch queue) and teardown");
    // SAFETY: each object was created above, is no longer in use (every dispatch completed or
    // the runtime is about to shut down) and is destroyed once.
    unsafe {
        (hsa.signal_destroy)(done);
        (hsa.queue_destroy)(queue.as_ptr());
        (hsa.executable_destroy)(executable);
        (hsa.code_object_reader_destroy)(reader);
    }
    result.map(|()| name)
}

/// What `first_gpu`'s agent callback is handed.
struct GpuSearch<'a> {
    hsa: &'a Hsa,
    found: Option<Handle>,
}

/// The first GPU agent and its name (`gfx90a`).
fn first_gpu(hsa: &Hsa) -> Result<(Handle, String), String> {
    unsafe extern "C" fn find_gpu(agent: Handle, data: *mut c_void) -> hsa::Status {
        // SAFETY: `data` is the `GpuSearch` that `first_gpu` passed, alive and not otherwise
        // borrowed while `hsa_iterate_agents` runs.
        let search = unsafe { &mut *data.cast::<GpuSearch<'_>>() };
        let mut device = 0u32;
        // SAFETY: `agent` is the runtime's; `device` is valid for the 4-byte write of
        // `hsa_device_type_t`. ROCr's functions may be called from its own callbacks.
        let status = unsafe {
            (search.hsa.agent_get_info)(agent, hsa::AGENT_INFO_DEVICE, (&raw mut device).cast())
        };
        if status == hsa::STATUS_SUCCESS && device == hsa::DEVICE_TYPE_GPU {
            search.found = Some(agent);
            return hsa::STATUS_INFO_BREAK;
        }
        hsa::STATUS_SUCCESS
    }
    let mut search = GpuSearch { hsa, found: None };
    // SAFETY: `find_gpu` has the callback's signature and reads `data` as the `GpuSearch`
    // given, which outlives the call.
    let status = unsafe { (hsa.iterate_agents)(find_gpu, (&raw mut search).cast()) };
    if status != hsa::STATUS_INFO_BREAK {
        hsa.check("hsa_iterate_agents", status)?;
    }
    let gpu = search.found.ok_or("the runtime found no GPU agent")?;
    let mut name = [0u8; 64];
    // SAFETY: `HSA_AGENT_INFO_NAME` writes a `char[64]`; `name` is 64 bytes.
    hsa.check("hsa_agent_get_info(NAME)", unsafe {
        (hsa.agent_get_info)(gpu, hsa::AGENT_INFO_NAME, name.as_mut_ptr().cast())
    })?;
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Ok((gpu, String::from_utf8_lossy(&name[..end]).into_owned()))
}

/// What a dispatch on the agent named `name` (its processor, `gfx90a`) may ask for: the
/// work-group limit ROCr reports, the private-segment and LDS limits of its ISA generation.
fn dispatch_limits(hsa: &Hsa, gpu: Handle, name: &str) -> Result<DispatchLimits, String> {
    let major = aqueduct::loader::target::Processor::from_name(name)
        .map(|p| u32::from(p.version.0))
        .ok_or_else(|| format!("ROCr's GPU agent is {name:?}, not a known processor"))?;
    let mut max_workgroup_size = 0u32;
    // SAFETY: `HSA_AGENT_INFO_WORKGROUP_MAX_SIZE` writes a `uint32_t`.
    hsa.check("hsa_agent_get_info(WORKGROUP_MAX_SIZE)", unsafe {
        (hsa.agent_get_info)(
            gpu,
            hsa::AGENT_INFO_WORKGROUP_MAX_SIZE,
            (&raw mut max_workgroup_size).cast(),
        )
    })?;
    Ok(DispatchLimits {
        max_workgroup_size,
        ..DispatchLimits::for_gfx_major(major)
    })
}

fn create_queue(hsa: &Hsa, gpu: Handle) -> Result<NonNull<hsa::Queue>, String> {
    let mut queue = std::ptr::null_mut();
    // SAFETY: `queue` is valid for the write; no callback; `UINT32_MAX` segment sizes ask for
    // the runtime's defaults.
    let status = unsafe {
        (hsa.queue_create)(
            gpu,
            QUEUE_PACKETS,
            hsa::QUEUE_TYPE_SINGLE,
            None,
            std::ptr::null_mut(),
            u32::MAX,
            u32::MAX,
            &raw mut queue,
        )
    };
    hsa.check("hsa_queue_create", status)?;
    NonNull::new(queue).ok_or_else(|| "hsa_queue_create returned no queue".to_owned())
}

/// Load the empty kernel: (reader, executable, kernel object).
fn load_empty(hsa: &Hsa, gpu: Handle, code: &[u8]) -> Result<(Handle, Handle, u64), String> {
    let (mut reader, mut executable, mut symbol) = Default::default();
    let mut kernel_object = 0u64;
    let name = CString::new("empty.kd").map_err(|e| e.to_string())?;
    // SAFETY: `code` outlives the reader (it is a static); every out-pointer is valid for its
    // write; null options strings mean none.
    unsafe {
        hsa.check(
            "hsa_code_object_reader_create_from_memory",
            (hsa.code_object_reader_create_from_memory)(
                code.as_ptr().cast(),
                code.len(),
                &raw mut reader,
            ),
        )?;
        hsa.check(
            "hsa_executable_create_alt",
            (hsa.executable_create_alt)(
                hsa::PROFILE_FULL,
                hsa::FLOAT_ROUNDING_MODE_DEFAULT,
                std::ptr::null(),
                &raw mut executable,
            ),
        )?;
        hsa.check(
            "hsa_executable_load_agent_code_object",
            (hsa.executable_load_agent_code_object)(
                executable,
                gpu,
                reader,
                std::ptr::null(),
                std::ptr::null_mut(),
            ),
        )?;
        hsa.check(
            "hsa_executable_freeze",
            (hsa.executable_freeze)(executable, std::ptr::null()),
        )?;
        hsa.check(
            "hsa_executable_get_symbol_by_name(empty.kd)",
            (hsa.executable_get_symbol_by_name)(
                executable,
                name.as_ptr(),
                &raw const gpu,
                &raw mut symbol,
            ),
        )?;
        hsa.check(
            "hsa_executable_symbol_get_info(KERNEL_OBJECT)",
            (hsa.executable_symbol_get_info)(
                symbol,
                hsa::SYMBOL_INFO_KERNEL_OBJECT,
                (&raw mut kernel_object).cast(),
            ),
        )?;
    }
    Ok((reader, executable, kernel_object))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// `hsa_signal_load_scacquire` in a loop.
    Spin,
    /// `hsa_signal_wait_scacquire` with `HSA_WAIT_STATE_BLOCKED`.
    Blocked,
}

/// One dispatch of the empty kernel (one work-item, no kernarg segment: its kernarg size is 0)
/// on `queue`, completion on `done`; returns the round trip in µs.
fn dispatch(
    hsa: &Hsa,
    queue: NonNull<hsa::Queue>,
    limits: &DispatchLimits,
    kernel_object: u64,
    done: Handle,
    wait: Wait,
) -> Result<f64, String> {
    let packet = DispatchBuilder::new(kernel_object, 0)
        .completion_signal(done.handle)
        .barrier(true)
        .acquire(FenceScope::System)
        .release(FenceScope::System)
        .build(limits)
        .map_err(|e| e.to_string())?;
    let bytes = packet.as_bytes();
    debug_assert_eq!(bytes.len(), aqueduct::aql::packet::PACKET_SIZE);
    // SAFETY: `done` is a live signal.
    unsafe { (hsa.signal_store_relaxed)(done, 1) };
    let started = Instant::now();
    // SAFETY: `queue` is live until the caller destroys it; ROCr fills in its fields.
    let queue = unsafe { queue.as_ref() };
    // SAFETY: `queue` is ROCr's; reserving one slot is what a producer does.
    let index = unsafe { (hsa.queue_add_write_index_relaxed)(queue, 1) };
    let slot = (index % u64::from(queue.size)) as usize;
    // SAFETY: the ring holds `size` 64-byte packets at `base_address`; the slot at `index` is
    // ours (we are the only producer and wait for each dispatch, so the ring never fills). The
    // body is written first and the first word (header and setup) published last with a
    // release store, as the AQL protocol requires; the word is 4-byte aligned in the 64-byte
    // aligned ring.
    unsafe {
        let target = queue
            .base_address
            .cast::<aqueduct::aql::packet::KernelDispatchPacket>()
            .add(slot);
        std::ptr::copy_nonoverlapping(
            bytes[4..].as_ptr(),
            target.cast::<u8>().add(4),
            bytes.len() - 4,
        );
        let first = u32::from(packet.header) | (u32::from(packet.setup) << 16);
        AtomicU32::from_ptr(target.cast::<u32>()).store(first, Ordering::Release);
        (hsa.signal_store_screlease)(queue.doorbell_signal, index as i64);
    }
    loop {
        // SAFETY: `done` is a live signal.
        let value = unsafe {
            match wait {
                Wait::Spin => (hsa.signal_load_scacquire)(done),
                // A bounded hint (in the runtime's timestamp ticks; ROCr may return early),
                // so that the deadline below is checked.
                Wait::Blocked => (hsa.signal_wait_scacquire)(
                    done,
                    hsa::SIGNAL_CONDITION_LT,
                    1,
                    1_000_000_000,
                    hsa::WAIT_STATE_BLOCKED,
                ),
            }
        };
        if value == 0 {
            return Ok(micros(started.elapsed()));
        }
        if started.elapsed() > DISPATCH_DEADLINE {
            return Err(format!(
                "the dispatch of the empty kernel did not complete within {DISPATCH_DEADLINE:?}"
            ));
        }
        if wait == Wait::Spin {
            std::hint::spin_loop();
        }
    }
}

/// The file the dynamic loader chose for `library`, from this process' mappings.
fn loaded_library(library: &str) -> String {
    let stem = std::path::Path::new(library)
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split(".so").next())
        .unwrap_or(library);
    std::fs::read_to_string("/proc/self/maps")
        .ok()
        .and_then(|maps| {
            maps.lines()
                .filter_map(|line| line.split_whitespace().nth(5))
                .find(|path| {
                    std::path::Path::new(path)
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(stem))
                })
                .map(str::to_owned)
        })
        .unwrap_or_else(|| library.to_owned())
}

/// The HSA runtime files mapped in this process, from `/proc/self/maps`: every
/// `libhsa-runtime64*` (ROCr, or the library measured in its place) and `libhsakmt*` (ROCr's
/// thunk, which aqueduct's library never loads), each once, as the dynamic loader resolved
/// them. Empty where the maps cannot be read.
pub fn runtime_files() -> Vec<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    let mut files: Vec<String> = Vec::new();
    for path in maps
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
    {
        let name = std::path::Path::new(path)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let runtime = name.starts_with("libhsa-runtime64") || name.starts_with("libhsakmt");
        if runtime && !files.iter().any(|f| f == path) {
            files.push(path.to_owned());
        }
    }
    files
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}
