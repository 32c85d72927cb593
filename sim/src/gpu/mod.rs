//! The GPU: the command processor ([`cp`]), the SDMA copy engines ([`sdma`]), the shader core
//! ([`shader`]), the clock, the inert
//! stand-ins for both, and the contracts the kernel-driver model reaches them through:
//! [`queue`] (what the driver asks of a queue engine), [`dispatch`] (what the command processor
//! asks of a shader core), [`shader_cores`] (which core runs which ISA), [`vm`] (GPU virtual memory as the device sees it), [`target`] and
//! [`clock`]. [`host_vm`] is a GPU VM over plain host memory, for running this half alone.
//!
//! Nothing here imports the kernel-driver model (`driver/`).

pub mod clock;
pub mod cp;
pub mod dispatch;
pub mod host_vm;
pub(crate) mod inert;
pub(crate) mod memory_poll;
pub mod queue;
pub mod sdma;
pub mod shader;
pub mod shader_cores;
pub mod target;
pub mod vm;
