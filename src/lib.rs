//! aqueduct: a pure-Rust userspace driver for AMD GPUs.
//!
//! It talks to `/dev/kfd` and the amdgpu DRM render node directly (no ROCr, libhsakmt, libdrm
//! or comgr), builds AQL queues and signals on memory it maps itself, and loads AMDGPU code
//! objects with its own loader. Where no GPU exists, a simulator that executes the kernels'
//! real machine code stands in for the kernel driver and the GPU.
//!
//! The safe API:
//! - [`Device`]: the process-wide device, opened once and shared, torn down completely when
//!   the last handle goes (or at [`Device::shutdown`]) and opened again at will;
//! - [`GpuAgent`] and [`CpuAgent`]: what the device is made of;
//! - [`Buffer`]: GPU-visible memory of every [`MemoryLocation`];
//! - [`Queue`]: AQL queues, with typed [`QueueError`]s;
//! - [`Signal`]: completion signals, waits and profiling timestamps;
//! - [`Executable`]: code objects loaded on a GPU ([`Device::load_with`], [`LoadOptions`]),
//!   their kernels, variables and functions.
//!
//! Every call on a handle of a shut-down device fails with [`ErrorKind::Closed`], and every
//! call on a handle inherited across `fork()` with [`ErrorKind::ForkedChild`].
//!
//! The crates below this one are re-exported for users who need the raw layers. The simulator
//! (`aqueduct::sim`, and the embedded backend where `/dev/kfd` is missing) is the default cargo
//! feature `sim`; without it aqueduct is a hardware-only driver.

#![deny(unsafe_op_in_unsafe_fn)]

pub use amdgpu_loader as loader;
#[cfg(feature = "sim")]
pub use amdgpu_sim as sim;
pub use aql;
pub use drm_amdgpu;
pub use kfd;

pub mod agent;
pub mod backend;
mod blit;
mod buffer;
pub mod code_object_source;
pub mod copy;
mod device;
mod error;
pub mod executable;
mod host_memory;
pub mod kernarg;
mod kernel;
pub mod launch;
pub mod program;
pub mod queue;
mod sdma_packet;
pub mod signal;

pub use agent::{CpuAgent, GpuAgent, MemoryLocation, MemoryPool, QueueLimits};
pub use buffer::Buffer;
pub use copy::{CopyOrder, CopyQueue, Pitched};
pub use device::{Device, MemoryFault};
pub use error::{Error, ErrorKind, QueueError, Result};
pub use executable::{Executable, Function, LoadOptions, Variable};
pub use kernarg::{Arg, Geometry};
pub use kernel::Kernel;
pub use launch::{
    CommandList, CommandListBuilder, Completion, DEFAULT_STACK_BYTES, Issued, Launch,
    LaunchOptions, PrepareOptions, PreparedLaunch, RecordedLaunch, Replayed,
};
pub use queue::{Queue, QueueOptions};
pub use signal::{Condition, MemoryOrder, Signal, Timestamps};
