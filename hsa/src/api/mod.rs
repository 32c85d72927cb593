//! The C API's entry points above the runtime, one module per area, named as HSA names them:
//! each `extern "C"` function finds the live runtime (`runtime::runtime()`) and works on its
//! device, machine and objects.
//!
//! - `system`, `agent`, `isa`, `pool`, `extension`, `loader_extension`: the info functions and
//!   the extension tables;
//! - `signal`, `async_handlers`: signals and their handlers;
//! - `queue`: queues and their indices;
//! - `memory`: allocation, access, synchronous copies, locking, pointer info;
//! - `async_copy`, `profiling`: copies on the copy engines, dispatch and copy timestamps;
//! - `executable`: code-object readers, executables and symbols;
//! - `system_events`: system-event handlers;
//! - `misc`, `unsupported`: the rest of `hsa_ext_amd.h`, and what is refused.

pub mod agent;
pub mod async_copy;
pub mod async_handlers;
pub mod executable;
pub mod extension;
pub mod isa;
pub mod loader_extension;
pub mod memory;
pub mod misc;
pub mod pool;
pub mod profiling;
pub mod queue;
pub mod signal;
pub mod system;
pub mod system_events;
pub mod unsupported;
