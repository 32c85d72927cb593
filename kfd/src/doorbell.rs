//! Doorbells: the process' doorbell slice of a GPU, mapped once per open from `/dev/kfd`, and
//! a queue's 64-bit doorbell in it (kfd.md §5.5–§5.6).
//!
//! CREATE_QUEUE returns `doorbell_offset` = DOORBELL type | gpu_id << 46 | the byte offset of
//! the queue's doorbell in the slice. The slice is 1024 doorbells of 8 bytes on GFX9+, rounded
//! up to a page; the kernel insists on mapping it whole (EINVAL otherwise), uncached. Ringing a
//! doorbell of type 2 (GFX9+) is a 64-bit store of the index of the last packet made ready,
//! after the packet is visible (aql.md §2.5).

use std::num::NonZeroUsize;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{Ordering, fence};

use crate::abi::mmap_offset::{self, DOORBELL_SIZE, DOORBELLS_PER_PROCESS, MmapType};
use crate::error::{Error, Result};
use crate::sys::{DoorbellNotifier, MapFlags, MmapAdvise, ProtFlags, Sys};

/// Bytes of a process' doorbell slice on GFX9+ with `page_size`-byte pages.
pub fn doorbell_slice_size(page_size: usize) -> usize {
    (DOORBELL_SIZE * DOORBELLS_PER_PROCESS).next_multiple_of(page_size.max(1))
}

/// Split a CREATE_QUEUE `doorbell_offset` into the mmap offset of its slice and the byte
/// offset of the queue's doorbell inside it; `None` if the offset is not a doorbell offset.
pub fn split_doorbell_offset(doorbell_offset: u64, slice_size: usize) -> Option<(u64, usize)> {
    if mmap_offset::mmap_type(doorbell_offset) != MmapType::Doorbell {
        return None;
    }
    let in_slice = doorbell_offset & (slice_size as u64 - 1);
    if in_slice % DOORBELL_SIZE as u64 != 0 {
        return None;
    }
    Some((doorbell_offset - in_slice, in_slice as usize))
}

/// The CPU mapping of one GPU's doorbell slice.
#[derive(Debug)]
pub struct DoorbellPage {
    sys: Arc<dyn Sys>,
    owner_pid: i32,
    gpu_id: u32,
    mmap_offset: u64,
    base: NonNull<u64>,
    len: usize,
    /// Set by [`DoorbellPage::unmap`], so that the drop does not unmap again.
    unmapped: bool,
}

// SAFETY: the page is device memory accessed only through volatile stores of whole u64s;
// sharing the pointer between threads is what doorbells are for.
unsafe impl Send for DoorbellPage {}
// SAFETY: as above.
unsafe impl Sync for DoorbellPage {}

impl DoorbellPage {
    /// Map the slice at `mmap_offset` (from a queue's doorbell offset) of `kfd_fd`.
    pub fn map(
        sys: &Arc<dyn Sys>,
        kfd_fd: i32,
        gpu_id: u32,
        mmap_offset: u64,
        len: usize,
    ) -> Result<Self> {
        let what = || format!("the doorbell page of GPU {gpu_id:#x}");
        let length = NonZeroUsize::new(len)
            .ok_or_else(|| Error::InvalidArgument(format!("{}: empty slice", what())))?;
        // SAFETY: no MAP_FIXED: the kernel picks a free range and replaces nothing.
        let ptr = unsafe {
            sys.mmap(
                None,
                length,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_SHARED,
                Some(kfd_fd),
                mmap_offset,
            )
        }
        .map_err(|errno| Error::syscall(format!("mmap of {}", what()), errno))?;
        let page = Self {
            sys: Arc::clone(sys),
            owner_pid: sys.process_id(),
            gpu_id,
            mmap_offset,
            base: ptr.cast(),
            len,
            unmapped: false,
        };
        // The kernel makes doorbell mappings VM_DONTCOPY already; say so for any other Sys.
        // SAFETY: MADV_DONTFORK only changes what a fork child inherits.
        unsafe { sys.madvise(ptr, len, MmapAdvise::MADV_DONTFORK) }
            .map_err(|errno| Error::syscall(format!("madvise of {}", what()), errno))?;
        Ok(page)
    }

    /// The GPU.
    pub fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    /// The mmap offset of the slice.
    pub fn mmap_offset(&self) -> u64 {
        self.mmap_offset
    }

