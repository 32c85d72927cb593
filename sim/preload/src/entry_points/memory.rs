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

/// A host mapping (anonymous, or of an fd the simulator does not serve) that libc made at
/// `mapped`: with `MAP_FIXED` it replaced what was there, as an unmap would have, so the
/// simulator is told (userptr BOs over the range leave the GPU, its render-node mappings there
/// are forgotten). libhsakmt and ROCr give a buffer's range back this way: anonymous
/// `PROT_NONE` `MAP_FIXED | MAP_NORESERVE` over it.
///
/// Costs nothing before the machine exists (nothing can be tracked then), for the simulator's
/// own mappings (it keeps its own books), and for mappings that are not `MAP_FIXED`.
fn host_mapping_made(mapped: *mut c_void, len: usize, flags: c_int) {
    // MAP_FIXED_NOREPLACE (alone or with MAP_FIXED, which it overrides) replaced nothing.
    if flags & libc::MAP_FIXED == 0 || flags & libc::MAP_FIXED_NOREPLACE != 0 {
        return;
    }
    if mapped == libc::MAP_FAILED || guard::inside() {
        return;
    }
    let (Some(simulator), Some(start)) = (simulator::built(), NonNull::new(mapped)) else {
        return;
    };
    let _inside = guard::enter();
    simulator.machine.host_mapping_replaced(start, len);
}

/// `mmap(2)`: a mapping of a simulated fd is the simulator's memory, at the address asked
/// for (`MAP_FIXED` included); any other `MAP_FIXED` mapping unmaps, for the simulator, what
/// it replaced.
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
    let mapped = unsafe { next::MMAP.get()(addr, len, prot, flags, fd, offset) };
    host_mapping_made(mapped, len, flags);
    mapped
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
    let mapped = unsafe { next::MMAP64.get()(addr, len, prot, flags, fd, offset) };
    host_mapping_made(mapped, len, flags);
    mapped
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
