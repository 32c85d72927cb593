//! mmap of sim files: `/dev/kfd` at the kernel's offset encodings (`kfd_mmap`: doorbell slice,
//! event page, MMIO remap page, CWSR trap pages) and the render node at GEM offsets
//! (`drm_gem_mmap`).

use std::ffi::c_void;
use std::num::NonZeroUsize;
use std::ptr::NonNull;
use std::sync::Arc;

use kfd::Errno;
use kfd::abi::mmap_offset::{self, DOORBELL_SLICE_SIZE, MmapType};
use kfd::sys::{MapFlags, ProtFlags};

use crate::driver::cpu_mappings::Mapped;
use crate::driver::gem::GemMemory;
use crate::driver::host_memory::{Backing, PAGE_SIZE, mark_dont_fork};
use crate::driver::os_kernel::Kernel;

/// `KFD_CWSR_TBA_TMA_SIZE`: the RESERVED_MEM mapping is exactly two pages.
const CWSR_TBA_TMA_SIZE: usize = 2 * PAGE_SIZE as usize;

/// An mmap request.
pub(crate) struct MmapRequest {
    pub addr: Option<NonZeroUsize>,
    pub len: NonZeroUsize,
    pub prot: ProtFlags,
    pub flags: MapFlags,
    pub offset: u64,
}

impl MmapRequest {
    /// The mmap(2) checks before any driver sees the call.
    fn precheck(&self) -> Result<(), Errno> {
        if self.offset % PAGE_SIZE != 0 {
            return Err(Errno::EINVAL);
        }
        let shared = self.flags.contains(MapFlags::MAP_SHARED);
        let private = self.flags.contains(MapFlags::MAP_PRIVATE);
        if shared == private || self.flags.contains(MapFlags::MAP_ANONYMOUS) {
            return Err(Errno::EINVAL);
        }
        Ok(())
    }

    /// The VMA length: the request rounded up to pages.
    fn vma_len(&self) -> u64 {
        (self.len.get() as u64).next_multiple_of(PAGE_SIZE)
    }

    /// Map `backing` from `offset` with this request's address, protection and flags.
    fn map(&self, backing: &Backing, offset: u64) -> Result<NonNull<c_void>, Errno> {
        // SAFETY: the caller of `Sys::mmap` promised that a MAP_FIXED range is theirs to
        // replace (the `Sys::mmap` contract); without MAP_FIXED nothing is replaced.
        unsafe { backing.map_into_process(self.addr, self.len, self.prot, self.flags, offset) }
    }
}

/// mmap on `/dev/kfd`. The process is the caller's, whatever file the fd is (kfd_mmap looks it
/// up from the calling task's mm): none → EINVAL.
pub(crate) fn kfd_mmap(machine: &Kernel, req: &MmapRequest) -> Result<NonNull<c_void>, Errno> {
    req.precheck()?;
    let pid = nix::unistd::getpid().as_raw();
    let process = machine.process_by_pid(pid).ok_or(Errno::EINVAL)?;
    let gpu_id = mmap_offset::gpu_id(req.offset);
    let device = if gpu_id != 0 {
        process.device_index(gpu_id)
    } else {
        None
    };
    let len = req.vma_len();
    let (ptr, mapped) = match mmap_offset::mmap_type(req.offset) {
        MmapType::Doorbell => {
            let index = device.ok_or(Errno::ENODEV)?;
            // "only allow mapping of the entire doorbell allocation".
            if len != DOORBELL_SLICE_SIZE as u64 {
                return Err(Errno::EINVAL);
            }
            let slice = {
                let mut state = process.state();
                state.pdds[index]
                    .doorbell_slice(&machine.shared.memory)
                    .map_err(|_| Errno::ENOMEM)?
            };
            let ptr = req.map(&slice.backing, 0)?;
            (ptr, Mapped::Doorbell(slice))
        }
        MmapType::Events => {
            let mut events = process.events();
            let page = events.page_for_mmap(len)?;
            let ptr = req.map(&page, 0)?;
            events.mapped(len);
            (ptr, Mapped::Kernel { _memory: page })
        }
        MmapType::ReservedMem => {
            let index = device.ok_or(Errno::ENODEV)?;
            if len != CWSR_TBA_TMA_SIZE as u64 {
                return Err(Errno::EINVAL);
            }
            let pages = {
                let mut state = process.state();
                let pdd = &mut state.pdds[index];
                if let Some(p) = &pdd.reserved_memory {
                    p.clone()
                } else {
                    let p = machine
                        .shared
                        .memory
                        .allocate(CWSR_TBA_TMA_SIZE as u64, None)
                        .map_err(|_| Errno::ENOMEM)?;
                    pdd.reserved_memory = Some(p.clone());
                    p
                }
            };
            let ptr = req.map(&pages, 0)?;
            (ptr, Mapped::Kernel { _memory: pages })
        }
        MmapType::Mmio => {
            let index = device.ok_or(Errno::ENODEV)?;
            if len != PAGE_SIZE {
                return Err(Errno::EINVAL);
            }
            let page: Arc<Backing> = machine.shared.devices[index].mmio_page.clone();
            let ptr = req.map(&page, 0)?;
            (ptr, Mapped::Kernel { _memory: page })
        }
    };
    // VM_DONTCOPY: a forked child gets none of these mappings.
    mark_dont_fork(ptr, len as usize);
    machine
        .cpu_mappings
        .insert(ptr.as_ptr() as usize, len as usize, pid, mapped);
    Ok(ptr)
}

/// mmap on a render node of GPU `device` opened as file `file_id`.
pub(crate) fn render_mmap(
    machine: &Kernel,
    device: usize,
    file_id: u64,
    req: &MmapRequest,
) -> Result<NonNull<c_void>, Errno> {
    req.precheck()?;
    let len = req.vma_len();
    let object = machine.shared.devices[device]
        .gem
        .lookup_for_mmap(req.offset, len, file_id)?;
    let GemMemory::Backed(backing) = object.memory() else {
        // amdgpu_gem_object_mmap: userptr BOs cannot be mapped.
        return Err(Errno::EPERM);
    };
    let ptr = req.map(backing, 0)?;
    machine.cpu_mappings.insert(
        ptr.as_ptr() as usize,
        len as usize,
        nix::unistd::getpid().as_raw(),
        Mapped::Gem { _object: object },
    );
    Ok(ptr)
}
