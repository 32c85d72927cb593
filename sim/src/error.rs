//! The crate's error type, for the operations a test or a tool performs on a simulated machine
//! (building it, injecting faults). Errors the simulated kernel returns to the driver are plain
//! [`kfd::Errno`] values, exactly as the real kernel returns them.

use kfd::Errno;

/// What can go wrong when building or steering a simulated machine.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The configuration describes a machine the simulator cannot build.
    #[error("invalid machine configuration: {0}")]
    Config(String),
    /// A host system call the simulator needs failed.
    #[error("{operation} failed: {errno}")]
    Host {
        /// What the simulator was doing.
        operation: &'static str,
        /// Why it failed.
        errno: Errno,
    },
    /// No GPU of the machine has this gpu_id.
    #[error("no GPU with gpu_id {0}")]
    UnknownGpu(u32),
    /// The process has never opened `/dev/kfd` on this machine (or has exited).
    #[error("process {0} has no KFD process on this machine")]
    UnknownProcess(i32),
}

impl SimError {
    pub(crate) fn host(operation: &'static str, errno: impl Into<Errno>) -> Self {
        Self::Host {
            operation,
            errno: errno.into(),
        }
    }
}
