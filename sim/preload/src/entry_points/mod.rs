//! The C entry points this library defines in place of libc's, grouped by what they act on.
//! Each one checks, cheaply, whether the call concerns the simulated machine (a path it serves,
//! an fd it opened, an address while the machine exists) and otherwise calls the next
//! definition with the same arguments. Calls made by the simulator itself
//! ([`guard::inside`](crate::guard::inside)) always go to the next definition.
//!
//! Variadic functions (`open`, `openat`, `ioctl`, `fcntl`): stable Rust cannot define a C
//! variadic function, so each is defined with its optional argument as a fixed parameter. On
//! x86_64 System V this reads that argument correctly: a variadic caller passes it in the
//! same register as a fixed one (the only difference, `%al` holding the number of vector
//! registers used, matters to the callee only for floating-point arguments, which none of
//! these take). When the caller passed no third argument the parameter holds garbage that is
//! never used (it is only forwarded as the optional argument, which the next definition
//! ignores in the same cases). `lib.rs` refuses to build for any other target.

mod directories;
mod files;
mod memory;
mod status;

use std::ffi::{CStr, c_char, c_int};

use kfd::Errno;

use crate::fds::Device;
use crate::{guard, simulator};

/// The simulated device an fd is open on; `None` for a host fd (and before the machine
/// exists, when no fd can be simulated).
fn fd_device(fd: c_int) -> Option<Device> {
    if guard::inside() {
        return None;
    }
    simulator::built()?.fds.get(fd).map(|d| d.device)
}

/// Set `errno` and return `ret` (the C convention for a failed call).
fn fail<T>(errno: Errno, ret: T) -> T {
    // SAFETY: `__errno_location` returns this thread's errno slot, always valid.
    unsafe { *libc::__errno_location() = errno.raw() };
    ret
}

/// `-1` with `errno` set.
fn fail_int(errno: Errno) -> c_int {
    fail(errno, -1)
}

/// The path argument of a call, or `None` for a null pointer (left to the next definition,
/// which answers EFAULT as the kernel does).
///
/// # Safety
///
/// `path` must be null or a NUL-terminated string that outlives the returned reference (the
/// contract of every libc function taking a path).
unsafe fn path_arg<'a>(path: *const c_char) -> Option<&'a CStr> {
    if path.is_null() {
        None
    } else {
        // SAFETY: non-null and NUL-terminated by the caller's contract.
        Some(unsafe { CStr::from_ptr(path) })
    }
}
