//! The C API's entry points, one module per area, named as HSA names them.

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
