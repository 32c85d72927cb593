//! The host memory that stands in for VRAM, GTT, doorbells, the event page and MMIO pages.
//!
//! One sparse memfd per machine holds every allocation at its own offset, so that the driver's
//! `mmap(MAP_SHARED|MAP_FIXED, render_fd, mmap_offset)` (which the simulator turns into a
//! mapping of the memfd) and the simulator's own mapping of the same range see the same bytes.
//! The device (command processor, shader core) only ever accesses the simulator's mapping of a
//! [`Backing`], kept alive by `Arc`s in the GPU page tables, so it can never touch host memory
//! the driver has unmapped or reused. Freed ranges are hole-punched: pages are released and a
//! later allocation reads zeros, as VRAM BOs are "created cleared and wiped on release".
//!
//! This module holds the simulator's raw mapping operations; every `unsafe` block is here.

use std::ffi::c_void;
use std::num::NonZeroUsize;
use std::os::fd::{AsFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kfd::Errno;
use nix::fcntl::{FallocateFlags, fallocate};
use nix::sys::memfd::{MFdFlags, memfd_create};
use nix::sys::mman::{self, MapFlags, MmapAdvise, ProtFlags};

use crate::driver::accounting::Reservation;
use crate::error::SimError;
use crate::gpu::vm::HostSpan;

/// Size of the sparse arena (nothing is allocated until touched).
const ARENA_BYTES: u64 = 1 << 46;
/// Host page size the simulator assumes (KFD's PAGE_SIZE on x86-64).
pub(crate) const PAGE_SIZE: u64 = 4096;

/// The machine's memory file.
///
/// Across `fork()` the memfd is shared (a forked child inherits the file and the simulator's
/// shared mappings of it), while the kernel it models shares no BO between the two processes.
/// Two rules keep them apart: the next free offset lives in a shared anonymous page, so a
/// parent and a child never hand out the same range; and only the process that allocated a
/// range punches it out when its backing goes, so a child dropping what it inherited never
/// zeroes memory its parent still uses.
#[derive(Debug)]
pub(crate) struct MemoryFile {
    fd: OwnedFd,
    next_offset: SharedCounter,
}

/// A 64-bit counter in a `MAP_SHARED | MAP_ANONYMOUS` page: every process forked from its
/// creator sees and advances the same one.
#[derive(Debug)]
struct SharedCounter {
    page: NonNull<AtomicU64>,
}

// SAFETY: the page is owned by this value and only ever accessed through the atomic.
unsafe impl Send for SharedCounter {}
// SAFETY: as above.
unsafe impl Sync for SharedCounter {}

impl SharedCounter {
    fn new() -> Result<Self, SimError> {
        // SAFETY: a fresh anonymous mapping without MAP_FIXED replaces nothing.
        let page = unsafe {
            mman::mmap_anonymous(
                None,
                NonZeroUsize::new(PAGE_SIZE as usize).expect("a page is not empty"),
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
            )
        }
        .map_err(|e| SimError::host("mmap of the shared offset counter", e))?;
        // The page is zero-filled: the counter starts at 0.
        Ok(Self { page: page.cast() })
    }

    fn get(&self) -> &AtomicU64 {
        // SAFETY: the page is mapped (and page-aligned) for as long as `self` lives.
        unsafe { self.page.as_ref() }
    }
}

impl Drop for SharedCounter {
    fn drop(&mut self) {
        // SAFETY: the page was mapped by `new` and nothing refers to it past `self`.
        let _ = unsafe { mman::munmap(self.page.cast(), PAGE_SIZE as usize) };
    }
}

impl MemoryFile {
    pub(crate) fn new() -> Result<Arc<Self>, SimError> {
        let fd = memfd_create("amdgpu-sim:memory", MFdFlags::MFD_CLOEXEC)
            .map_err(|e| SimError::host("memfd_create", e))?;
        nix::unistd::ftruncate(&fd, ARENA_BYTES as i64)
            .map_err(|e| SimError::host("ftruncate", e))?;
        Ok(Arc::new(Self {
            fd,
            next_offset: SharedCounter::new()?,
        }))
    }

    /// A new zero-filled range of `len` bytes (rounded up to pages), mapped for the simulator.
    /// Offsets are never reused, so a stale mapping can never alias a newer allocation.
    pub(crate) fn allocate(
        self: &Arc<Self>,
        len: u64,
        reservation: Option<Reservation>,
    ) -> Result<Arc<Backing>, Errno> {
        let len = len
            .checked_next_multiple_of(PAGE_SIZE)
            .filter(|&l| l > 0)
            .ok_or(Errno::ENOMEM)?;
        let offset = self
            .next_offset
            .get()
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |next| {
                next.checked_add(len).filter(|&end| end <= ARENA_BYTES)
            })
            .map_err(|_| Errno::ENOMEM)?;
        let map_len = NonZeroUsize::new(usize::try_from(len).map_err(|_| Errno::ENOMEM)?)
            .ok_or(Errno::ENOMEM)?;
        // SAFETY: a fresh shared mapping without MAP_FIXED replaces nothing; the range of the
        // memfd it maps belongs to this allocation alone.
        let ptr = unsafe {
            mman::mmap(
                None,
                map_len,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                self.fd.as_fd(),
                offset as i64,
            )
        }
        .map_err(Errno::from)?;
        Ok(Arc::new(Backing {
            file: self.clone(),
            owner: std::process::id(),
            offset,
            len: map_len.get(),
            ptr: ptr.cast(),
            _reservation: reservation,
        }))
    }
}

