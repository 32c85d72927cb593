//! The GPU virtual address space of an open driver: address ranges reserved in the process
//! (anonymous, `PROT_NONE`, `MAP_NORESERVE`) and handed out aligned, so that the CPU and every
//! GPU see a buffer at one address (the "SVM" model libhsakmt uses on GFX9+, kfd.md §4.2).
//!
//! A buffer's CPU mapping is later placed over its range with `MAP_FIXED`; when the buffer goes,
//! the range is reserved again (`PROT_NONE`, `MAP_FIXED`, which replaces the old mapping
//! atomically, leaving no hole another thread's `mmap` could fall into) and returned to the
//! allocator. Reservations are released when the address space is dropped, which the `Arc`
//! held by every [`VaRange`] defers until the last range is gone.
//!
//! A range that could not be reserved again is *lost*: it may hold a hole that another
//! thread's `mmap` has filled since (a heap arena, a thread stack, another driver's buffer), so
//! it is never handed out and never unmapped again; unmapping a reservation skips it.

use std::num::NonZeroUsize;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{Error, Result};
use crate::sys::{MapFlags, MmapAdvise, ProtFlags, Sys};
use crate::va_allocator::VaAllocator;

/// Address space reserved at a time for ordinary allocations.
const CHUNK_SIZE: u64 = 1 << 32;
/// Largest alignment chosen automatically (libhsakmt's HSA_MAX_VA_ALIGN default, 2 MiB).
pub const MAX_AUTO_ALIGN: u64 = 2 << 20;

/// The default alignment for `size` bytes: the next power of two, between a page and 2 MiB.
pub fn default_alignment(size: u64, page_size: u64) -> u64 {
    size.checked_next_power_of_two()
        .unwrap_or(MAX_AUTO_ALIGN)
        .clamp(page_size, MAX_AUTO_ALIGN)
}

/// Reserved address ranges and what is allocated in them.
#[derive(Debug)]
pub struct AddressSpace {
    sys: Arc<dyn Sys>,
    owner_pid: i32,
    page_size: u64,
    /// Every reservation must lie in `[lowest, highest]`: the GPU VM apertures of all GPUs.
    lowest: u64,
    highest: u64,
    allocator: Mutex<VaAllocator>,
    /// Ranges that could not be reserved again after use: never handed out again.
    lost: Mutex<Vec<LostRange>>,
}

/// A range given up.
#[derive(Clone, Copy, Debug)]
struct LostRange {
    start: u64,
    len: u64,
    /// Whether only this space can have mapped in it (what is mapped there stayed, or it
    /// was reserved again): then it is unmapped with its chunk. Otherwise another thread may
    /// have mapped there since, and it is never unmapped.
    still_ours: bool,
}

/// Why a range was given up.
#[derive(Debug)]
struct Lost {
    error: Error,
    /// See [`LostRange::still_ours`].
    still_ours: bool,
}

impl AddressSpace {
    /// An empty address space whose reservations must fall within `[lowest, highest]`.
    pub fn new(sys: Arc<dyn Sys>, lowest: u64, highest: u64) -> Arc<Self> {
        Arc::new(Self {
            owner_pid: sys.process_id(),
            page_size: sys.page_size() as u64,
            sys,
            lowest,
            highest,
            allocator: Mutex::new(VaAllocator::new()),
            lost: Mutex::new(Vec::new()),
        })
    }

    /// The host page size.
    pub fn page_size(&self) -> u64 {
        self.page_size
    }

    /// Reserve `size` bytes (rounded up to pages) at a multiple of `align` (a power of two, at
    /// least a page), followed by one unused guard page so neighbouring buffers never touch.
    pub fn reserve(self: &Arc<Self>, size: u64, align: u64) -> Result<VaRange> {
        if size == 0 || !align.is_power_of_two() {
            return Err(Error::InvalidArgument(format!(
                "address range of {size:#x} bytes aligned to {align:#x}"
            )));
        }
        let align = align.max(self.page_size);
        let exhausted = || Error::AddressSpaceExhausted { size, align };
        let size = size
            .checked_next_multiple_of(self.page_size)
            .ok_or_else(exhausted)?;
        let with_guard = size.checked_add(self.page_size).ok_or_else(exhausted)?;
        let mut allocator = self
            .allocator
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(start) = allocator.allocate(with_guard, align) {
            return Ok(self.range(start, size, with_guard));
        }
        // Nothing fits: reserve another chunk, big enough for this request even at the worst
        // alignment the kernel's placement could force.
        let chunk = with_guard
            .checked_add(align - self.page_size)
            .ok_or_else(exhausted)?
            .max(CHUNK_SIZE);
        let start = self.reserve_chunk(chunk)?;
        allocator.donate(start, start + chunk);
        let start = allocator
            .allocate(with_guard, align)
            .ok_or_else(exhausted)?;
        Ok(self.range(start, size, with_guard))
    }

