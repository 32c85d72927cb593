//! GPU programs: run a whole program's `main` on the GPU, as LLVM's `amdhsa-loader` does,
//! with no ROCm installed.
//!
//! A GPU program is one AMDGPU code object linked with LLVM libc's GPU start code: kernels
//! `_begin` (global constructors), `_start` (every launched thread calls `main`) and `_end`
//! (`atexit` handlers, then `exit`), and an `__llvm_rpc_client` object through which the GPU
//! asks the host for services. [`Program::run`] loads it, places `argv` and `envp` in
//! GPU-visible memory, sets the device globals, runs the three kernels (`_begin` and `_end`
//! on one thread, `_start` on the shape asked for), serves the program's host calls on a
//! thread of its own while it runs, and returns its exit code, or a [`ProgramError`]
//! (memory fault with its address, illegal instruction, timeout, `abort()`).
//!
//! - `image`: the kernels and globals of a program;
//! - `arguments`: `argv` and `envp` in GPU-visible memory;
//! - `rpc`: the host side of LLVM libc's RPC protocol (layout, opcodes, mailbox, ports, the
//!   server thread and its idle policy);
//! - `run`: the launches and what ends a run;
//! - `output`: where the program's stdout and stderr go;
//! - `error`: [`ProgramError`].
//!
//! Host services: writes to stdout and stderr (each lane's string written whole), `exit`,
//! `abort`, `malloc` and `free` (the GPU's device memory; whatever the program leaks is freed
//! when it ends). Any other call stops the program with
//! [`ProgramError::UnhandledOpcode`] rather than leaving it waiting. The server polls with
//! backoff ([`rpc::wait`]): it polls without sleeping for 200 µs after a call, so calls
//! that keep coming are answered at once, and sleeps up to 2 ms when idle.
//!
//! ```
//! # if aqueduct::backend::choose().ok() != Some(aqueduct::backend::BackendChoice::Simulator) { return Ok(()); }
//! use aqueduct::program::{Output, Program, RunOptions};
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/bin/programs/gfx90a/hello");
//! let device = aqueduct::Device::open()?;
//! let gpu = &device.gpus()?[0];
//! let program = Program::new(&device, gpu, std::fs::read(path).expect("a program"))?;
//! let exit = program.run(&RunOptions {
//!     args: vec![b"hello".to_vec()],
//!     stdout: Output::Capture,
//!     ..RunOptions::default()
//! })?;
//! assert_eq!(exit.code, 0);
//! assert_eq!(exit.stdout, b"hello from the GPU\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod arguments;
mod error;
mod image;
mod output;
pub mod rpc;
mod run;

use std::time::Duration;

pub use error::ProgramError;
pub use image::{CLOCK_FREQUENCY_SYMBOL, RPC_CLIENT_SYMBOL};
pub use output::Output;
pub use rpc::layout::ProtocolVersion;

use crate::{Device, GpuAgent, LoadOptions};
use image::Image;

/// A GPU program for one GPU. Each run loads the image afresh (globals start as the image
/// has them), as a process would.
#[derive(Debug)]
pub struct Program {
    device: Device,
    gpu: GpuAgent,
    code: Vec<u8>,
    protocol: ProtocolVersion,
}

/// How to run a program.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// `argv`, `argv[0]` included (LLVM's loader passes the program's path there).
    pub args: Vec<Vec<u8>>,
    /// `envp`: `NAME=value` strings.
    pub env: Vec<Vec<u8>>,
    /// Threads per block of `_start`, per dimension (default 1 × 1 × 1, as LLVM's loader).
    pub threads: [u32; 3],
    /// Blocks of `_start`, per dimension (default 1 × 1 × 1).
    pub blocks: [u32; 3],
    /// How long the whole run may take; `None`: no limit.
    pub timeout: Option<Duration>,
    /// Where the program's stdout goes.
    pub stdout: Output,
    /// Where the program's stderr goes.
    pub stderr: Output,
    /// RPC ports; `None`: the protocol's maximum (4096, or 16384 for the doorbell
    /// generation), as LLVM's loader.
    pub ports: Option<u32>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            args: Vec::new(),
            env: Vec::new(),
            threads: [1, 1, 1],
            blocks: [1, 1, 1],
            timeout: None,
            stdout: Output::Inherit,
            stderr: Output::Inherit,
            ports: None,
        }
    }
}

/// How a program ended: its exit code, and its output where it was captured.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Exit {
    /// `exit`'s status, or `main`'s return value (ORed over every thread).
    pub code: i32,
    /// Captured stdout ([`Output::Capture`]), else empty.
    pub stdout: Vec<u8>,
    /// Captured stderr ([`Output::Capture`]), else empty.
    pub stderr: Vec<u8>,
    /// CPU time the RPC server thread used over the run (serving calls and polling
    /// between them), where the system reports it.
    pub server_cpu_time: Option<Duration>,
}

impl Program {
    /// Check that `code` is a GPU program that runs on `gpu` (it is loaded once to see).
    pub fn new(device: &Device, gpu: &GpuAgent, code: Vec<u8>) -> Result<Self, ProgramError> {
        let image = Self::load(device, gpu, &code)?;
        Ok(Self {
            device: device.clone(),
            gpu: gpu.clone(),
            code,
            protocol: image.protocol,
        })
    }

    /// The RPC protocol generation the program speaks.
    pub fn protocol(&self) -> ProtocolVersion {
        self.protocol
    }

    /// Run the program to its end.
    pub fn run(&self, options: &RunOptions) -> Result<Exit, ProgramError> {
        let image = Self::load(&self.device, &self.gpu, &self.code)?;
        run::run(&self.device, &self.gpu, &image, options)
    }

    fn load(device: &Device, gpu: &GpuAgent, code: &[u8]) -> Result<Image, ProgramError> {
        // A load of its own (its globals are the run's), and no `init`/`fini` kernels: the
        // program's `_begin` runs its constructors.
        let options = LoadOptions::new().private().without_init_fini_kernels();
        let executable = device.load_with(gpu, code, &options)?;
        Image::find(executable)
    }
}