/// One allocation of the memory file, mapped for the simulator.
#[derive(Debug)]
pub(crate) struct Backing {
    file: Arc<MemoryFile>,
    /// The process that allocated the range: only it releases the pages.
    owner: u32,
    offset: u64,
    len: usize,
    ptr: NonNull<u8>,
    _reservation: Option<Reservation>,
}

// SAFETY: `ptr` is a shared mapping owned by this value (unmapped only on drop); the simulator
// accesses it only through atomics and volatile/byte copies, and the memory is by nature shared
// with the driver and the simulated device.
unsafe impl Send for Backing {}
// SAFETY: as above.
unsafe impl Sync for Backing {}

impl Backing {
    /// Length in bytes (a multiple of the page size).
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The simulator's mapping of the first byte.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The 64-bit word at `index` (an event slot, a doorbell), if inside the allocation.
    pub(crate) fn word(&self, index: usize) -> Option<&AtomicU64> {
        if index.checked_mul(8)?.checked_add(8)? > self.len {
            return None;
        }
        // The mapping is page-aligned, so every multiple of 8 bytes into it is 8-aligned.
        #[allow(clippy::cast_ptr_alignment)]
        let word = self
            .ptr
            .as_ptr()
            .wrapping_add(index * 8)
            .cast::<AtomicU64>();
        // SAFETY: the word lies inside the mapping (checked above), is 8-aligned (see above) and
        // lives as long as `&self`. Other parties (driver, device) touch it concurrently, which
        // is what an atomic is for.
        Some(unsafe { &*word })
    }

    /// Copy `len` bytes at `offset` out (for tests and the AMDGPU_INFO paths that need none).
    #[cfg(test)]
    pub(crate) fn read(&self, offset: usize, len: usize) -> Vec<u8> {
        assert!(offset + len <= self.len);
        let mut out = vec![0u8; len];
        // SAFETY: the source range lies inside the live mapping (asserted above).
        unsafe {
            std::ptr::copy_nonoverlapping(self.ptr.as_ptr().add(offset), out.as_mut_ptr(), len);
        }
        out
    }

    /// A GPU mapping of `[offset, offset + len)` of this allocation at `va`.
    pub(crate) fn span(
        self: &Arc<Self>,
        va: u64,
        offset: usize,
        len: u64,
        writable: bool,
        executable: bool,
    ) -> HostSpan {
        debug_assert!(offset as u64 + len <= self.len as u64);
        HostSpan {
            va_start: va,
            va_end: va + len,
            host: self.ptr.as_ptr().wrapping_add(offset),
            writable,
            executable,
            keep_alive: self.clone(),
        }
    }

