//! `amdgpu-sim`: a simulated amdkfd kernel driver and AMD GPU behind the [`kfd::Sys`] seam.
//!
//! It is what aqueduct's tests run on, and where no GPU exists it is the embedded default.
//! It models the kernel driver (per-process state keyed by process, every ioctl's validation
//! and errno, memory, events, mmap), the render node, the sysfs topology, the command processor
//! (AQL packet processing, signals, interrupts, timestamps, queue errors) and a shader core that
//! executes real AMDGPU machine code.
//!
//! The modules below are the contracts between those parts:
//! - [`target`]: the simulated ISA targets;
//! - [`clock`]: the GPU timestamp counter;
//! - [`vm`]: GPU virtual memory as the device sees it;
//! - [`dispatch`]: what the command processor asks of the shader core;
//! - [`queue`]: what the kernel-driver model asks of the command processor.

pub mod clock;
pub mod dispatch;
pub mod queue;
pub mod target;
pub mod vm;
