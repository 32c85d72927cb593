//! `aqueduct exec`: run a GPU program (an image linked with LLVM libc's GPU start code) as
//! LLVM's `amdhsa-loader` does: its stdout and stderr on ours, our environment as its
//! `envp`, its exit code as ours.
//!
//! Everything a library user would need is `aqueduct::program`'s; this module turns the
//! command line into a [`RunOptions`] and the outcome into an exit status.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use aqueduct::code_object_source::CodeObjectSource;

use crate::flags::{dims, pick_gpu};
use aqueduct::Device;
use aqueduct::program::{Output, Program, ProgramError, RunOptions};

type Error = Box<dyn std::error::Error>;

/// Exit status when the program faulted, executed an illegal instruction or called
/// `abort()` (what a process killed by SIGABRT reports to a shell, as LLVM's loader's
/// process does when the GPU faults or aborts).
pub const STATUS_CRASHED: u8 = 134;
/// Exit status when `--timeout` ran out (as `timeout(1)`).
pub const STATUS_TIMED_OUT: u8 = 124;
/// Exit status when aqueduct itself failed (bad input, no device, unserved host call).
pub const STATUS_FAILED: u8 = 125;

/// What `aqueduct exec` was asked to do.
#[derive(Debug, clap::Args)]
pub struct ExecRequest {
    /// Threads per block of `_start`: X, X,Y or X,Y,Z.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub threads: Vec<u32>,
    /// Blocks of `_start`: X, X,Y or X,Y,Z.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub blocks: Vec<u32>,
    /// Stop the program after this many seconds (default: no limit).
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Run on the GPU with this target (e.g. gfx942), not the first.
    #[arg(long)]
    pub target: Option<String>,
    /// The GPU program (a code object, or an offload bundle holding one per target).
    pub program: PathBuf,
    /// The program's arguments (argv[1..]; argv[0] is PROGRAM).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<OsString>,
}

/// Run the program; its exit code becomes ours.
pub fn run(request: &ExecRequest) -> ExitCode {
    match execute(request) {
        Ok(code) => ExitCode::from(code as u8),
        Err(error) => {
            let status = match error.downcast_ref::<ProgramError>() {
                Some(
                    ProgramError::MemoryFault { .. }
                    | ProgramError::IllegalInstruction
                    | ProgramError::Aborted,
                ) => STATUS_CRASHED,
                Some(ProgramError::Timeout { .. }) => STATUS_TIMED_OUT,
                _ => STATUS_FAILED,
            };
            eprintln!("aqueduct exec: {}: {error}", request.program.display());
            ExitCode::from(status)
        }
    }
}

fn execute(request: &ExecRequest) -> Result<i32, Error> {
    let timeout = match request.timeout {
        None => None,
        Some(seconds) if seconds.is_finite() && seconds > 0.0 => {
            Some(Duration::from_secs_f64(seconds))
        }
        Some(seconds) => {
            return Err(format!("--timeout {seconds}: give a positive number of seconds").into());
        }
    };
    let device = Device::open()?;
    let gpu = pick_gpu(&device, request.target.as_deref())?;
    let agent_target = gpu.target_id;
    let source = CodeObjectSource::open(&request.program)?;
    let selected = source.select(&agent_target)?;
    let program = Program::new(&device, &gpu, selected.bytes.to_vec())?;

    let mut args = vec![request.program.as_os_str().as_bytes().to_vec()];
    args.extend(request.args.iter().map(|a| a.as_bytes().to_vec()));
    let env = std::env::vars_os()
        .map(|(name, value)| {
            let mut entry = name.as_bytes().to_vec();
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            entry
        })
        .collect();
    let exit = program.run(&RunOptions {
        args,
        env,
        threads: dims(&request.threads, "threads")?,
        blocks: dims(&request.blocks, "blocks")?,
        timeout,
        stdout: Output::Inherit,
        stderr: Output::Inherit,
        ports: None,
    })?;
    Ok(exit.code)
}
