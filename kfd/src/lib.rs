//! `kfd`: aqueduct's interface to the Linux amdkfd driver.
//!
//! - [`abi`]: the uapi structs, flags, mmap-offset encodings and sysfs names;
//! - [`ioctl`] and [`request`]: typed opcodes and one request type per ioctl;
//! - [`ioctls`]: one small function per ioctl;
//! - [`sys`]: the [`Sys`] seam every system call goes through, and [`linux`]: its
//!   implementation on the real kernel (the simulator in `amdgpu-sim` is the other).
//!
//! `unsafe` lives in [`ioctl`], [`ioctls`] and [`linux`] only.

#![deny(unsafe_op_in_unsafe_fn)]

pub mod abi;
mod errno;
pub mod ioctl;
pub mod ioctls;
pub mod linux;
pub mod request;
pub mod sys;

pub use errno::Errno;
pub use ioctl::{IoctlError, Opcode};
pub use linux::Linux;
pub use sys::{Backend, Sys};