    /// Map `[offset, offset + len)` of this allocation into the process as `mmap(2)` would.
    ///
    /// # Safety
    ///
    /// As for `mmap(2)`: with `MAP_FIXED` the range `[addr, addr+len)` is replaced, and the
    /// caller must own it.
    pub(crate) unsafe fn map_into_process(
        &self,
        addr: Option<NonZeroUsize>,
        len: NonZeroUsize,
        prot: ProtFlags,
        flags: MapFlags,
        offset: u64,
    ) -> Result<NonNull<c_void>, Errno> {
        if offset + len.get() as u64 > self.len as u64 {
            return Err(Errno::EINVAL);
        }
        // SAFETY: forwarded to the caller; the file range lies inside this allocation.
        unsafe {
            mman::mmap(
                addr,
                len,
                prot,
                flags,
                self.file.fd.as_fd(),
                (self.offset + offset) as i64,
            )
        }
        .map_err(Errno::from)
    }
}

impl Drop for Backing {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` is the mapping this value created and owns; no reference into it
        // outlives `self` (spans hold an `Arc<Backing>`).
        let _ = unsafe { mman::munmap(self.ptr.cast(), self.len) };
        if std::process::id() != self.owner {
            // Inherited across fork: the range still belongs to the parent.
            return;
        }
        let _ = fallocate(
            self.file.fd.as_fd(),
            FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE,
            self.offset as i64,
            self.len as i64,
        );
    }
}

/// `madvise(MADV_DONTFORK)` on a mapping the kernel would mark `VM_DONTCOPY` (doorbells, event
/// page, MMIO), so that a forked child has no such mapping, as with the kernel.
pub(crate) fn mark_dont_fork(ptr: NonNull<c_void>, len: usize) {
    // SAFETY: MADV_DONTFORK only changes what fork copies; it does not touch the contents.
    let _ = unsafe { mman::madvise(ptr, len, MmapAdvise::MADV_DONTFORK) };
}

/// Whether every page of `[addr, addr + len)` is mapped in this process (what
/// `get_user_pages` needs for a userptr BO).
pub(crate) fn range_is_mapped(addr: u64, len: u64) -> bool {
    let Some(start) = usize::try_from(addr)
        .ok()
        .filter(|a| a % PAGE_SIZE as usize == 0)
    else {
        return false;
    };
    let Ok(len) = usize::try_from(len) else {
        return false;
    };
    if len == 0 || start.checked_add(len).is_none() {
        return false;
    }
    // mincore wants one byte per page; probe a page at a time so huge ranges need no buffer.
    let mut page = start;
    let end = start + len;
    let mut vec = [0u8; 1];
    while page < end {
        // SAFETY: mincore only reads the page tables of the given range and writes one byte to
        // `vec`; an unmapped range makes it fail with ENOMEM, which is the answer we want.
        let rc =
            unsafe { libc::mincore(page as *mut c_void, PAGE_SIZE as usize, vec.as_mut_ptr()) };
        if rc != 0 {
            return false;
        }
        page += PAGE_SIZE as usize;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_zeroed_shared_and_punched() {
        let file = MemoryFile::new().unwrap();
        let a = file.allocate(5000, None).unwrap();
        assert_eq!(a.len(), 8192);
        assert!(a.read(0, 8192).iter().all(|&b| b == 0));
        a.word(3).unwrap().store(0x1122, Ordering::Relaxed);
        assert!(a.word(1024).is_none());
        // A second view of the same range, as the driver gets with mmap on the render node.
        let len = NonZeroUsize::new(4096).unwrap();
        // SAFETY: a fresh mapping without MAP_FIXED replaces nothing.
        let view =
            unsafe { a.map_into_process(None, len, ProtFlags::PROT_READ, MapFlags::MAP_SHARED, 0) }
                .unwrap();
        // SAFETY: the view is a live readable mapping of at least 32 bytes.
        let word = unsafe { view.cast::<u64>().add(3).read_volatile() };
        assert_eq!(word, 0x1122);
        // SAFETY: the view is ours and unused afterwards.
        unsafe { mman::munmap(view, 4096) }.unwrap();
        assert!(range_is_mapped(a.as_ptr() as u64, 8192));
        drop(a);
        let b = file.allocate(4096, None).unwrap();
        assert!(b.read(0, 4096).iter().all(|&b| b == 0));
        assert!(!range_is_mapped(4096, 4096));
    }
}
