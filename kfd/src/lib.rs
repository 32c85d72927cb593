//! `kfd`: aqueduct's interface to the Linux amdkfd driver.
//!
//! The ABI layer:
//! - [`abi`]: the uapi structs, flags, mmap-offset encodings and sysfs names;
//! - [`ioctl`]: typed ioctl requests (`ioctl::requests`, one type per ioctl) and one small
//!   function per ioctl (`ioctl::calls`), on the request numbers of `ioctl_number`;
//! - [`sys`]: the [`Sys`] seam every system call goes through, and [`linux`]: its
//!   implementation on the real kernel (the simulator in `amdgpu-sim` is the other).
//!
//! The driver layer, above the seam and identical for hardware and simulator:
//! - [`topology`]: the sysfs topology as typed nodes, and the target id of each GPU;
//! - [`binding`]: what the kernel ties to the process for its life (`/dev/kfd`, render-node
//!   files, event page), kept and reused by every open, and fork detection;
//! - [`driver`]: the open sequence and the open driver, [`Kfd`], with its GPUs;
//! - [`address_space`] and [`va_allocator`]: GPU virtual addresses shared with the CPU;
//! - [`memory`]: buffer objects of every kind and their GPU mappings;
//! - [`doorbell`], [`event`], [`queue`]: doorbells, events and waits, AQL queues;
//! - [`queue_sizes`]: the EOP and context-save sizes the kernel demands.
//!
//! Ownership is rooted in an `Arc<Kfd>`: every buffer, mapping, queue and event holds it and
//! destroys itself when dropped; the driver closes when the last of them is gone. Errors name
//! the operation and, where the kernel refused, the request and errno.
//!
//! `unsafe` lives in [`ioctl`], [`linux`], [`address_space`] (mappings), the event
//! page, [`memory`], [`doorbell`] and [`queue`] only.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod abi;
pub mod address_space;
pub mod binding;
pub mod doorbell;
pub mod driver;
mod errno;
mod error;
pub mod event;
mod event_page;
mod gpu;
pub mod ioctl;
mod ioctl_number;
pub mod linux;
pub mod memory;
mod open_sequence;
pub mod queue;
pub mod queue_sizes;
pub mod render_node;
mod retry;
pub mod sdma_queue;
pub mod sys;
pub mod topology;
pub mod va_allocator;

pub use binding::{ProcessBinding, RuntimeState, release_simulated_bindings};
pub use doorbell::Doorbell;
pub use driver::{Gpu, Kfd, LiveObjects, OpenOptions};
pub use errno::Errno;
pub use error::{Error, Result};
pub use event::{Event, EventException, EventWait, WaitOutcome, WaitStatus};
pub use ioctl::{IoctlError, Opcode};
pub use linux::Linux;
pub use memory::{Allocation, BufferObject, GpuMapping, MemoryKind};
pub use queue::{Queue, QueueConfig, QueueMemory};
pub use render_node::RenderNodeOpener;
pub use sdma_queue::{SdmaEngines, SdmaQueue, SubmitRefusal};
pub use sys::{Backend, DoorbellNotifier, Sys};
