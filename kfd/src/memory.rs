//! Buffer objects: GPU memory of every kind KFD offers, placed at one address for the CPU and
//! every GPU, CPU-mapped where the kind allows, and mapped to GPUs by [`GpuMapping`]s.
//!
//! Allocation (kfd.md §4): reserve an address range, ALLOC_MEMORY_OF_GPU with that `va_addr`,
//! then map the CPU view over the range: VRAM and GTT through the GPU's render node at the
//! returned mmap offset, doorbell and MMIO-remap BOs through `/dev/kfd`, user pages
//! (USERPTR) by registering anonymous memory already mapped there. Freeing runs backwards;
//! the kernel refuses to free a BO that is still mapped to a GPU (EBUSY), which cannot happen
//! here because every [`GpuMapping`] keeps its buffer alive.

use std::collections::BTreeMap;
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

use crate::abi::mmap_offset::{self, MmapType};
use crate::abi::{AllocFlags, AllocMemoryOfGpuArgs};
use crate::address_space::{VaRange, default_alignment};
use crate::driver::Kfd;
use crate::error::{Error, Result};
use crate::ioctl::calls as ioctls;
use crate::retry::restarting;
use crate::sys::{MapFlags, ProtFlags};

/// What memory a buffer object is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryKind {
    /// VRAM the CPU maps too (`PUBLIC`; needs a large BAR, EINVAL otherwise).
    VramHostVisible,
    /// VRAM only the GPU reaches; no CPU mapping.
    VramPrivate,
    /// Host memory allocated by the kernel (GTT), coarse grained: coherent with the CPU only
    /// at dispatch boundaries.
    GttCoarse,
    /// GTT, fine grained (`COHERENT`): coherent while kernels run.
    GttFine,
    /// GTT, uncached and coherent: for signals and queue descriptors the CPU polls.
    GttUncached,
    /// Host pages owned by the buffer, registered with the kernel as USERPTR (libhsakmt's
    /// "paged" host memory).
    HostPages,
    /// The process' doorbell slice of the GPU as a BO, for device-side doorbell rings; its size
    /// is the slice size.
    Doorbell,
    /// The GPU's HDP-flush MMIO-remap page; its size is one page (4 KiB pages only).
    MmioRemap,
}

impl MemoryKind {
    /// Every kind.
    pub const ALL: [Self; 8] = [
        Self::VramHostVisible,
        Self::VramPrivate,
        Self::GttCoarse,
        Self::GttFine,
        Self::GttUncached,
        Self::HostPages,
        Self::Doorbell,
        Self::MmioRemap,
    ];

    /// The ALLOC flags of the kind (before WRITABLE/EXECUTABLE). Host pages are fine grained
    /// (`COHERENT`), like ROCr's default system-memory pool.
    pub const fn alloc_flags(self) -> AllocFlags {
        let domain = match self {
            Self::VramHostVisible => AllocFlags::VRAM.union(AllocFlags::PUBLIC),
            Self::VramPrivate => AllocFlags::VRAM,
            Self::GttCoarse => AllocFlags::GTT,
            Self::GttFine => AllocFlags::GTT.union(AllocFlags::COHERENT),
            Self::GttUncached => AllocFlags::GTT
                .union(AllocFlags::COHERENT)
                .union(AllocFlags::UNCACHED),
            Self::HostPages => AllocFlags::USERPTR.union(AllocFlags::COHERENT),
            Self::Doorbell => AllocFlags::DOORBELL.union(AllocFlags::COHERENT),
            Self::MmioRemap => AllocFlags::MMIO_REMAP.union(AllocFlags::COHERENT),
        };
        domain.union(AllocFlags::NO_SUBSTITUTE)
    }

    /// Whether the CPU can read and write the buffer.
    pub const fn host_accessible(self) -> bool {
        !matches!(self, Self::VramPrivate)
    }
}

