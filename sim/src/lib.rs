//! `amdgpu-sim`: a simulated amdkfd kernel driver and AMD GPU behind the [`kfd::Sys`] seam.
//!
//! It is what aqueduct's tests run on, and where no GPU exists it is the embedded default.
//! It models the kernel driver (per-process state keyed by process, every ioctl's validation
//! and errno, memory, events, mmap), the render node, the sysfs topology, the command processor
//! (AQL packet processing, signals, interrupts, timestamps, queue errors) and a shader core that
//! executes real AMDGPU machine code.
//!
//! The kernel-driver model:
//! - [`Machine`]: a simulated host with its GPUs, built from a [`MachineConfig`] (presets
//!   [`MachineConfig::mi210`], [`MachineConfig::mi300x`], [`MachineConfig::mi210_hive`],
//!   [`MachineConfig::mi300x_platform`] and knobs); it implements [`kfd::Sys`];
//! - [`default_machine`]: the process-wide machine;
//! - [`FaultInjection`], [`ResourceCounts`]: fault injection and leak accounting for tests.
//!
//! The modules below are the contracts between the simulator's parts:
//! - [`target`]: the simulated ISA targets;
//! - [`clock`]: the GPU timestamp counter;
//! - [`vm`]: GPU virtual memory as the device sees it, and the span cache (TLB) the command
//!   processor and the shader core both translate through;
//! - [`dispatch`]: what the command processor asks of the shader core;
//! - [`queue`]: what the kernel-driver model asks of the command processor.
//!
//! [`shader`] is the shader core behind [`dispatch::ShaderCore`].
//! [`cp`] is the command processor, [`cp::CommandProcessorEngine`]: one thread per AQL queue;
//! every [`MachineConfig`] starts with one, and every GPU with a [`shader::Gfx9ShaderCore`].
//! [`InertQueueEngine`] (queues never process a packet) and [`InertShaderCore`] (every dispatch
//! fails) stand in for them where a test wants the driver model alone. [`host_vm::HostVm`] is
//! the opposite: a GPU VM over plain host memory for running the command processor or the
//! shader core without the driver model.
//!
//! `unsafe` lives in [`host_memory`](crate) (mappings of the simulator's memory), the fork gate
//! (`pthread_atfork`), the file table (borrowing fd numbers for `fstat`), the `Sys`
//! implementation (forwarding host calls to [`kfd::Linux`]), the command processor's device
//! memory access (atomics on translated GPU addresses) and its threads (`pthread_create`,
//! which leaves no thread-local on the caller's thread), the shader core's
//! (`shader::memory::host`), and [`host_vm`]'s word atomics.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod clock;
pub mod cp;
pub mod dispatch;
pub mod host_vm;
pub mod queue;
pub mod shader;
pub mod target;
pub mod vm;

mod accounting;
pub mod config;
mod cpu_mappings;
pub mod cwsr;
mod default_machine;
mod device;
mod error;
mod files;
mod fork_gate;
mod gem;
mod gpu_vm;
mod host_memory;
mod inert;
mod injection;
mod kfd_ioctl;
mod machine;
mod mmap;
mod process;
mod render_node;
mod sys_impl;
mod topology;
mod user_memory;

pub use config::{CacheConfig, GpuConfig, MachineConfig, NEWEST_KFD_MINOR_VERSION};
pub use default_machine::{SIM_MACHINE_ENV, default_machine, preset, release_default_machine};
pub use device::CuLayout;
pub use error::SimError;
pub use inert::{InertQueueEngine, InertShaderCore};
pub use injection::FaultInjection;
pub use machine::{GpuInfo, Machine, ResetCause, ResourceCounts};
pub use topology::{CLASS_TOPOLOGY_ROOT, TOPOLOGY_ROOT};
