//! A GPU program image: the three kernels of LLVM libc's start code and the device globals
//! a loader sets (gpu-programs.md §1, §2; names from llvm-project
//! `llvm/tools/llvm-gpu-loader/amdhsa.cpp` and `libc/startup/gpu/amdgpu/start.cpp`).

use super::error::ProgramError;
use super::rpc::layout::ProtocolVersion;
use crate::{Executable, Kernel};

/// The RPC client object the loader fills.
pub const RPC_CLIENT_SYMBOL: &str = "__llvm_rpc_client";
/// The `u64` timestamp frequency the loader writes where the image has it.
pub const CLOCK_FREQUENCY_SYMBOL: &str = "__llvm_libc_clock_freq";

/// The kernels and globals of one loaded program.
#[derive(Debug)]
pub struct Image {
    pub executable: Executable,
    pub begin: Kernel,
    pub start: Kernel,
    pub end: Kernel,
    pub protocol: ProtocolVersion,
}

impl Image {
    /// Find what a GPU program must have in `executable`.
    pub fn find(executable: Executable) -> Result<Self, ProgramError> {
        let kernel = |name: &str| {
            executable.kernel(name).map_err(|_| {
                ProgramError::NotAProgram(format!(
                    "no `{name}` kernel (GPU programs are linked with LLVM libc's GPU start code)"
                ))
            })
        };
        let (begin, start, end) = (kernel("_begin")?, kernel("_start")?, kernel("_end")?);
        let client = executable
            .variable(RPC_CLIENT_SYMBOL)
            .map_err(|_| ProgramError::NotAProgram(format!("no `{RPC_CLIENT_SYMBOL}` object")))?;
        let protocol = ProtocolVersion::from_client_size(client.size)
            .map_err(ProgramError::UnsupportedProtocol)?;
        Ok(Self {
            executable,
            begin,
            start,
            end,
            protocol,
        })
    }

    /// The lanes per RPC port: the widest wavefront among the kernels.
    pub fn lanes(&self) -> u32 {
        [&self.begin, &self.start, &self.end]
            .iter()
            .map(|k| k.wavefront_size)
            .max()
            .unwrap_or(64)
    }
}