impl fmt::Display for MemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::VramHostVisible => "host-visible VRAM",
            Self::VramPrivate => "VRAM",
            Self::GttCoarse => "coarse-grained GTT",
            Self::GttFine => "fine-grained GTT",
            Self::GttUncached => "uncached GTT",
            Self::HostPages => "registered host pages",
            Self::Doorbell => "doorbell",
            Self::MmioRemap => "MMIO remap",
        })
    }
}

/// A request for a buffer object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// What memory.
    pub kind: MemoryKind,
    /// Bytes (rounded up to pages).
    pub size: u64,
    /// Whether GPUs may write it.
    pub gpu_writable: bool,
    /// Whether GPUs may execute from it (code objects).
    pub executable: bool,
    /// Address alignment; by default the next power of two of the size, between a page and
    /// 2 MiB.
    pub alignment: Option<u64>,
}

impl Allocation {
    /// `size` bytes of `kind`, GPU-writable, not executable.
    pub const fn new(kind: MemoryKind, size: u64) -> Self {
        Self {
            kind,
            size,
            gpu_writable: true,
            executable: false,
            alignment: None,
        }
    }

    /// Also executable by the GPU.
    #[must_use]
    pub const fn executable(mut self) -> Self {
        self.executable = true;
        self
    }

    /// Read-only for GPUs.
    #[must_use]
    pub const fn gpu_read_only(mut self) -> Self {
        self.gpu_writable = false;
        self
    }

    /// Placed at a multiple of `alignment` (a power of two).
    #[must_use]
    pub const fn aligned(mut self, alignment: u64) -> Self {
        self.alignment = Some(alignment);
        self
    }

    /// The full ALLOC flags.
    pub const fn flags(&self) -> AllocFlags {
        let mut flags = self.kind.alloc_flags();
        if self.gpu_writable {
            flags = flags.union(AllocFlags::WRITABLE);
        }
        if self.executable {
            flags = flags.union(AllocFlags::EXECUTABLE);
        }
        flags
    }
}

/// Where a buffer lives in the address space.
#[derive(Debug)]
enum Placement {
    /// A range of the driver's address space; the CPU mapping (if any) sits over it.
    Reserved(VaRange),
    /// Caller-owned memory registered as USERPTR at its own address.
    UserMemory { address: u64 },
}

/// A buffer object. Dropping it frees it (after every [`GpuMapping`] of it is gone).
pub struct BufferObject {
    kfd: Arc<Kfd>,
    gpu_id: u32,
    handle: u64,
    kind: MemoryKind,
    flags: AllocFlags,
    size: u64,
    placement: Option<Placement>,
    host: Option<NonNull<u8>>,
    /// GPU mappings by gpu_id, with how many [`GpuMapping`]s need each.
    mapped: Mutex<BTreeMap<u32, usize>>,
}

// SAFETY: the host pointer is an address of memory the buffer owns (or was promised, for
// registered user memory); every access through it is an explicit copy in `read`/`write`
// whose races with the GPU are inherent to shared device memory.
unsafe impl Send for BufferObject {}
// SAFETY: as above; the mapping table is behind a mutex.
unsafe impl Sync for BufferObject {}

impl fmt::Debug for BufferObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BufferObject")
            .field("gpu_id", &format_args!("{:#x}", self.gpu_id))
            .field("handle", &format_args!("{:#x}", self.handle))
            .field("kind", &self.kind)
            .field("va", &format_args!("{:#x}", self.va()))
            .field("size", &format_args!("{:#x}", self.size))
            .finish_non_exhaustive()
    }
}

