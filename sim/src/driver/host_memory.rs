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
//! Except that a freed range nobody can still see, and whose pages were all touched, is kept,
//! up to [`RECYCLE_BYTES`] in all, and
//! handed to the next allocation of the same size after it is zeroed: faulting fresh pages into
//! the memfd (allocate, clear, insert into the page cache, once per 4 KiB page) and punching
//! them out again cost ~0.5 µs per page, three times what zeroing resident pages costs, and
//! most of loading a large code object. A range is seen by nobody once its [`Backing`] is gone
//! (the simulator's mapping is unmapped, and every mapping the driver made through the render
//! node holds the backing), unless the process forked since the range was allocated: then a
//! child may have inherited a mapping of it, and the range is punched as before.
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
use crate::driver::fork_gate::{self, GateSection, TableMutex};
use crate::error::SimError;
use crate::gpu::vm::HostSpan;

/// Size of the sparse arena (nothing is allocated until touched).
const ARENA_BYTES: u64 = 1 << 46;
/// Host page size the simulator assumes (KFD's PAGE_SIZE on x86-64).
pub(crate) const PAGE_SIZE: u64 = 4096;
/// Most bytes of freed ranges a memory file keeps for reuse (see the module documentation):
/// enough for a few large code objects and their buffers, little next to the memory the
/// simulated GPU offers. Kept pages are in no mapping, so they count in no process' RSS.
pub(crate) const RECYCLE_BYTES: u64 = 64 << 20;

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
    recycled: TableMutex<Recycled>,
}

/// Freed ranges kept for reuse, by length. They belong to the process that freed them: a
/// forked child that finds its parent's list forgets it (without punching: the ranges are the
/// parent's).
#[derive(Debug, Default)]
struct Recycled {
    pid: u32,
    bytes: u64,
    by_len: std::collections::BTreeMap<u64, Vec<u64>>,
}

impl Recycled {
    /// The list of the calling process.
    fn mine(&mut self) -> &mut Self {
        let pid = std::process::id();
        if self.pid != pid {
            *self = Self {
                pid,
                ..Self::default()
            };
        }
        self
    }

    /// A kept range of exactly `len` bytes.
    fn take(&mut self, len: u64) -> Option<u64> {
        let list = self.mine();
        let offsets = list.by_len.get_mut(&len)?;
        let offset = offsets.pop()?;
        if offsets.is_empty() {
            list.by_len.remove(&len);
        }
        list.bytes -= len;
        Some(offset)
    }

    /// Keep `[offset, offset + len)` if it fits under [`RECYCLE_BYTES`].
    fn keep(&mut self, offset: u64, len: u64) -> bool {
        let list = self.mine();
        if list.bytes + len > RECYCLE_BYTES {
            return false;
        }
        list.bytes += len;
        list.by_len.entry(len).or_default().push(offset);
        true
    }
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
            recycled: TableMutex::new(Recycled::default()),
        }))
    }

    /// A new zero-filled range of `len` bytes (rounded up to pages), mapped for the simulator.
    /// A fresh offset is never reused while anything can still map it, so a stale mapping can
    /// never alias a newer allocation.
    pub(crate) fn allocate(
        self: &Arc<Self>,
        len: u64,
        reservation: Option<Reservation>,
    ) -> Result<Arc<Backing>, Errno> {
        let len = len
            .checked_next_multiple_of(PAGE_SIZE)
            .filter(|&l| l > 0)
            .ok_or(Errno::ENOMEM)?;
        let map_len = NonZeroUsize::new(usize::try_from(len).map_err(|_| Errno::ENOMEM)?)
            .ok_or(Errno::ENOMEM)?;
        // No fork begins while the section lasts, so `forks` is the count under which the
        // mapping below was made (see `fork_gate::forks`).
        let section = GateSection::enter();
        let forks = fork_gate::forks();
        let recycled = self.recycled.lock().take(len);
        let offset = match recycled {
            Some(offset) => offset,
            None => self
                .next_offset
                .get()
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |next| {
                    next.checked_add(len).filter(|&end| end <= ARENA_BYTES)
                })
                .map_err(|_| Errno::ENOMEM)?,
        };
        // A kept range's pages are resident: map them all at once, then clear them.
        let populate = if recycled.is_some() {
            MapFlags::MAP_POPULATE
        } else {
            MapFlags::empty()
        };
        // SAFETY: a fresh shared mapping without MAP_FIXED replaces nothing; the range of the
        // memfd it maps belongs to this allocation alone.
        let ptr = unsafe {
            mman::mmap(
                None,
                map_len,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED | populate,
                self.fd.as_fd(),
                offset as i64,
            )
        };
        let ptr = match ptr {
            Ok(ptr) => ptr.cast::<u8>(),
            Err(errno) => {
                if recycled.is_some() {
                    punch(&self.fd, offset, len);
                }
                return Err(errno.into());
            }
        };
        drop(section);
        if recycled.is_some() {
            // SAFETY: `ptr` is the fresh writable mapping of `len` bytes made above, which
            // nothing else maps (the range was kept because no mapping of it was left).
            unsafe { ptr.as_ptr().write_bytes(0, map_len.get()) };
        }
        Ok(Arc::new(Backing {
            file: self.clone(),
            owner: std::process::id(),
            forks,
            offset,
            len: map_len.get(),
            ptr,
            recycled: recycled.is_some(),
            _reservation: reservation,
        }))
    }
}

