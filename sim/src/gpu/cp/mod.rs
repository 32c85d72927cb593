//! The command processor: the part of the GPU that consumes AQL packets (aql.md §7) and PM4
//! command streams from user-mode queues, modelled as one thread per queue.
//!
//! The kernel-driver model starts a queue through [`CommandProcessorEngine`] (a
//! [`QueueEngine`](crate::gpu::queue::QueueEngine)) at CREATE_QUEUE and forwards doorbell writes,
//! UPDATE_QUEUE and DESTROY_QUEUE to the [`RunningQueue`](crate::gpu::queue::RunningQueue) it gets
//! back. The processor reads and writes queue memory (ring, indices, `amd_queue_t`, signals,
//! event mailboxes) only through the process' [`GpuVm`](crate::gpu::vm::GpuVm), with atomic
//! operations, so an unmapped ring or signal is a GPU memory fault, never a host crash.
//!
//! Modules, one concern each:
//! - `wakeup`: doorbells, updates, stop, and parking without burning a core;
//! - `device_memory`: atomic accesses through the GPU VM;
//! - `ring`: write index, packet fetch, slot invalidation;
//! - `queue_descriptor`: the `amd_queue_t` fields the CP reads;
//! - `decode`: header checks and packet kinds;
//! - `kernel_dispatch`: dispatch validation and the scratch check;
//! - `barrier`: barrier-AND, barrier-OR and barrier-value conditions;
//! - `pm4`: PM4 command decoding (AMD vendor packets' indirect buffers, PM4 rings);
//! - `memory_commands`: the PM4 memory, fence and interrupt commands both queue kinds run;
//! - `compute_registers`: a PM4 queue's compute registers and the dispatches they describe;
//! - `pm4_queue`: the processor of a PM4 compute queue (`KFD_IOC_QUEUE_TYPE_COMPUTE`);
//! - `abandon`: why a processor stopped short of completing a packet;
//! - `fence`: acquire and release fences;
//! - `signal`: completion signals, timestamps, mailboxes and interrupts;
//! - [`queue_error`]: the errors posted to `queue_inactive_signal`;
//! - `processor`: the per-queue loop that ties them together;
//! - [`ProcessorThread`]: the thread it runs on, from the `unload-safe-thread` crate, started
//!   without touching the caller's thread-locals (so a plugin embedding the simulator can be
//!   unloaded);
//! - `engine`: the public engine and the handle the driver holds.

mod abandon;
mod barrier;
mod compute_registers;
mod decode;
mod device_memory;
mod engine;
mod fence;
mod kernel_dispatch;
mod memory_commands;
mod pm4;
mod pm4_queue;
mod processor;
mod queue_descriptor;
pub mod queue_error;
mod ring;
mod signal;
mod wakeup;

pub use engine::{CommandProcessorEngine, PROCESSOR_THREAD_PREFIX};
pub use processor::SPIN_WINDOW;
pub use queue_error::QueueError;
/// The thread a processor runs on: started without touching the caller's thread-locals, so
/// a library that embeds the simulator can be unloaded (the `unload-safe-thread` crate).
pub use unload_safe_thread::UnloadSafeThread as ProcessorThread;