impl Kfd {
    /// Allocate a buffer object owned by GPU `gpu_id`.
    pub fn allocate(
        self: &Arc<Self>,
        gpu_id: u32,
        request: Allocation,
    ) -> Result<Arc<BufferObject>> {
        self.check_process()?;
        let gpu = self.gpu(gpu_id)?;
        let page = self.address_space().page_size();
        let size = match request.kind {
            MemoryKind::Doorbell => gpu.doorbell_slice_size() as u64,
            MemoryKind::MmioRemap => page,
            _ => request.size,
        };
        if size == 0 {
            return Err(Error::InvalidArgument(format!(
                "a buffer of {} must not be empty",
                request.kind
            )));
        }
        if matches!(request.kind, MemoryKind::Doorbell | MemoryKind::MmioRemap)
            && request.size != 0
            && request.size != size
        {
            return Err(Error::InvalidArgument(format!(
                "a {} buffer of GPU {gpu_id:#x} is {size:#x} bytes, not {:#x}",
                request.kind, request.size
            )));
        }
        let align = request
            .alignment
            .unwrap_or_else(|| default_alignment(size, page));
        let range = self.address_space().reserve(size, align)?;
        let size = range.size();
        let what = format!("{size:#x} bytes of {} on GPU {gpu_id:#x}", request.kind);
        let flags = request.flags();

        if request.kind == MemoryKind::HostPages {
            // The pages exist before the kernel is told about them.
            // SAFETY: the range is fresh and unused.
            unsafe {
                range.map_over(
                    size,
                    ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                    MapFlags::MAP_PRIVATE | MapFlags::MAP_ANONYMOUS,
                    None,
                    0,
                    &what,
                )?;
            }
        }
        let mut args = AllocMemoryOfGpuArgs {
            va_addr: range.start(),
            size,
            gpu_id,
            flags: flags.bits(),
            mmap_offset: if request.kind == MemoryKind::HostPages {
                range.start()
            } else {
                0
            },
            ..AllocMemoryOfGpuArgs::default()
        };
        // SAFETY: for HostPages the user pages are the anonymous mapping just made over the
        // range, which the buffer owns until after it is freed; other kinds carry no pointer.
        restarting(|| unsafe {
            ioctls::alloc_memory_of_gpu(self.sys().as_ref(), self.kfd_fd(), &mut args)
        })
        .map_err(|e| self.binding().ioctl_error(format!("allocate {what}"), e))?;

        let mut buffer = BufferObject {
            kfd: Arc::clone(self),
            gpu_id,
            handle: args.handle,
            kind: request.kind,
            flags,
            size,
            placement: None,
            host: None,
            mapped: Mutex::new(BTreeMap::new()),
        };
        self.live.buffers.fetch_add(1, Ordering::Relaxed);
        // From here on dropping `buffer` frees the BO (and the range, once placed).
        let (fd, offset) = match request.kind {
            MemoryKind::VramHostVisible
            | MemoryKind::GttCoarse
            | MemoryKind::GttFine
            | MemoryKind::GttUncached => (Some(gpu.render_fd()), args.mmap_offset),
            // The doorbell slice is mapped from /dev/kfd at the slice's doorbell offset.
            MemoryKind::Doorbell => (
                Some(self.kfd_fd()),
                mmap_offset::encode(MmapType::Doorbell, gpu_id, 0),
            ),
            // The kernel returned a /dev/kfd MMIO offset.
            MemoryKind::MmioRemap => (Some(self.kfd_fd()), args.mmap_offset),
            MemoryKind::VramPrivate | MemoryKind::HostPages => (None, 0),
        };
        let cpu_view = match (request.kind, fd) {
            (MemoryKind::HostPages, _) => Some(range.as_ptr()),
            (_, Some(fd)) => Some(
                // SAFETY: the range is reserved for this buffer and nothing uses it yet.
                unsafe {
                    range.map_over(
                        size,
                        ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                        MapFlags::MAP_SHARED,
                        Some(fd),
                        offset,
                        &what,
                    )
                }?,
            ),
            (_, None) => None,
        };
        buffer.placement = Some(Placement::Reserved(range));
        if let Some(host) = cpu_view {
            buffer.host = Some(host);
            self.live.cpu_mappings.fetch_add(1, Ordering::Relaxed);
        }
        Ok(Arc::new(buffer))
    }