/// Release the pages of `[offset, offset + len)`: later reads see zeros.
fn punch(fd: &OwnedFd, offset: u64, len: u64) {
    let _ = fallocate(
        fd.as_fd(),
        FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE,
        offset as i64,
        len as i64,
    );
}

/// One allocation of the memory file, mapped for the simulator.
#[derive(Debug)]
pub(crate) struct Backing {
    file: Arc<MemoryFile>,
    /// The process that allocated the range: only it releases the pages.
    owner: u32,
    /// [`fork_gate::forks`] when the range was mapped: if it has changed when the backing
    /// goes, a child may map the range, and it is punched rather than kept.
    forks: Option<u64>,
    offset: u64,
    len: usize,
    ptr: NonNull<u8>,
    /// Whether the range was kept from an earlier allocation (its pages are resident).
    recycled: bool,
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
        // A kept range's pages are all resident (cleared at allocation): mapping them at once
        // allocates nothing and saves a fault per page.
        let flags = if self.recycled && flags.contains(MapFlags::MAP_SHARED) {
            flags | MapFlags::MAP_POPULATE
        } else {
            flags
        };
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
        // Asked before the mapping goes: only a range whose pages are all in the memory file
        // is worth keeping. Reusing one that was never touched (a queue's CWSR area, a large
        // buffer used in part) would fault in and clear every page the fresh range leaves
        // untouched: 8.5 ms instead of 0.1 ms to create a queue on the simulated MI210.
        let resident = self.len as u64 <= RECYCLE_BYTES && all_resident(self.ptr, self.len);
        // SAFETY: `ptr`/`len` is the mapping this value created and owns; no reference into it
        // outlives `self` (spans hold an `Arc<Backing>`).
        let _ = unsafe { mman::munmap(self.ptr.cast(), self.len) };
        if std::process::id() != self.owner {
            // Inherited across fork: the range still belongs to the parent.
            return;
        }
        let len = self.len as u64;
        let unseen = self.forks.is_some() && fork_gate::forks() == self.forks;
        if resident && unseen && self.file.recycled.lock().keep(self.offset, len) {
            return;
        }
        punch(&self.file.fd, self.offset, len);
    }
}

/// Whether every page of the mapping `[ptr, ptr + len)` (of the memory file) is resident, that
/// is present in the file: what makes a freed range cheap to clear and reuse.
fn all_resident(ptr: NonNull<u8>, len: usize) -> bool {
    /// Pages asked per call: a range that was never touched is usually told by its first
    /// chunk, without asking the page cache about every page of it.
    const CHUNK_PAGES: usize = 64;
    let page = PAGE_SIZE as usize;
    let mut residency = [0u8; CHUNK_PAGES];
    (0..len).step_by(CHUNK_PAGES * page).all(|at| {
        let bytes = (len - at).min(CHUNK_PAGES * page);
        // SAFETY: mincore reads the page tables of this value's own live mapping
        // (`at + bytes <= len`) and writes one byte per page, at most CHUNK_PAGES, into
        // `residency`.
        let rc =
            unsafe { libc::mincore(ptr.as_ptr().add(at).cast(), bytes, residency.as_mut_ptr()) };
        rc == 0
            && residency[..bytes.div_ceil(page)]
                .iter()
                .all(|&p| p & 1 == 1)
    })
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

    #[test]
    fn a_freed_range_is_reused_cleared_by_the_same_size_only() {
        crate::driver::fork_gate::install();
        let file = MemoryFile::new().unwrap();
        let a = file.allocate(3 * 4096, None).unwrap();
        let offset = a.offset;
        for page in 0..3 {
            a.word(page * 512 + 7)
                .unwrap()
                .store(u64::MAX, Ordering::Relaxed);
        }
        drop(a);
        let other = file.allocate(4096, None).unwrap();
        assert_ne!(other.offset, offset, "another size gets another range");
        let b = file.allocate(3 * 4096, None).unwrap();
        assert_eq!(b.offset, offset, "the kept range is reused");
        assert!(b.recycled);
        assert!(b.read(0, 3 * 4096).iter().all(|&b| b == 0), "and cleared");
        // A range with a page never touched is punched, not kept: clearing it for reuse
        // would fault in what a fresh range leaves alone.
        let partly = file.allocate(5 * 4096, None).unwrap();
        let partly_offset = partly.offset;
        partly.word(0).unwrap().store(1, Ordering::Relaxed);
        drop(partly);
        let fresh = file.allocate(5 * 4096, None).unwrap();
        assert_ne!(fresh.offset, partly_offset);
        assert!(!fresh.recycled);
        // More than the cap is punched, not kept: its range is not handed out again.
        let big_len = RECYCLE_BYTES + 4096;
        let big = file.allocate(big_len, None).unwrap();
        let big_offset = big.offset;
        drop(big);
        let again = file.allocate(big_len, None).unwrap();
        assert_ne!(again.offset, big_offset);
        assert!(!again.recycled);
    }
}
