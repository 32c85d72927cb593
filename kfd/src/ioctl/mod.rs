//! Typed ioctl requests, in the style of rustix: one [`Opcode`] value per request, computed from
//! direction, type, number and argument size exactly as `_IOR`/`_IOW`/`_IOWR` do, and one
//! zero-sized request type per ioctl that ties the opcode to its argument struct.

//!
//! - [`requests`]: the `AMDKFD_IOC_*` requests, one zero-sized type each;
//! - [`calls`]: one small function per `/dev/kfd` ioctl, typed arguments in, typed results out.

pub mod calls;
pub mod requests;

use std::ffi::c_void;
use std::fmt;
use std::os::fd::RawFd;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::errno::Errno;
pub use crate::ioctl_number::{Direction, Opcode};
use crate::sys::Sys;

/// One ioctl request: its C name, opcode and argument struct.
///
/// # Safety
///
/// Implementors promise that `OPCODE` is the request the kernel expects for an argument of type
/// `Arg` (so the kernel reads and writes no more than `size_of::<Arg>()` bytes of it), and that
/// `Arg` is the kernel's struct (any bit pattern the kernel writes is a valid `Arg`).
pub unsafe trait Ioctl {
    /// The `#[repr(C)]` argument struct.
    type Arg: FromBytes + IntoBytes + Immutable + KnownLayout + fmt::Debug;
    /// The C macro name, e.g. `"AMDKFD_IOC_ACQUIRE_VM"`; errors carry it.
    const NAME: &'static str;
    /// The request number.
    const OPCODE: Opcode;
}

/// A request whose argument carries no user pointer that the kernel or the GPU will write
/// through, so it can be issued from safe code (pointers the kernel only reads are fine: a bad
/// one yields `EFAULT`, never memory corruption).
///
/// # Safety
///
/// Implementors promise the property above.
pub unsafe trait PlainIoctl: Ioctl {}

/// A failed ioctl: which request, and the errno the kernel returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{request} failed: {errno}")]
pub struct IoctlError {
    /// The C name of the request.
    pub request: &'static str,
    /// What the kernel returned.
    pub errno: Errno,
}

/// Issue a plain request.
pub fn call<I: PlainIoctl>(sys: &dyn Sys, fd: RawFd, arg: &mut I::Arg) -> Result<(), IoctlError> {
    // SAFETY: `I: PlainIoctl` promises the kernel writes through no pointer inside `arg`, and
    // `I: Ioctl` that the kernel touches exactly the `size_of::<I::Arg>()` bytes of `*arg`,
    // which is a valid, exclusively borrowed `I::Arg`.
    unsafe { call_unchecked::<I>(sys, fd, arg) }
}

/// Issue any request.
///
/// # Safety
///
/// Every user pointer or GPU address inside `arg` must be valid for whatever the kernel (and,
/// for queue and memory requests, the GPU) will do with it, for as long as it will do it.
pub unsafe fn call_unchecked<I: Ioctl>(
    sys: &dyn Sys,
    fd: RawFd,
    arg: &mut I::Arg,
) -> Result<(), IoctlError> {
    let ptr: *mut I::Arg = arg;
    // SAFETY: `ptr` comes from a live `&mut I::Arg` and `I::OPCODE` encodes exactly its size
    // (the `Ioctl` contract); the caller vouches for pointers inside the struct.
    unsafe { sys.ioctl(fd, I::OPCODE, ptr.cast::<c_void>()) }
        .map(drop)
        .map_err(|errno| IoctlError {
            request: I::NAME,
            errno,
        })
}