    /// Register caller-owned host memory `[address, address + len)` (page-aligned) with GPU
    /// `gpu_id` as a USERPTR buffer at its own address.
    ///
    /// # Safety
    ///
    /// The memory must stay mapped, and must not be used for anything the GPU's access could
    /// break, until the returned buffer and every mapping of it are dropped. Its range must not
    /// overlap another buffer mapped on the same GPUs.
    pub unsafe fn register_user_memory(
        self: &Arc<Self>,
        gpu_id: u32,
        address: NonNull<u8>,
        len: u64,
    ) -> Result<Arc<BufferObject>> {
        self.check_process()?;
        self.gpu(gpu_id)?;
        let page = self.address_space().page_size();
        let start = address.as_ptr() as u64;
        if len == 0 || start % page != 0 || len % page != 0 {
            return Err(Error::InvalidArgument(format!(
                "user memory {start:#x}+{len:#x} is not whole pages"
            )));
        }
        let flags = MemoryKind::HostPages
            .alloc_flags()
            .union(AllocFlags::WRITABLE);
        let mut args = AllocMemoryOfGpuArgs {
            va_addr: start,
            size: len,
            mmap_offset: start,
            gpu_id,
            flags: flags.bits(),
            ..AllocMemoryOfGpuArgs::default()
        };
        // SAFETY: the caller vouches for the user memory.
        restarting(|| unsafe {
            ioctls::alloc_memory_of_gpu(self.sys().as_ref(), self.kfd_fd(), &mut args)
        })
        .map_err(|e| {
            self.binding().ioctl_error(
                format!("register user memory {start:#x}+{len:#x} with GPU {gpu_id:#x}"),
                e,
            )
        })?;
        self.live.buffers.fetch_add(1, Ordering::Relaxed);
        Ok(Arc::new(BufferObject {
            kfd: Arc::clone(self),
            gpu_id,
            handle: args.handle,
            kind: MemoryKind::HostPages,
            flags,
            size: len,
            placement: Some(Placement::UserMemory { address: start }),
            host: Some(address),
            mapped: Mutex::new(BTreeMap::new()),
        }))
    }
}

impl BufferObject {
    /// The driver it belongs to.
    pub fn kfd(&self) -> &Arc<Kfd> {
        &self.kfd
    }

    /// The GPU that owns it.
    pub fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    /// The kernel's handle (`gpu_id << 32 | id`).
    pub fn handle(&self) -> u64 {
        self.handle
    }

    /// What memory it is.
    pub fn kind(&self) -> MemoryKind {
        self.kind
    }

    /// The ALLOC flags it was made with.
    pub fn flags(&self) -> AllocFlags {
        self.flags
    }

    /// Size in bytes (whole pages).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Its address, the same for the CPU and every GPU it is mapped on.
    pub fn va(&self) -> u64 {
        match &self.placement {
            Some(Placement::Reserved(range)) => range.start(),
            Some(Placement::UserMemory { address }) => *address,
            None => 0,
        }
    }

    /// The CPU view, if the kind has one.
    pub fn host_ptr(&self) -> Option<NonNull<u8>> {
        self.host
    }

    /// GPUs it is mapped on now.
    pub fn mapped_gpus(&self) -> Vec<u32> {
        self.lock_mapped().keys().copied().collect()
    }

    fn lock_mapped(&self) -> std::sync::MutexGuard<'_, BTreeMap<u32, usize>> {
        self.mapped.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn host_range(&self, offset: u64, len: usize) -> Result<NonNull<u8>> {
        self.kfd.check_process()?;
        let host = self
            .host
            .ok_or_else(|| Error::InvalidArgument(format!("{} has no CPU mapping", self.kind)))?;
        let end = offset.checked_add(len as u64);
        if end.is_none_or(|end| end > self.size) {
            return Err(Error::InvalidArgument(format!(
                "{len:#x} bytes at offset {offset:#x} exceed the {:#x}-byte buffer",
                self.size
            )));
        }
        // SAFETY: offset + len <= size, so the pointer stays inside the mapping.
        Ok(unsafe { host.add(offset as usize) })
    }

    /// Copy `bytes` into the buffer at `offset` through the CPU mapping.
    pub fn write(&self, offset: u64, bytes: &[u8]) -> Result<()> {
        let dst = self.host_range(offset, bytes.len())?;
        // SAFETY: `dst..dst+len` lies in the buffer's live CPU mapping, which no Rust
        // reference aliases; the GPU may access the memory concurrently, as with any memory
        // shared with a device, which the copy tolerates.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.as_ptr(), bytes.len()) };
        Ok(())
    }

