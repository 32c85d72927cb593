//! `amdgpu-sim`: a simulated amdkfd kernel driver and AMD GPU behind the [`kfd::Sys`] seam.
//!
//! It is what aqueduct's tests run on, and where no GPU exists it is the embedded default.
//! It models the kernel driver (per-process state keyed by process, every ioctl's validation
//! and errno, memory, events, mmap), the render node, the sysfs topology, the command processor
//! (AQL packet processing, signals, interrupts, timestamps, queue errors) and a shader core that
//! executes real AMDGPU machine code.
//!
//! The tree has two halves and what joins them:
//! - `driver/`, the kernel-driver model: amdkfd and the render node (`kfd_ioctl`: the ioctl
//!   table; `render_node`; `mmap`; `files`; `cpu_mappings`), the machine-wide kernel state
//!   (`kernel`, `shared`), per-process state (`process/`: memory, queues, doorbells, events,
//!   interrupts), the sysfs topology, memory and its accounting, the fork gate and fault
//!   injection;
//! - `gpu/`, the GPU: the command processor ([`cp`]: the packet processor, one thread per AQL
//!   queue), the shader core ([`shader`]: decoder, VALU and the rest of the ISA), the clock,
//!   the inert stand-ins, and the contracts between the halves;
//! - at the top: [`Machine`] (a simulated host with its GPUs), [`default_machine()`], the
//!   [`MachineConfig`], the error type, and the in-process way in (the [`kfd::Sys`]
//!   implementation of [`Machine`]).
//!
//! **Rule:** no module of `gpu/` imports one of `driver/`. The driver model reaches the GPU
//! only through the contracts: [`queue`] (what the driver asks of a queue engine),
//! [`dispatch`] (what the command processor asks of a shader core), [`vm`] (GPU virtual memory
//! as the device sees it, and the span cache both translate through), [`target`] (the ISA
//! targets) and [`clock`] (the GPU timestamp counter). `sim/tests/architecture.rs` checks both
//! rules, and that no two modules import each other, from the `use` lines.
//!
//! The kernel-driver model's public face:
//! - [`Machine`]: a simulated host with its GPUs, built from a [`MachineConfig`] (presets
//!   [`MachineConfig::mi210`], [`MachineConfig::mi300x`], [`MachineConfig::mi210_hive`],
//!   [`MachineConfig::mi300x_platform`] and knobs); it implements [`kfd::Sys`];
//! - [`default_machine`]: the process-wide machine;
//! - [`FaultInjection`], [`ResourceCounts`]: fault injection and leak accounting for tests;
//! - [`FaultingSys`]: a decorator over any [`kfd::Sys`] that records every seam call and fails
//!   a chosen one (fault sweeps).
//!
//! [`shader`] is the shader core behind [`dispatch::ShaderCore`].
//! [`cp`] is the command processor, [`cp::CommandProcessorEngine`]: one thread per AQL queue;
//! [`sdma`] the copy engines, [`sdma::SdmaEngine`]: one thread per SDMA queue;
//! every [`MachineConfig`] starts with one, and every GPU with a [`shader::Gfx9ShaderCore`].
//! [`InertQueueEngine`] (queues never process a packet) and [`InertShaderCore`] (every dispatch
//! fails) stand in for them where a test wants the driver model alone. [`host_vm::HostVm`] is
//! the opposite: a GPU VM over plain host memory for running the command processor or the
//! shader core without the driver model.
//!
//! `unsafe` lives in `driver/host_memory` (mappings of the simulator's memory), the fork gate
//! (`pthread_atfork`), the file table (borrowing fd numbers for `fstat`), the `Sys`
//! implementation (forwarding host calls to [`kfd::Linux`]), the command processor's device
//! memory access (atomics on translated GPU addresses) and its threads (`pthread_create`,
//! which leaves no thread-local on the caller's thread), the shader core's
//! (`shader::memory::host`), and [`host_vm`]'s word atomics.

#![deny(unsafe_op_in_unsafe_fn)]

mod driver;
mod gpu;

pub mod config;
mod default_machine;
mod error;
mod machine;
mod sys_impl;

pub use config::{CacheConfig, GpuConfig, MachineConfig, NEWEST_KFD_MINOR_VERSION, SqcCaches};
pub use default_machine::{SIM_MACHINE_ENV, default_machine, preset, release_default_machine};
pub use driver::cwsr;
pub use driver::device::CuLayout;
pub use driver::faulting_sys::{CallKind, FaultingSys, OPENED_ELSEWHERE, SeamCall};
pub use driver::injection::FaultInjection;
pub use driver::topology::{CLASS_TOPOLOGY_ROOT, TOPOLOGY_ROOT};
pub use error::SimError;
pub use gpu::inert::{InertQueueEngine, InertShaderCore};
pub use gpu::{clock, cp, dispatch, host_vm, queue, sdma, shader, shader_cores, target, vm};
pub use machine::{GpuInfo, Machine, ResetCause, ResourceCounts};