    /// Bytes mapped.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a slice is never empty.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The doorbell at byte offset `offset` of the slice.
    pub fn doorbell(self: &Arc<Self>, offset: usize) -> Result<Doorbell> {
        if offset % DOORBELL_SIZE != 0 || offset + DOORBELL_SIZE > self.len {
            return Err(Error::Kernel(format!(
                "doorbell offset {offset:#x} outside the {:#x}-byte slice of GPU {:#x}",
                self.len, self.gpu_id
            )));
        }
        // SAFETY: offset + 8 <= len, so the pointer stays inside the mapping.
        let ptr = unsafe { self.base.byte_add(offset) };
        Ok(Doorbell {
            page: Arc::clone(self),
            ptr,
            notify: self.sys.doorbell_needs_notify(),
            notifier: self.sys.doorbell_notifier(ptr),
        })
    }
}

impl DoorbellPage {
    /// Unmap the page now and report failure (dropping it unmaps too, but silently).
    pub fn unmap(mut self) -> Result<()> {
        let result = self.unmap_in_place();
        self.unmapped = true;
        result
    }

    fn unmap_in_place(&self) -> Result<()> {
        if self.unmapped || self.sys.process_id() != self.owner_pid {
            return Ok(());
        }
        // SAFETY: every Doorbell holds an Arc of this page, and the page is being given up
        // by its last owner, so none is left to use it.
        unsafe { self.sys.munmap(self.base.cast(), self.len) }.map_err(|errno| {
            Error::syscall(
                format!(
                    "munmap of the doorbell page of GPU {:#x} (it stays mapped)",
                    self.gpu_id
                ),
                errno,
            )
        })
    }
}

impl Drop for DoorbellPage {
    fn drop(&mut self) {
        // Nobody to tell in a drop: `unmap` reports, for owners that can.
        let _ = self.unmap_in_place();
    }
}

/// One queue's doorbell.
#[derive(Debug, Clone)]
pub struct Doorbell {
    page: Arc<DoorbellPage>,
    ptr: NonNull<u64>,
    notify: bool,
    /// The other side's handle on this doorbell, resolved when the doorbell was made (the
    /// simulator's command processor); `None` on hardware.
    notifier: Option<Arc<dyn DoorbellNotifier>>,
}

// SAFETY: see DoorbellPage; a doorbell is rung with volatile stores only.
unsafe impl Send for Doorbell {}
// SAFETY: as above.
unsafe impl Sync for Doorbell {}

impl Doorbell {
    /// Ring: make every earlier store visible, then store `value` (for an AQL queue, the index
    /// of the last packet made ready) with one 64-bit volatile store, then tell the other side
    /// of the seam if it asks to be told (the simulator; nothing happens on hardware).
    pub fn ring(&self, value: u64) {
        // ROCr issues an sfence before its doorbell store; a full fence also orders the
        // packet header's release store before the uncached doorbell write.
        fence(Ordering::SeqCst);
        // SAFETY: `ptr` points at an aligned u64 inside the live doorbell mapping (kept alive
        // by `page`); a volatile store is how device registers are written.
        unsafe { self.ptr.as_ptr().write_volatile(value) };
        if let Some(notifier) = &self.notifier {
            notifier.rung(value);
        } else if self.notify {
            self.page.sys.notify_doorbell(self.ptr, value);
        }
    }

    /// The doorbell's host address (for `hardware_doorbell_ptr` in a doorbell signal).
    pub fn address(&self) -> NonNull<u64> {
        self.ptr
    }

    /// The GPU.
    pub fn gpu_id(&self) -> u32 {
        self.page.gpu_id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slice_sizes_follow_the_page() {
        assert_eq!(doorbell_slice_size(4096), 8192);
        assert_eq!(doorbell_slice_size(16384), 16384);
        assert_eq!(doorbell_slice_size(65536), 65536);
    }

    #[test]
    fn offsets_split_into_slice_and_doorbell() {
        let offset = mmap_offset::encode(MmapType::Doorbell, 0x1234, 0x18);
        assert_eq!(
            split_doorbell_offset(offset, 8192),
            Some((mmap_offset::encode(MmapType::Doorbell, 0x1234, 0), 0x18))
        );
        let events = mmap_offset::encode(MmapType::Events, 0, 0x18);
        assert_eq!(split_doorbell_offset(events, 8192), None);
        let unaligned = mmap_offset::encode(MmapType::Doorbell, 0x1234, 0x1c);
        assert_eq!(split_doorbell_offset(unaligned, 8192), None);
        // With 64 KiB pages the whole 64 KiB slice is one mapping.
        let high = mmap_offset::encode(MmapType::Doorbell, 7, 0x1ff8);
        assert_eq!(
            split_doorbell_offset(high, 65536).map(|s| s.1),
            Some(0x1ff8)
        );
    }
}