    /// Copy `bytes.len()` bytes out of the buffer at `offset` through the CPU mapping.
    pub fn read(&self, offset: u64, bytes: &mut [u8]) -> Result<()> {
        let src = self.host_range(offset, bytes.len())?;
        // SAFETY: as for `write`, reading instead.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), bytes.as_mut_ptr(), bytes.len()) };
        Ok(())
    }

    /// Map the buffer on the GPUs `gpu_ids` (its own or peers). Mapping a buffer on a GPU it
    /// is mapped on already only counts another user: the kernel maps once and unmaps when the
    /// last [`GpuMapping`] needing it is dropped.
    pub fn map_to(self: &Arc<Self>, gpu_ids: &[u32]) -> Result<GpuMapping> {
        self.kfd.check_process()?;
        if gpu_ids.is_empty() {
            return Err(Error::InvalidArgument(
                "a GPU mapping needs at least one GPU".to_owned(),
            ));
        }
        let mut wanted: Vec<u32> = gpu_ids.to_vec();
        wanted.sort_unstable();
        wanted.dedup();
        for &id in &wanted {
            self.kfd.gpu(id)?;
        }
        let mut mapped = self.lock_mapped();
        let new: Vec<u32> = wanted
            .iter()
            .copied()
            .filter(|id| !mapped.contains_key(id))
            .collect();
        if !new.is_empty() {
            let sys = self.kfd.sys();
            let mut done = 0;
            let result = restarting(|| {
                ioctls::map_memory_to_gpu(
                    sys.as_ref(),
                    self.kfd.kfd_fd(),
                    self.handle,
                    &new,
                    &mut done,
                )
            });
            if let Err(err) = result {
                // Undo the devices the kernel did map, so the failure leaves nothing behind.
                let partial = &new[..(done as usize).min(new.len())];
                if !partial.is_empty() {
                    let mut undone = 0;
                    let _ = restarting(|| {
                        ioctls::unmap_memory_from_gpu(
                            sys.as_ref(),
                            self.kfd.kfd_fd(),
                            self.handle,
                            partial,
                            &mut undone,
                        )
                    });
                }
                return Err(self
                    .kfd
                    .binding()
                    .ioctl_error(format!("map {self:?} to GPUs {new:x?}"), err));
            }
            self.kfd
                .live
                .gpu_mappings
                .fetch_add(new.len(), Ordering::Relaxed);
        }
        for &id in &wanted {
            *mapped.entry(id).or_insert(0) += 1;
        }
        Ok(GpuMapping {
            buffer: Arc::clone(self),
            gpu_ids: wanted,
        })
    }

    /// Unmap from GPUs whose last user went away.
    fn release_gpus(&self, gpu_ids: &[u32]) -> Result<()> {
        let mut mapped = self.lock_mapped();
        let mut last = Vec::new();
        for &id in gpu_ids {
            if let Some(count) = mapped.get_mut(&id) {
                *count -= 1;
                if *count == 0 {
                    last.push(id);
                }
            }
        }
        if last.is_empty() || !self.kfd.binding().is_owner_process() {
            for id in &last {
                mapped.remove(id);
            }
            return Ok(());
        }
        let mut done = 0;
        let result = restarting(|| {
            ioctls::unmap_memory_from_gpu(
                self.kfd.sys().as_ref(),
                self.kfd.kfd_fd(),
                self.handle,
                &last,
                &mut done,
            )
        });
        let done = (done as usize).min(last.len());
        for id in &last[..done] {
            mapped.remove(id);
        }
        self.kfd
            .live
            .gpu_mappings
            .fetch_sub(done, Ordering::Relaxed);
        result.map_err(|e| {
            self.kfd
                .binding()
                .ioctl_error(format!("unmap {self:?} from GPUs {:x?}", &last[done..]), e)
        })
    }
}

