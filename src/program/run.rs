//! One run of a program: the launches of `_begin`, `_start` and `_end`, with the RPC server
//! serving calls around them, and what ends the run.

use std::time::{Duration, Instant};

use super::arguments::Arguments;
use super::error::ProgramError;
use super::image::{CLOCK_FREQUENCY_SYMBOL, Image, RPC_CLIENT_SYMBOL};
use super::output::Sink;
use super::rpc::layout::Layout;
use super::rpc::mailbox::Mailbox;
use super::rpc::server::{Context, Server, Terminal};
use super::{Exit, RunOptions};
use crate::kernarg::{Arg, Geometry};
use crate::{
    Device, Error, GpuAgent, Kernel, LaunchOptions, MemoryLocation, Queue, QueueError, QueueOptions,
};

/// Private bytes per work-item for kernels with a dynamic call stack: LLVM's loader gives
/// them 16 KiB in all.
const STACK_BYTES: u32 = 16 * 1024;

/// Run a loaded image to its end.
pub fn run(
    device: &Device,
    gpu: &GpuAgent,
    image: &Image,
    options: &RunOptions,
) -> Result<Exit, ProgramError> {
    let deadline = options.timeout.and_then(|t| Instant::now().checked_add(t));
    let queue = device.create_queue(gpu, &QueueOptions::default())?;
    let arguments = Arguments::place(device, gpu, &options.args, &options.env)?;
    // The return slot: LLVM's loader puts it in device memory; fine-grained host memory
    // works on every GPU, large BAR or not, and the GPU's atomic OR reaches it the same way.
    let ret = device.alloc(gpu, MemoryLocation::HostFine, 4)?;

    let protocol = image.protocol;
    let ports = options
        .ports
        .unwrap_or(protocol.max_ports())
        .clamp(1, protocol.max_ports());
    let layout = Layout {
        version: protocol,
        ports,
        lanes: image.lanes(),
    };
    // Zeroed: for the doorbell generation a null `value` tells the client not to ring it.
    let rpc = device.alloc(gpu, MemoryLocation::HostFine, layout.bytes() as usize)?;
    let client = layout.client_object(rpc.gpu_address());
    image
        .executable
        .write_variable(RPC_CLIENT_SYMBOL, 0, &client)?;
    if image.executable.variable(CLOCK_FREQUENCY_SYMBOL).is_ok() {
        image.executable.write_variable(
            CLOCK_FREQUENCY_SYMBOL,
            0,
            &gpu.timestamp_frequency_hz.to_le_bytes(),
        )?;
    }

    let server = Server::start(
        Context {
            mailbox: Mailbox::new(rpc, layout)?,
            device: device.clone(),
            gpu: gpu.clone(),
            queue: queue.clone(),
        },
        Sink::new(options.stdout, false),
        Sink::new(options.stderr, true),
    )
    .map_err(|e| Error::Unsupported(format!("starting the RPC server thread: {e}")))?;

    let run = Run {
        queue: &queue,
        server: &server,
        deadline,
        timeout: options.timeout,
    };
    let result = run.launches(image, &arguments, &ret, options);
    let (stdout, stderr, server_cpu_time) = server.stop();
    let code = result?;
    Ok(Exit {
        code,
        stdout,
        stderr,
        server_cpu_time,
    })
}

struct Run<'a> {
    queue: &'a Queue,
    server: &'a Server,
    deadline: Option<Instant>,
    timeout: Option<Duration>,
}

/// What one launch came to.
enum Step {
    /// It completed; go on.
    Completed,
    /// The program ended (an `exit`) with this code.
    Exited(i32),
}

