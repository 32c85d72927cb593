//! How a GPU program can fail.

use std::time::Duration;

/// Why a GPU program did not end with an exit code.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProgramError {
    /// The image is not a GPU program: a kernel or the RPC client object is missing.
    #[error("not a GPU program: {0}")]
    NotAProgram(String),
    /// The image speaks an RPC protocol generation aqueduct does not.
    #[error("unsupported GPU program: it uses {0}")]
    UnsupportedProtocol(String),
    /// The program accessed memory it may not.
    #[error("the GPU program faulted on memory access{}", match .address { Some(a) => format!(" at {a:#x}"), None => String::new() })]
    MemoryFault {
        /// The faulting address, where the driver reported it.
        address: Option<u64>,
    },
    /// The program executed an illegal instruction.
    #[error("the GPU program executed an illegal instruction")]
    IllegalInstruction,
    /// The program did not end in time; it was stopped.
    #[error("the GPU program did not end within {after:?}; it was stopped")]
    Timeout {
        /// The time it had.
        after: Duration,
    },
    /// The program called `abort()`.
    #[error("the GPU program called abort()")]
    Aborted,
    /// The program asked for a host service aqueduct does not serve; it was stopped.
    #[error("the GPU program asked for host service {}, which aqueduct does not serve; it was stopped", super::rpc::opcodes::name(*.opcode))]
    UnhandledOpcode {
        /// The RPC opcode.
        opcode: u32,
    },
    /// The device failed under the program (or the RPC buffer became unreachable).
    #[error(transparent)]
    Device(#[from] crate::Error),
}
