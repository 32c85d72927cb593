//! The one error type of the safe API, with kinds a caller can match on; the lowest layer of
//! `src/` but for the pure ones it wraps (backend choice, code-object sources, kernarg layout).
//!
//! - `queue`: what the CP reports when it stops a queue ([`QueueError`]), a kind of [`Error`].

mod queue;

use std::time::Duration;

use kfd::Errno;

use crate::backend::BackendError;
pub use queue::QueueError;

/// What can go wrong in the safe API.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The device this handle belongs to was shut down ([`Device::shutdown`]); every call on
    /// one of its handles fails like this. Open the device again for a fresh one.
    ///
    /// [`Device::shutdown`]: crate::Device::shutdown
    #[error("the device was shut down: this handle is stale (open the device again)")]
    Closed,
    /// This process is a `fork()` child of the process that opened the device: nothing it
    /// inherited can be used (the kernel refuses it). Open the device afresh in the child.
    #[error(
        "this process ({child}) is a fork child of the process ({parent}) that opened the \
         device; inherited handles cannot be used: open the device again"
    )]
    ForkedChild {
        /// The process that opened the device.
        parent: i32,
        /// This process.
        child: i32,
    },
    /// The kernel (or the simulator) has no memory left for the request.
    #[error("out of memory: {what}")]
    OutOfMemory {
        /// What was being allocated.
        what: String,
        /// The driver error behind it, where there is one.
        #[source]
        source: Option<kfd::Error>,
    },
    /// A queue's command processor stopped with an error; every later wait on that queue
    /// reports it. Other queues and the device stay usable.
    #[error("queue {queue_id} on GPU {gpu_id:#x}: {cause}")]
    Queue {
        /// The GPU.
        gpu_id: u32,
        /// The kernel's queue id.
        queue_id: u32,
        /// What the command processor reported.
        cause: QueueError,
    },
    /// The kernel driver stopped every queue of this process on a GPU after a memory fault
    /// there (`kfd_process_vm_fault` evicts them), and keeps them stopped for the life of the
    /// process: no queue of this process runs on that GPU again, even after a reopen. Other
    /// GPUs are unaffected.
    #[error(
        "GPU {gpu_id:#x} stopped this process' queues after a memory fault{}: the kernel driver \
         keeps them stopped for the life of the process",
        match .fault_address { Some(a) => format!(" at {a:#x}"), None => String::new() }
    )]
    GpuStopped {
        /// The GPU.
        gpu_id: u32,
        /// The faulting address KFD reported.
        fault_address: Option<u64>,
    },
    /// A wait ran out of time.
    #[error("timed out after {after:?} waiting for {what}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// How long the wait lasted.
        after: Duration,
    },
    /// The caller asked for something invalid; the message says what and what is expected.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A code object refers to a symbol nobody defines: neither the executables it was
    /// linked with ([`LoadOptions::link_with`]) nor anything else (weak references resolve to 0).
    ///
    /// [`LoadOptions::link_with`]: crate::LoadOptions::link_with
    #[error(
        "the code object refers to `{name}`, which is not defined: load the executable that \
         exports it first and link with it (LoadOptions::link_with)"
    )]
    UnresolvedSymbol {
        /// The undefined symbol's name.
        name: String,
    },
    /// The device or the kernel lacks what the operation needs.
    #[error("not supported: {0}")]
    Unsupported(String),
    /// A launch's arguments or geometry do not fit the kernel (found before dispatch).
    #[error(transparent)]
    Kernarg(#[from] crate::kernarg::KernargError),
    /// A code object is malformed, or none in the input runs on the GPU.
    #[error(transparent)]
    CodeObject(#[from] crate::code_object_source::CodeObjectSourceError),
    /// The kernel driver refused a request (the ioctl and errno are inside) or a system call
    /// failed.
    #[error(transparent)]
    Driver(kfd::Error),
    /// No backend could be chosen or started.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// The kinds of [`Error`], for matching without the details.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// [`Error::Closed`].
    Closed,
    /// [`Error::ForkedChild`].
    ForkedChild,
    /// [`Error::OutOfMemory`].
    OutOfMemory,
    /// [`Error::Queue`].
    Queue,
    /// [`Error::GpuStopped`].
    GpuStopped,
    /// [`Error::Timeout`].
    Timeout,
    /// [`Error::InvalidArgument`].
    InvalidArgument,
    /// [`Error::Unsupported`].
    Unsupported,
    /// [`Error::Driver`]: the kernel refused (see [`Error::errno`] and [`Error::ioctl`]).
    Kernel,
    /// [`Error::Backend`].
    Backend,
}

impl Error {
    /// The kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Closed => ErrorKind::Closed,
            Self::ForkedChild { .. } => ErrorKind::ForkedChild,
            Self::OutOfMemory { .. } => ErrorKind::OutOfMemory,
            Self::Queue { .. } => ErrorKind::Queue,
            Self::GpuStopped { .. } => ErrorKind::GpuStopped,
            Self::Timeout { .. } => ErrorKind::Timeout,
            Self::InvalidArgument(_)
            | Self::Kernarg(_)
            | Self::CodeObject(_)
            | Self::UnresolvedSymbol { .. } => ErrorKind::InvalidArgument,
            Self::Unsupported(_) => ErrorKind::Unsupported,
            Self::Driver(_) => ErrorKind::Kernel,
            Self::Backend(_) => ErrorKind::Backend,
        }
    }

    /// The errno behind this error, where a system call or ioctl failed.
    pub fn errno(&self) -> Option<Errno> {
        match self {
            Self::Driver(e)
            | Self::OutOfMemory {
                source: Some(e), ..
            } => e.errno(),
            _ => None,
        }
    }

    /// The C name of the ioctl that failed, if one did.
    pub fn ioctl(&self) -> Option<&'static str> {
        match self {
            Self::Driver(e)
            | Self::OutOfMemory {
                source: Some(e), ..
            } => e.request(),
            _ => None,
        }
    }

    /// The queue error, for [`ErrorKind::Queue`].
    pub fn queue_error(&self) -> Option<&QueueError> {
        match self {
            Self::Queue { cause, .. } => Some(cause),
            _ => None,
        }
    }

    /// A driver-layer error, with the ones callers match on lifted to their own kinds.
    pub(crate) fn driver(what: impl FnOnce() -> String, error: kfd::Error) -> Self {
        match error {
            kfd::Error::ForkedChild { parent, child } => Self::ForkedChild { parent, child },
            kfd::Error::InvalidArgument(message) => Self::InvalidArgument(message),
            kfd::Error::Unsupported(message) => Self::Unsupported(message),
            kfd::Error::AddressSpaceExhausted { .. } => Self::OutOfMemory {
                what: what(),
                source: Some(error),
            },
            other if other.errno() == Some(Errno::ENOMEM) => Self::OutOfMemory {
                what: what(),
                source: Some(other),
            },
            other => Self::Driver(other),
        }
    }
}

impl From<kfd::Error> for Error {
    fn from(error: kfd::Error) -> Self {
        Self::driver(|| "GPU memory".to_owned(), error)
    }
}

/// The result type of the safe API.
pub type Result<T, E = Error> = std::result::Result<T, E>;