    /// Live ranges (for leak checks).
    pub fn live_ranges(&self) -> usize {
        self.allocator
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .allocation_count()
            - self.lost_ranges()
    }

    /// Ranges given up because they could not be reserved again.
    pub fn lost_ranges(&self) -> usize {
        self.lost
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn lose(&self, start: u64, len: u64, lost: &Lost) {
        let mut ranges = self.lost.lock().unwrap_or_else(PoisonError::into_inner);
        ranges.push(LostRange {
            start,
            len,
            still_ours: lost.still_ours,
        });
    }

    /// Bytes of address space reserved from the operating system.
    pub fn reserved_bytes(&self) -> u64 {
        self.allocator
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .donations()
            .map(|(s, e)| e - s)
            .sum()
    }

    fn range(self: &Arc<Self>, start: u64, size: u64, reserved: u64) -> VaRange {
        VaRange {
            space: Arc::clone(self),
            start,
            size,
            reserved,
            given_back: false,
        }
    }

    fn reserve_chunk(&self, size: u64) -> Result<u64> {
        let len = usize::try_from(size)
            .ok()
            .and_then(NonZeroUsize::new)
            .ok_or(Error::AddressSpaceExhausted {
                size,
                align: self.page_size,
            })?;
        // SAFETY: without MAP_FIXED the kernel picks a free range; nothing is replaced.
        let ptr = unsafe {
            self.sys.mmap(
                None,
                len,
                ProtFlags::PROT_NONE,
                MapFlags::MAP_PRIVATE | MapFlags::MAP_ANONYMOUS | MapFlags::MAP_NORESERVE,
                None,
                0,
            )
        }
        .map_err(|errno| Error::syscall("reserving GPU virtual address space", errno))?;
        let start = ptr.as_ptr() as u64;
        let fits = start >= self.lowest
            && start
                .checked_add(size - 1)
                .is_some_and(|last| last <= self.highest);
        if !fits {
            // SAFETY: the reservation was just made and nothing uses it.
            let _ = unsafe { self.sys.munmap(ptr, len.get()) };
            return Err(Error::Kernel(format!(
                "the address range reserved at {start:#x}+{size:#x} lies outside the GPU \
                 aperture {:#x}..={:#x}",
                self.lowest, self.highest
            )));
        }
        Ok(start)
    }

    /// Replace whatever is mapped over `[start, start+len)` by a reservation. On failure the
    /// range must never be handed out again, and the error says why.
    ///
    /// One `MAP_FIXED` mapping replaces the old one atomically: at no moment is the range a
    /// hole, so no other thread's `mmap` can be placed in it. (Unmapping first and reserving
    /// with `MAP_FIXED_NOREPLACE` after left such a moment: a concurrent `mmap` landed in the
    /// hole, the range was lost, and dropping the space unmapped the chunk around it with the
    /// other thread's mapping in it, which then faulted.) The replacement is an unmap of the
    /// old mapping to the kernel and to the simulator alike (the `Sys::mmap` contract).
    ///
    /// If the replacement fails, the range is still given up (the error reports the failed
    /// call), but what is mapped there is released first: it is unmapped, and reserved again
    /// with `MAP_FIXED_NOREPLACE`, which never clobbers what someone else may have mapped in
    /// the moment between.
    ///
    /// # Safety
    ///
    /// Nothing may use the range any more.
    unsafe fn re_reserve(&self, start: u64, len: u64) -> std::result::Result<(), Lost> {
        let lost = |still_ours: bool, error: Error| Lost { error, still_ours };
        let (Some(addr), Some(nonnull), Some(length)) = (
            NonZeroUsize::new(start as usize),
            NonNull::new(start as *mut std::ffi::c_void),
            NonZeroUsize::new(len as usize),
        ) else {
            let why = format!("the address range {start:#x}+{len:#x} is not mappable");
            return Err(lost(true, Error::Kernel(why)));
        };
        let reservation = MapFlags::MAP_PRIVATE | MapFlags::MAP_ANONYMOUS | MapFlags::MAP_NORESERVE;
        // SAFETY: the caller promises nothing uses the range, which was handed out to the
        // caller alone: MAP_FIXED replaces only what the caller mapped there.
        let replaced = unsafe {
            self.sys.mmap(
                Some(addr),
                length,
                ProtFlags::PROT_NONE,
                reservation | MapFlags::MAP_FIXED,
                None,
                0,
            )
        };
        let errno = match replaced {
            Ok(ptr) if ptr.as_ptr() as u64 == start => return Ok(()),
            Ok(elsewhere) => {
                // MAP_FIXED never places a mapping elsewhere; undo one that a Sys did.
                // SAFETY: the mapping was just made and nothing uses it.
                let _ = unsafe { self.sys.munmap(elsewhere, length.get()) };
                crate::Errno::EINVAL
            }
            Err(errno) => errno,
        };
        let failed = Error::syscall(
            format!("reserving the address range {start:#x}+{len:#x} again (it is given up)"),
            errno,
        );
        // SAFETY: the caller promises nothing uses the range.
        if let Err(errno) = unsafe { self.sys.munmap(nonnull, length.get()) } {
            // What is mapped there stays mapped, and stays ours to unmap with the chunk.
            let refused = Error::syscall(
                format!("munmap of {start:#x}+{len:#x} (it stays mapped, its range unused)"),
                errno,
            );
            return Err(lost(true, refused));
        }
        // SAFETY: MAP_FIXED_NOREPLACE replaces nothing; it fails if the range is taken.
        let result = unsafe {
            self.sys.mmap(
                Some(addr),
                length,
                ProtFlags::PROT_NONE,
                reservation | MapFlags::MAP_FIXED_NOREPLACE,
                None,
                0,
            )
        };
        match result {
            // Reserved again: nobody else is in it, so it is unmapped with its chunk.
            Ok(ptr) if ptr.as_ptr() as u64 == start => Err(lost(true, failed)),
            Ok(elsewhere) => {
                // A kernel without MAP_FIXED_NOREPLACE took it as a hint.
                // SAFETY: the mapping was just made and nothing uses it.
                let _ = unsafe { self.sys.munmap(elsewhere, length.get()) };
                Err(lost(false, failed))
            }
            // Someone else may have mapped there meanwhile.
            Err(_) => Err(lost(false, failed)),
        }
    }

    fn release(&self, range: &VaRange) {
        let mut allocator = self
            .allocator
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if allocator.free(range.start).is_err() {
            return;
        }
        // Give oversized chunks back at once; ordinary chunks stay until the space is dropped.
        if let Some((start, end)) = allocator.donation_of(range.start) {
            if end - start > CHUNK_SIZE && allocator.withdraw(start) {
                // A failure leaves the reservation mapped, and out of use: nothing to undo.
                let _ = self.unmap_chunk(start, end - start);
            }
        }
    }

    fn unmap_chunk(&self, start: u64, len: u64) -> Result<()> {
        let Some(ptr) = NonNull::new(start as *mut std::ffi::c_void) else {
            return Ok(());
        };
        // SAFETY: the chunk is wholly free: no range handed out lies in it any more.
        unsafe { self.sys.munmap(ptr, len as usize) }.map_err(|errno| {
            Error::syscall(
                format!("munmap of the address-space reservation {start:#x}+{len:#x} (it stays)"),
                errno,
            )
        })
    }

    /// Give every wholly free reservation back to the operating system now, as dropping the
    /// space does, and report the first unmap that failed (that reservation stays mapped).
    /// For an owner that can report what a drop cannot ([`crate::Kfd::close`]).
    pub fn unmap_reservations(&self) -> Result<()> {
        if self.sys.process_id() != self.owner_pid {
            return Ok(());
        }
        let mut allocator = self
            .allocator
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let chunks: Vec<(u64, u64)> = allocator.donations().collect();
        let mut first_error = None;
        for (start, end) in chunks {
            if allocator.withdraw(start) {
                if let Err(error) = self.unmap_chunk(start, end - start) {
                    first_error.get_or_insert(error);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

impl Drop for AddressSpace {
    fn drop(&mut self) {
        // In a fork child the reservations are the parent's business; leave them alone.
        if self.sys.process_id() != self.owner_pid {
            return;
        }
        let allocator = self
            .allocator
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        let chunks: Vec<(u64, u64)> = allocator.donations().collect();
        // Lost ranges that another thread may have mapped in since are no longer this space's
        // to unmap.
        let foreign: Vec<(u64, u64)> = self
            .lost
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|l| !l.still_ours)
            .map(|l| (l.start, l.len))
            .collect();
        for (start, end) in chunks {
            // Nobody to tell in a drop: `unmap_reservations` reports, for owners that can.
            for (piece_start, piece_end) in owned_pieces(start, end, &foreign) {
                let _ = self.unmap_chunk(piece_start, piece_end - piece_start);
            }
        }
    }
}

/// The parts (`(start, end)`) of `[start, end)` outside every lost range (given as
/// `(start, len)`), in address order.
fn owned_pieces(start: u64, end: u64, lost: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut holes: Vec<(u64, u64)> = lost
        .iter()
        .map(|&(s, len)| (s.max(start), s.saturating_add(len).min(end)))
        .filter(|&(s, e)| s < e)
        .collect();
    holes.sort_unstable();
    let mut pieces = Vec::new();
    let mut at = start;
    for (s, e) in holes {
        if s > at {
            pieces.push((at, s));
        }
        at = at.max(e);
    }
    if at < end {
        pieces.push((at, end));
    }
    pieces
}

/// A reserved GPU virtual address range, `size` bytes at `start` (a guard page follows it).
/// Dropping it reserves the range again and returns it for reuse.
#[derive(Debug)]
pub struct VaRange {
    space: Arc<AddressSpace>,
    start: u64,
    size: u64,
    reserved: u64,
    /// Set by [`VaRange::give_back`], so that the drop does not give it back again.
    given_back: bool,
}

impl VaRange {
    /// First address.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Usable bytes (a multiple of the page size).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The first address as a non-null host pointer (GPU VA = CPU VA).
    pub fn as_ptr(&self) -> NonNull<u8> {
        // The allocator never hands out address 0: reservations come from mmap.
        NonNull::new(self.start as *mut u8).unwrap_or(NonNull::dangling())
    }

    /// Give the range up without touching the address space (a fork child must not).
    pub fn abandon(self) {
        std::mem::forget(self);
    }

    /// The system interface the range was reserved through.
    pub fn sys(&self) -> &Arc<dyn Sys> {
        &self.space.sys
    }

    /// Map `len` bytes of `fd` at `offset` (or anonymous memory for `fd == None`) over the
    /// start of the range with `MAP_FIXED`, and mark it `MADV_DONTFORK` so that a fork child
    /// holds no reference to device memory (libhsakmt does the same). The mapping is removed
    /// when the range is dropped.
    ///
    /// # Safety
    ///
    /// Nothing may be using the start of the range (it holds only the reservation or an
    /// earlier mapping nobody uses).
    pub unsafe fn map_over(
        &self,
        len: u64,
        prot: ProtFlags,
        flags: MapFlags,
        fd: Option<std::os::fd::RawFd>,
        offset: u64,
        what: &str,
    ) -> Result<NonNull<u8>> {
        if len == 0 || len > self.size {
            return Err(Error::InvalidArgument(format!(
                "{what}: {len:#x} bytes do not fit the {:#x}-byte range",
                self.size
            )));
        }
        let (Some(addr), Some(length)) = (
            NonZeroUsize::new(self.start as usize),
            NonZeroUsize::new(len as usize),
        ) else {
            return Err(Error::InvalidArgument(format!("{what}: empty range")));
        };
        // SAFETY: the caller promises nothing uses the range; MAP_FIXED replaces only our own
        // reservation there.
        let ptr = unsafe {
            self.space.sys.mmap(
                Some(addr),
                length,
                prot,
                flags | MapFlags::MAP_FIXED,
                fd,
                offset,
            )
        }
        .map_err(|errno| Error::syscall(format!("mmap of {what}"), errno))?;
        if ptr.as_ptr() as u64 != self.start {
            return Err(Error::Kernel(format!(
                "mmap of {what} at {:#x} returned {:p}",
                self.start,
                ptr.as_ptr()
            )));
        }
        // SAFETY: MADV_DONTFORK only changes what a fork child inherits.
        unsafe {
            self.space
                .sys
                .madvise(ptr, length.get(), MmapAdvise::MADV_DONTFORK)
        }
        .map_err(|errno| Error::syscall(format!("madvise(MADV_DONTFORK) of {what}"), errno))?;
        Ok(ptr.cast())
    }
}

impl VaRange {
    /// Unmap whatever is mapped over the range, reserve it again and return it for reuse, as
    /// dropping it does, but say when that failed (the range is then never handed out again,
    /// and what was mapped there may stay mapped).
    pub fn give_back(mut self) -> Result<()> {
        let result = self.give_back_in_place();
        self.given_back = true;
        result
    }

    fn give_back_in_place(&self) -> Result<()> {
        if self.given_back || self.space.sys.process_id() != self.space.owner_pid {
            return Ok(());
        }
        // SAFETY: the range was handed out to this VaRange alone, and its owner (a buffer
        // object) has stopped using it before giving it back.
        match unsafe { self.space.re_reserve(self.start, self.reserved) } {
            Ok(()) => {
                self.space.release(self);
                Ok(())
            }
            Err(lost) => {
                self.space.lose(self.start, self.reserved, &lost);
                Err(lost.error)
            }
        }
    }
}

impl Drop for VaRange {
    fn drop(&mut self) {
        // A failure is counted in `lost_ranges`; owners that can report it use `give_back`.
        let _ = self.give_back_in_place();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::atomic::Ordering::SeqCst;

    use super::*;
    use crate::{Errno, Linux};

    #[test]
    fn alignment_policy() {
        assert_eq!(default_alignment(1, 4096), 4096);
        assert_eq!(default_alignment(5000, 4096), 8192);
        assert_eq!(default_alignment(3 << 20, 4096), 2 << 20);
        assert_eq!(default_alignment(u64::MAX, 4096), 2 << 20);
    }

    #[test]
    fn ranges_are_aligned_disjoint_and_returned() {
        let space = AddressSpace::new(Arc::new(Linux), 0x100_0000, (1 << 47) - 1);
        let a = space.reserve(0x1000, 0x1000).unwrap();
        let b = space.reserve(0x3000, 0x20_0000).unwrap();
        let c = space.reserve(0x1000, 0x1000).unwrap();
        assert_eq!(b.start() % 0x20_0000, 0);
        let ranges = [
            (a.start(), a.size()),
            (b.start(), b.size()),
            (c.start(), c.size()),
        ];
        for (i, &(s1, l1)) in ranges.iter().enumerate() {
            for &(s2, l2) in &ranges[i + 1..] {
                // One guard page at least between any two ranges.
                assert!(
                    s1 + l1 < s2 || s2 + l2 < s1,
                    "{s1:#x}+{l1:#x} vs {s2:#x}+{l2:#x}"
                );
            }
        }
        assert_eq!(space.live_ranges(), 3);
        let reused = a.start();
        drop(a);
        assert_eq!(space.live_ranges(), 2);
        let again = space.reserve(0x1000, 0x1000).unwrap();
        assert_eq!(again.start(), reused, "a freed range is reused first");
        drop((b, c, again));
        assert_eq!(space.live_ranges(), 0);
        assert_eq!(space.reserved_bytes(), CHUNK_SIZE);
    }

    #[test]
    fn oversized_ranges_get_their_own_chunk_and_give_it_back() {
        let space = AddressSpace::new(Arc::new(Linux), 0x100_0000, (1 << 47) - 1);
        let big = space.reserve(CHUNK_SIZE, 0x1000).unwrap();
        assert!(space.reserved_bytes() > CHUNK_SIZE);
        drop(big);
        assert_eq!(space.reserved_bytes(), 0);
    }

    /// Linux, and another thread that maps a page of its own into whatever range an unmap
    /// opens (armed once), as a concurrent `mmap` of the kernel's choosing may; and, if told,
    /// a `MAP_FIXED` replacement that fails (a full map count).
    #[derive(Debug, Default)]
    struct OtherThread {
        armed: AtomicBool,
        fail_replacements: AtomicBool,
        /// The page the other thread mapped: never ours to unmap.
        its_page: Mutex<Option<usize>>,
        /// Every range unmapped through this Sys (what the space gave up, whoever maps
        /// there later: other tests run beside these).
        unmapped: Mutex<Vec<(usize, usize)>>,
    }

    impl OtherThread {
        /// Whether the space unmapped the page at `address` through this Sys.
        fn unmapped(&self, address: usize) -> bool {
            self.unmapped
                .lock()
                .unwrap()
                .iter()
                .any(|&(start, len)| (start..start + len).contains(&address))
        }
    }

    impl Sys for OtherThread {
        fn backend(&self) -> crate::sys::Backend {
            Linux.backend()
        }
        fn open(&self, path: &std::path::Path, flags: crate::sys::OFlag) -> Result<i32, Errno> {
            Linux.open(path, flags)
        }
        fn close(&self, fd: i32) -> Result<(), Errno> {
            Linux.close(fd)
        }
        unsafe fn ioctl(
            &self,
            fd: i32,
            request: crate::Opcode,
            arg: *mut std::ffi::c_void,
        ) -> Result<i32, Errno> {
            // SAFETY: forwarded (the Sys::ioctl contract).
            unsafe { Linux.ioctl(fd, request, arg) }
        }
        unsafe fn mmap(
            &self,
            addr: Option<NonZeroUsize>,
            len: NonZeroUsize,
            prot: ProtFlags,
            flags: MapFlags,
            fd: Option<i32>,
            offset: u64,
        ) -> Result<NonNull<std::ffi::c_void>, Errno> {
            if flags.contains(MapFlags::MAP_FIXED) && self.fail_replacements.load(SeqCst) {
                return Err(Errno::ENOMEM);
            }
            // SAFETY: forwarded (the Sys::mmap contract).
            unsafe { Linux.mmap(addr, len, prot, flags, fd, offset) }
        }
        unsafe fn munmap(&self, addr: NonNull<std::ffi::c_void>, len: usize) -> Result<(), Errno> {
            // SAFETY: forwarded (the Sys::munmap contract).
            unsafe { Linux.munmap(addr, len) }?;
            self.unmapped
                .lock()
                .unwrap()
                .push((addr.as_ptr() as usize, len));
            if self.armed.swap(false, SeqCst) {
                // SAFETY: MAP_FIXED_NOREPLACE replaces nothing: it lands only in the hole.
                let page = unsafe {
                    Linux.mmap(
                        NonZeroUsize::new(addr.as_ptr() as usize),
                        NonZeroUsize::new(4096).unwrap(),
                        ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                        MapFlags::MAP_PRIVATE
                            | MapFlags::MAP_ANONYMOUS
                            | MapFlags::MAP_FIXED_NOREPLACE,
                        None,
                        0,
                    )
                };
                // Taken already by someone else (other tests run beside these): no page.
                *self.its_page.lock().unwrap() = page.ok().map(|p| p.as_ptr() as usize);
            }
            Ok(())
        }
        unsafe fn madvise(
            &self,
            addr: NonNull<std::ffi::c_void>,
            len: usize,
            advice: MmapAdvise,
        ) -> Result<(), Errno> {
            // SAFETY: forwarded (the Sys::madvise contract).
            unsafe { Linux.madvise(addr, len, advice) }
        }
        fn read_file(&self, path: &std::path::Path) -> Result<Vec<u8>, Errno> {
            Linux.read_file(path)
        }
        fn read_dir(&self, path: &std::path::Path) -> Result<Vec<std::ffi::OsString>, Errno> {
            Linux.read_dir(path)
        }
        fn process_id(&self) -> i32 {
            Linux.process_id()
        }
        fn page_size(&self) -> usize {
            Linux.page_size()
        }
    }

    /// Whether the page at `address` is mapped (mincore fails with ENOMEM where it is not).
    fn mapped(address: usize) -> bool {
        let mut residency = 0u8;
        // SAFETY: mincore only reads the page tables and writes one byte.
        unsafe { libc::mincore(address as *mut libc::c_void, 4096, &raw mut residency) == 0 }
    }

    /// A range with a buffer's CPU mapping over it, in a fresh space over `sys`.
    fn used_range(sys: &Arc<OtherThread>) -> (Arc<AddressSpace>, VaRange) {
        let space = AddressSpace::new(sys.clone(), 0x100_0000, (1 << 47) - 1);
        let range = space.reserve(0x10000, 0x10000).unwrap();
        // SAFETY: the range is fresh and unused.
        unsafe {
            range.map_over(
                0x10000,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_PRIVATE | MapFlags::MAP_ANONYMOUS,
                None,
                0,
                "a buffer",
            )
        }
        .unwrap();
        (space, range)
    }

    #[test]
    fn giving_a_range_back_opens_no_hole_for_another_thread() {
        let sys = Arc::new(OtherThread::default());
        let (space, range) = used_range(&sys);
        let start = range.start();
        sys.armed.store(true, SeqCst);
        range.give_back().unwrap();
        assert!(sys.armed.swap(false, SeqCst), "no unmap opened a hole");
        assert_eq!((space.lost_ranges(), space.live_ranges()), (0, 0));
        assert_eq!(space.reserve(0x10000, 0x10000).unwrap().start(), start);
    }

    /// The crash this guards against: a range lost because another thread mapped into it
    /// was unmapped with its chunk when the space went, and the other thread faulted.
    #[test]
    fn a_lost_range_is_never_unmapped() {
        let sys = Arc::new(OtherThread::default());
        let (space, range) = used_range(&sys);
        let (start, reserved) = (range.start(), range.reserved);
        sys.fail_replacements.store(true, SeqCst);
        sys.armed.store(true, SeqCst);
        range.give_back().unwrap_err();
        let its_page = sys.its_page.lock().unwrap().take().unwrap();
        assert_eq!(its_page as u64, start);
        assert_eq!((space.lost_ranges(), space.live_ranges()), (1, 0));
        sys.unmapped.lock().unwrap().clear();
        drop(space);
        assert!(mapped(its_page), "the other thread's page is still mapped");
        assert!(
            !sys.unmapped(its_page),
            "the other thread's page was not unmapped"
        );
        assert!(
            sys.unmapped((start + reserved) as usize),
            "the rest of the reservation is given back"
        );
        // SAFETY: the other thread's page, mapped above and unused.
        unsafe { Linux.munmap(NonNull::new(its_page as *mut _).unwrap(), 4096) }.unwrap();
    }

    /// A failed replacement gives the range up, but what was mapped there is released, and the
    /// range, reserved again, still goes with its chunk.
    #[test]
    fn a_range_whose_replacement_failed_is_given_up_and_released() {
        let sys = Arc::new(OtherThread::default());
        let (space, range) = used_range(&sys);
        let start = range.start();
        sys.fail_replacements.store(true, SeqCst);
        let error = range.give_back().unwrap_err();
        assert!(error.to_string().contains("given up"), "{error}");
        assert_eq!(error.errno(), Some(Errno::ENOMEM));
        sys.fail_replacements.store(false, SeqCst);
        assert_eq!((space.lost_ranges(), space.live_ranges()), (1, 0));
        assert_ne!(space.reserve(0x10000, 0x10000).unwrap().start(), start);
        assert!(mapped(start as usize), "reserved again");
        sys.unmapped.lock().unwrap().clear();
        drop(space);
        assert!(sys.unmapped(start as usize), "unmapped with its chunk");
    }

    #[test]
    fn owned_pieces_skip_lost_ranges() {
        assert_eq!(owned_pieces(0, 100, &[]), [(0, 100)]);
        assert_eq!(
            owned_pieces(0, 100, &[(40, 10), (0, 5), (95, 20), (200, 1)]),
            [(5, 40), (50, 95)]
        );
    }

    #[test]
    fn bad_requests_are_errors() {
        let space = AddressSpace::new(Arc::new(Linux), 0x100_0000, (1 << 47) - 1);
        assert!(matches!(
            space.reserve(0, 4096),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            space.reserve(4096, 3),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            space.reserve(u64::MAX - 10, 4096),
            Err(Error::AddressSpaceExhausted { .. })
        ));
        // An aperture nothing can satisfy.
        let tiny = AddressSpace::new(Arc::new(Linux), 0x1000, 0x2000);
        assert!(matches!(tiny.reserve(4096, 4096), Err(Error::Kernel(_))));
    }
}
