//! `mmap` and `munmap`.

use std::ffi::{c_int, c_void};
use std::num::NonZeroUsize;
use std::ptr::NonNull;

use kfd::Errno;
use kfd::sys::{MapFlags, ProtFlags, Sys};

use super::fail;
use crate::{guard, next, simulator};

/// A mapping of a simulated fd: `None` if `fd` is not one.
fn map_simulated(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    offset: libc::off_t,
) -> Option<*mut c_void> {
    if guard::inside() || fd < 0 || flags & libc::MAP_ANONYMOUS != 0 {
        return None;
    }
    let simulator = simulator::built()?;
    simulator.fds.get(fd)?;
    let _inside = guard::enter();
    let Some(len) = NonZeroUsize::new(len) else {
        return Some(fail(Errno::EINVAL, libc::MAP_FAILED));
    };
    // SAFETY: the caller of mmap owns a MAP_FIXED range it asks to replace (mmap's contract
    // is the `Sys::mmap` contract). amdkfd offsets use the top bits: passed on as unsigned.
    let mapped = unsafe {
        simulator.machine.mmap(
            NonZeroUsize::new(addr as usize),
            len,
            ProtFlags::from_bits_retain(prot),
            MapFlags::from_bits_retain(flags),
            Some(fd),
            offset as u64,
        )
    };
    Some(mapped.map_or_else(|errno| fail(errno, libc::MAP_FAILED), NonNull::as_ptr))
}

/// `mmap(2)`: a mapping of a simulated fd is the simulator's memory, at the address asked
/// for (`MAP_FIXED` included).
///
/// # Safety
///
/// As for libc's `mmap`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mmap(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    offset: libc::off_t,
) -> *mut c_void {
    if let Some(result) = map_simulated(addr, len, prot, flags, fd, offset) {
        return result;
    }
    // SAFETY: forwarded under the caller's contract.
    unsafe { next::MMAP.get()(addr, len, prot, flags, fd, offset) }
}

/// `mmap64`, the same on 64-bit.
///
/// # Safety
///
/// As for libc's `mmap64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mmap64(
    addr: *mut c_void,
    len: usize,
    prot: c_int,
    flags: c_int,
    fd: c_int,
    offset: libc::off_t,
) -> *mut c_void {
    if let Some(result) = map_simulated(addr, len, prot, flags, fd, offset) {
        return result;
    }
    // SAFETY: forwarded under the caller's contract.
    unsafe { next::MMAP64.get()(addr, len, prot, flags, fd, offset) }
}

/// `munmap(2)`: once the machine exists, every unmap goes through it, as the kernel's MMU
/// notifiers see every unmap (userptr memory over the range loses its GPU mappings, and the
/// simulator forgets its mappings there).
///
/// # Safety
///
/// As for libc's `munmap`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn munmap(addr: *mut c_void, len: usize) -> c_int {
    if !guard::inside()
        && let Some(simulator) = simulator::built()
        && let Some(start) = NonNull::new(addr)
    {
        let _inside = guard::enter();
        // SAFETY: the caller's contract is the `Sys::munmap` contract.
        return unsafe { simulator.machine.munmap(start, len) }
            .map_or_else(|e| fail(e, -1), |()| 0);
    }
    // SAFETY: forwarded under the caller's contract.
    unsafe { next::MUNMAP.get()(addr, len) }
}
