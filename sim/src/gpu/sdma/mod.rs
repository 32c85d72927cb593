//! The SDMA copy engines: the part of the GPU that executes user-mode SDMA queues
//! (`KFD_IOC_QUEUE_TYPE_SDMA`, `SDMA_XGMI`, `SDMA_BY_ENG_ID`), beside the command processor
//! and behind the same contract ([`QueueEngine`](crate::gpu::queue::QueueEngine)): the
//! kernel-driver model starts a queue at CREATE_QUEUE and forwards doorbells, UPDATE_QUEUE and
//! DESTROY_QUEUE; the engine reads and writes memory only through the process'
//! [`GpuVm`](crate::gpu::vm::GpuVm), so an unmapped address is a VM fault, and raises its
//! trap interrupts through the [`InterruptSink`](crate::gpu::dispatch::InterruptSink).
//!
//! Modules, one concern each:
//! - `packet`: the SDMA 4.x packet layouts and their decoding;
//! - `memory`: bulk copies, fills and atomic words through the GPU VM;
//! - `control`: doorbells, updates, stop, and parking;
//! - `processor`: the per-queue loop (read/write pointers, rptr write-back, execution);
//! - `engine`: the public engine and the handle the driver holds.

mod control;
mod engine;
mod memory;
mod packet;
mod processor;

pub use engine::SdmaEngine;