impl Drop for BufferObject {
    fn drop(&mut self) {
        let placement = self.placement.take();
        self.kfd.live.buffers.fetch_sub(1, Ordering::Relaxed);
        if self.host.is_some() && matches!(placement, Some(Placement::Reserved(_))) {
            self.kfd.live.cpu_mappings.fetch_sub(1, Ordering::Relaxed);
        }
        if !self.kfd.binding().is_owner_process() {
            // A fork child: the BO is the parent's; touch neither the kernel nor the range.
            if let Some(Placement::Reserved(range)) = placement {
                range.abandon();
            }
            return;
        }
        let freed = restarting(|| {
            ioctls::free_memory_of_gpu(self.kfd.sys().as_ref(), self.kfd.kfd_fd(), self.handle)
        });
        match freed {
            // The CPU mapping goes with the range, after the kernel let go of the pages.
            Ok(()) => {
                if let Some(Placement::Reserved(range)) = placement {
                    if let Err(error) = range.give_back() {
                        self.kfd.record_drop_error(error);
                    }
                }
            }
            Err(err) => {
                let error = self
                    .kfd
                    .binding()
                    .ioctl_error(format!("free {self:?}"), err);
                self.kfd.record_drop_error(error);
                // The BO may still be mapped to a GPU: never reuse its address range.
                if let Some(Placement::Reserved(range)) = placement {
                    range.abandon();
                }
            }
        }
    }
}

/// A buffer mapped on some GPUs. Dropping it unmaps the buffer from the GPUs no other mapping
/// needs; the buffer lives at least as long.
#[derive(Debug)]
pub struct GpuMapping {
    buffer: Arc<BufferObject>,
    gpu_ids: Vec<u32>,
}

impl GpuMapping {
    /// The buffer.
    pub fn buffer(&self) -> &Arc<BufferObject> {
        &self.buffer
    }

    /// The GPUs it is mapped on (sorted).
    pub fn gpu_ids(&self) -> &[u32] {
        &self.gpu_ids
    }

    /// The buffer's address.
    pub fn va(&self) -> u64 {
        self.buffer.va()
    }

    /// Unmap now and report failure (dropping does the same but can only record the error).
    pub fn unmap(mut self) -> Result<()> {
        let ids = std::mem::take(&mut self.gpu_ids);
        self.buffer.release_gpus(&ids)
    }
}

impl Drop for GpuMapping {
    fn drop(&mut self) {
        if self.gpu_ids.is_empty() {
            return;
        }
        let ids = std::mem::take(&mut self.gpu_ids);
        if let Err(error) = self.buffer.release_gpus(&ids) {
            self.buffer.kfd.record_drop_error(error);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_exactly_one_domain_and_never_substitutes() {
        for kind in MemoryKind::ALL {
            let flags = kind.alloc_flags();
            assert_eq!(
                (flags & AllocFlags::DOMAINS).bits().count_ones(),
                1,
                "{kind}: {flags:?}"
            );
            assert!(flags.contains(AllocFlags::NO_SUBSTITUTE));
        }
        assert_eq!(
            MemoryKind::GttUncached.alloc_flags(),
            AllocFlags::GTT
                | AllocFlags::COHERENT
                | AllocFlags::UNCACHED
                | AllocFlags::NO_SUBSTITUTE
        );
        assert!(
            MemoryKind::VramHostVisible
                .alloc_flags()
                .contains(AllocFlags::PUBLIC)
        );
        assert!(
            !MemoryKind::VramPrivate
                .alloc_flags()
                .contains(AllocFlags::PUBLIC)
        );
        let request = Allocation::new(MemoryKind::GttCoarse, 4096)
            .executable()
            .gpu_read_only();
        assert!(request.flags().contains(AllocFlags::EXECUTABLE));
        assert!(!request.flags().contains(AllocFlags::WRITABLE));
        assert!(
            Allocation::new(MemoryKind::GttCoarse, 1)
                .flags()
                .contains(AllocFlags::WRITABLE)
        );
    }
}
