//! The error type of the driver layer: every failure names the operation, and the errno where
//! the kernel (or the simulator in its place) returned one.

use std::path::PathBuf;

use crate::errno::Errno;
use crate::ioctl::IoctlError;
use crate::topology::TopologyError;

/// What can go wrong in the driver layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An ioctl failed; `op` says what the driver was doing.
    #[error("{op}: {source}")]
    Ioctl {
        /// What the driver was doing, e.g. `"map buffer 0x… to GPU 0x1234"`.
        op: String,
        /// The request and its errno.
        source: IoctlError,
    },
    /// Another system call (open, mmap, munmap, madvise, close) failed.
    #[error("{op}: {errno}")]
    Syscall {
        /// What the driver was doing, e.g. `"mmap of the doorbell page of GPU 0x1234"`.
        op: String,
        /// What the kernel returned.
        errno: Errno,
    },
    /// A device file could not be opened.
    #[error("cannot open {path}: {errno}", path = path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        errno: Errno,
    },
    /// The sysfs topology could not be read or parsed.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The kernel's KFD interface is one this driver does not speak.
    #[error(
        "KFD interface {major}.{minor} is not supported: aqueduct needs major version 1 and minor \
         version {min_minor} or newer ({why})"
    )]
    UnsupportedInterface {
        /// Major version the kernel reported.
        major: u32,
        /// Minor version the kernel reported.
        minor: u32,
        /// The oldest minor version supported.
        min_minor: u32,
        /// Why that one.
        why: &'static str,
    },
    /// This process is a `fork()` child of the process that opened the driver: the parent's
    /// kernel state is not usable here (the kernel answers EBADF). Open the driver afresh.
    #[error(
        "this process ({child}) is a fork child of the process ({parent}) that opened the GPU \
         driver; state inherited from the parent cannot be used: open the driver again"
    )]
    ForkedChild {
        /// The process that opened the driver.
        parent: i32,
        /// This process.
        child: i32,
    },
    /// A GPU's render node could not be opened or is not an amdgpu render node.
    #[error("render node of GPU {gpu_id:#x} (renderD{minor}): {source}")]
    RenderNode {
        /// The GPU.
        gpu_id: u32,
        /// Its render-node minor.
        minor: u32,
        /// What went wrong.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The process binding that an unloaded copy of the driver left in the kernel cannot be
    /// taken over (the message says what is missing); the kernel refuses a second binding in
    /// this process, so the GPU cannot be opened until the process ends.
    #[error("cannot take over this process' GPU binding: {0}")]
    Adoption(String),
    /// No GPU in the topology can be used.
    #[error("no usable GPU: {0}")]
    NoUsableGpu(String),
    /// The caller named a GPU the open driver does not have.
    #[error("no GPU with gpu_id {0:#x} is open")]
    NoSuchGpu(u32),
    /// The caller asked for something invalid; the message says what.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The GPU or the kernel interface lacks a feature the operation needs.
    #[error("not supported: {0}")]
    Unsupported(String),
    /// The kernel answered with something impossible (an out-of-range slot, a wrong address).
    #[error("unexpected answer from the kernel: {0}")]
    Kernel(String),
    /// No room left in the GPU virtual address space.
    #[error("out of GPU virtual address space: cannot place {size:#x} bytes aligned to {align:#x}")]
    AddressSpaceExhausted {
        /// Requested size.
        size: u64,
        /// Requested alignment.
        align: u64,
    },
}

impl Error {
    /// The errno behind this error, if a system call or ioctl failed.
    pub fn errno(&self) -> Option<Errno> {
        match self {
            Self::Ioctl { source, .. } => Some(source.errno),
            Self::Syscall { errno, .. } | Self::Open { errno, .. } => Some(*errno),
            _ => None,
        }
    }

    /// The ioctl's C name, if an ioctl failed.
    pub fn request(&self) -> Option<&'static str> {
        match self {
            Self::Ioctl { source, .. } => Some(source.request),
            _ => None,
        }
    }

    /// Wrap a failed ioctl with what the driver was doing.
    pub(crate) fn ioctl(op: impl Into<String>, source: IoctlError) -> Self {
        Self::Ioctl {
            op: op.into(),
            source,
        }
    }

    /// Wrap a failed system call with what the driver was doing.
    pub(crate) fn syscall(op: impl Into<String>, errno: Errno) -> Self {
        Self::Syscall {
            op: op.into(),
            errno,
        }
    }
}

/// The driver layer's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