impl Run<'_> {
    fn launches(
        &self,
        image: &Image,
        arguments: &Arguments,
        ret: &crate::Buffer,
        options: &RunOptions,
    ) -> Result<i32, ProgramError> {
        let (argc, argv, envp) = (
            Arg::i32(arguments.argc()),
            Arg::ptr(arguments.argv()),
            Arg::ptr(arguments.envp()),
        );
        let one = Geometry::d1(1, 1);
        if let Step::Exited(code) = self.launch(&image.begin, &one, &[argc, argv, envp])? {
            return Ok(code);
        }
        let [tx, ty, tz] = options.threads.map(|t| t.max(1));
        let [bx, by, bz] = options.blocks.map(|b| b.max(1));
        let grid = |t: u32, b: u32| {
            t.checked_mul(b).ok_or_else(|| {
                ProgramError::Device(Error::InvalidArgument(format!(
                    "{b} blocks of {t} threads overflow a grid dimension"
                )))
            })
        };
        let geometry = if ty * tz == 1 && by * bz == 1 {
            Geometry::d1(grid(tx, bx)?, tx)
        } else {
            Geometry::d3([grid(tx, bx)?, grid(ty, by)?, grid(tz, bz)?], [tx, ty, tz])
        };
        let step = self.launch(
            &image.start,
            &geometry,
            &[argc, argv, envp, Arg::buffer(ret)],
        )?;
        if let Step::Exited(code) = step {
            return Ok(code);
        }
        let mut value = [0i32];
        ret.read(0, &mut value)?;
        match self.launch(&image.end, &one, &[Arg::i32(value[0])])? {
            Step::Exited(code) => Ok(code),
            // `_end` always calls `exit`; an image whose `_end` does not still ends.
            Step::Completed => Ok(value[0]),
        }
    }

    fn launch(
        &self,
        kernel: &Kernel,
        geometry: &Geometry,
        args: &[Arg<'_>],
    ) -> Result<Step, ProgramError> {
        let launch = self.queue.launch_with(
            kernel,
            geometry,
            args,
            &LaunchOptions {
                stack_bytes: Some(STACK_BYTES.saturating_sub(kernel.private_segment_size)),
                ..LaunchOptions::default()
            },
        )?;
        let waited = launch.wait(self.remaining());
        if let Some(step) = Self::terminal(self.server.terminal())? {
            return Ok(step);
        }
        match waited {
            Ok(_) => match self.server.drain(self.deadline) {
                Some(terminal) => {
                    Self::terminal(Some(terminal)).map(|s| s.unwrap_or(Step::Completed))
                }
                None => Ok(Step::Completed),
            },
            Err(Error::Timeout { .. }) => {
                let _ = self.queue.abort();
                Err(ProgramError::Timeout {
                    after: self.timeout.unwrap_or_default(),
                })
            }
            Err(error) => {
                // The server may be finishing a call that explains the end (an exit racing
                // the queue's abort): give it a moment.
                if let Some(step) = Self::terminal(
                    self.server
                        .drain(Some(Instant::now() + Duration::from_millis(100))),
                )? {
                    return Ok(step);
                }
                Err(fault(error))
            }
        }
    }

    fn terminal(terminal: Option<Terminal>) -> Result<Option<Step>, ProgramError> {
        match terminal {
            None => Ok(None),
            Some(Terminal::Exit(code)) => Ok(Some(Step::Exited(code))),
            Some(Terminal::Abort) => Err(ProgramError::Aborted),
            Some(Terminal::UnhandledOpcode(opcode)) => {
                Err(ProgramError::UnhandledOpcode { opcode })
            }
            Some(Terminal::Failed(why)) => Err(ProgramError::Device(Error::Unsupported(format!(
                "the RPC server stopped: {why}"
            )))),
        }
    }

    fn remaining(&self) -> Option<Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(Instant::now()))
    }
}

/// A launch's error in the program's terms.
fn fault(error: Error) -> ProgramError {
    match error {
        Error::GpuStopped { fault_address, .. } => ProgramError::MemoryFault {
            address: fault_address,
        },
        Error::Queue {
            cause: QueueError::MemoryFault { address },
            ..
        } => ProgramError::MemoryFault { address },
        Error::Queue {
            cause: QueueError::IllegalInstruction,
            ..
        } => ProgramError::IllegalInstruction,
        other => ProgramError::Device(other),
    }
}
