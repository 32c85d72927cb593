//! A plugin that embeds aqueduct: `tests/dlopen_unload.rs` loads it with `dlopen`, calls
//! [`aqueduct_fixture_run`] and unloads it, many times in one process.
//!
//! One call does what a plugin's user would: open the device, load the committed `gfx90a`
//! `atomic_counter` kernel, allocate, create a queue, dispatch, wait, check the result, run the
//! committed `return_value` GPU program (which starts and stops the program's RPC server
//! thread) and shut the device down. No thread of aqueduct's outlives the call, and nothing is left on the
//! caller's thread that would keep the library mapped after `dlclose` (see the "Loading
//! aqueduct as a plugin" section of the README).

#![deny(unsafe_op_in_unsafe_fn)]

use std::time::Duration;

use aqueduct::program::{Output, Program, RunOptions};
use aqueduct::{Arg, Device, Geometry, GpuAgent, MemoryLocation, QueueOptions};

/// The committed code object: with a one-work-item grid, `atomic_counter(counter, old, n)`
/// adds `n` to `counter[0]` and stores the old value to `old[0]`.
static ATOMIC_COUNTER: &[u8] = include_bytes!("../../kernels/bin/gfx90a/atomic_counter.co5");

/// The committed GPU program `return_value`: `main` returns 42; `_end`'s `exit` is one host
/// call.
static RETURN_VALUE: &[u8] = include_bytes!("../../kernels/bin/programs/gfx90a/return_value");

/// How long one dispatch may take on the simulator before the call reports a hang.
const DISPATCH_PATIENCE: Duration = Duration::from_secs(30);

/// Open the device, run one `atomic_counter` dispatch, check its result, shut the device down.
///
/// Returns 0 on success. Otherwise returns a non-zero code and writes why (UTF-8, truncated to
/// fit, NUL-terminated) into `message[..len]` when `message` is not null.
///
/// # Safety
///
/// `message` is null, or valid for writes of `len` bytes for the duration of the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aqueduct_fixture_run(message: *mut u8, len: usize) -> i32 {
    let failure = match std::panic::catch_unwind(run) {
        Ok(Ok(())) => return 0,
        Ok(Err(why)) => why,
        Err(_) => "panicked (the panic message went to stderr)".to_owned(),
    };
    if !message.is_null() && len > 0 {
        let bytes = failure.as_bytes();
        let n = bytes.len().min(len - 1);
        // SAFETY: the caller guarantees `message` is valid for `len` bytes of writes; we write
        // `n + 1 <= len` bytes, and `bytes` (our own string) cannot overlap the caller's buffer.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), message, n);
            *message.add(n) = 0;
        }
    }
    1
}

/// One open → load → allocate → queue → dispatch → check → shutdown, every failure as text.
fn run() -> Result<(), String> {
    let device = Device::open().map_err(|e| format!("opening the device: {e}"))?;
    let result = first_gpu(&device).and_then(|gpu| {
        dispatch_once(&device, &gpu)?;
        run_program(&device, &gpu)
    });
    // Shut down even when the dispatch failed: nothing may outlive the call.
    let shutdown = device.shutdown().map_err(|e| format!("shutting down: {e}"));
    result.and(shutdown)
}

fn first_gpu(device: &Device) -> Result<GpuAgent, String> {
    device
        .gpus()
        .map_err(|e| e.to_string())?
        .first()
        .cloned()
        .ok_or_else(|| "the device has no GPU".to_owned())
}

/// Run `return_value` through `aqueduct::program` (its RPC server thread starts and ends
/// within the call) and check its exit code.
fn run_program(device: &Device, gpu: &GpuAgent) -> Result<(), String> {
    let program = Program::new(device, gpu, RETURN_VALUE.to_vec())
        .map_err(|e| format!("loading return_value: {e}"))?;
    let exit = program
        .run(&RunOptions {
            args: vec![b"return_value".to_vec()],
            stdout: Output::Capture,
            stderr: Output::Capture,
            timeout: Some(DISPATCH_PATIENCE),
            ..RunOptions::default()
        })
        .map_err(|e| format!("running return_value: {e}"))?;
    if exit.code == 42 {
        Ok(())
    } else {
        Err(format!(
            "return_value exited with {}, expected 42 (stderr: {})",
            exit.code,
            String::from_utf8_lossy(&exit.stderr)
        ))
    }
}

/// `atomic_counter` once through `Queue::launch` (kernarg segment, completion signal and
/// queue all torn down with the device).
fn dispatch_once(device: &Device, gpu: &GpuAgent) -> Result<(), String> {
    let step = |what: &str, e: aqueduct::Error| format!("{what}: {e}");
    let executable = device
        .load_code_object(gpu, ATOMIC_COUNTER)
        .map_err(|e| step("loading atomic_counter", e))?;
    let kernel = executable
        .kernel("atomic_counter")
        .map_err(|e| step("finding atomic_counter", e))?;
    // counter[0] starts at 41, old[0] at a value the kernel must overwrite.
    let memory = device
        .alloc(gpu, MemoryLocation::HostFine, 8)
        .map_err(|e| step("allocating the counter", e))?;
    memory
        .write(0, &[41u32, 0xdead_beef])
        .map_err(|e| step("writing the counter", e))?;
    let queue = device
        .create_queue(
            gpu,
            &QueueOptions {
                packets: 64,
                ..QueueOptions::default()
            },
        )
        .map_err(|e| step("creating the queue", e))?;
    queue
        .launch(
            &kernel,
            &Geometry::d1(1, 1),
            &[
                Arg::ptr(memory.gpu_address()),
                Arg::ptr(memory.gpu_address() + 4),
                Arg::u32(1),
            ],
        )
        .and_then(|launch| launch.wait(Some(DISPATCH_PATIENCE)))
        .map_err(|e| step("launching atomic_counter", e))?;
    let result = memory
        .to_vec::<u32>()
        .map_err(|e| step("reading the counter", e))?;
    if result == [42, 41] {
        Ok(())
    } else {
        Err(format!(
            "atomic_counter left counter, old = {result:?}, expected [42, 41]"
        ))
    }
}
