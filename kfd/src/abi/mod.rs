//! The amdkfd user-space ABI: the `#[repr(C)]` argument structs of every ioctl aqueduct uses,
//! their flag sets and constants, the mmap-offset encodings of `/dev/kfd`, and the names of the
//! sysfs topology files.
//!
//! Field names follow `include/uapi/linux/kfd_ioctl.h` so that a reader can hold the two side by
//! side; the layout of every struct is checked against the installed C header by the workspace
//! test `tests/abi_headers/`. The structs are pinned to interface version 1.23: the kernel
//! copies `max(its size, caller's size)` bytes and zero-fills the rest, so a newer (longer)
//! struct is accepted by an older kernel and vice versa (kfd.md §1.3).
//!
//! Nothing in this module performs a system call.

mod event;
mod memory;
pub mod mmap_offset;
mod process;
mod queue;
pub mod sysfs;
mod version;

pub use event::*;
pub use memory::*;
pub use process::*;
pub use queue::*;
pub use version::*;
