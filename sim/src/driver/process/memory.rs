//! Buffer objects: ALLOC_MEMORY_OF_GPU, FREE_MEMORY_OF_GPU, MAP_MEMORY_TO_GPU and
//! UNMAP_MEMORY_FROM_GPU with the checks and errno of `kfd_chardev.c` and
//! `amdgpu_amdkfd_gpuvm.c` (kfd.md §4, §10, §11.4).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use kfd::Errno;
use kfd::abi::mmap_offset::{DOORBELL_SLICE_SIZE, MmapType, encode};
use kfd::abi::{
    AllocFlags, AllocMemoryOfGpuArgs, MapMemoryToGpuArgs, UnmapMemoryFromGpuArgs, handle_gpu_id,
    handle_idr_id, make_handle,
};

use super::doorbell::DoorbellSlice;
use super::{KMALLOC_MAX_SIZE, Pdd, Process, lowest_free};
use crate::driver::accounting::{Charge, Reservation};
use crate::driver::gem::{GemMemory, GemObject};
use crate::driver::gpu_vm::BoKey;
use crate::driver::host_memory::{PAGE_SIZE, range_is_mapped};
use crate::driver::user_memory;
use crate::gpu::vm::HostSpan;

/// What a BO is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BoKind {
    /// Device memory.
    Vram,
    /// Kernel-allocated system memory.
    Gtt,
    /// The user's own pages at this CPU address.
    Userptr(u64),
    /// The process' doorbell slice.
    Doorbell,
    /// The HDP-flush MMIO remap page.
    MmioRemap,
}

/// One buffer object.
pub(crate) struct Bo {
    pub kind: BoKind,
    pub flags: AllocFlags,
    /// The GPU VA recorded at ALLOC (checked at MAP).
    pub va: u64,
    /// Bytes of one attachment (the whole BO, or half of an AQL_QUEUE_MEM BO).
    pub size: u64,
    /// GFX7/8 AQL queue workaround: the memory is mapped twice, back to back.
    pub double_mapped: bool,
    pub gem: Arc<GemObject>,
    /// GPUs this BO is mapped on, with the number of queues using the mapping.
    pub mapped: BTreeMap<usize, u32>,
    /// Userptr accounting lives with the BO (its pages are the user's).
    _reservation: Option<Reservation>,
}

impl Bo {
    /// FREE: no DRM file may mmap the object any more.
    pub(crate) fn revoke(&self) {
        self.gem.revoke();
    }

    /// The device-side spans of this BO's attachment(s) at its VA.
    fn spans(&self) -> Vec<HostSpan> {
        let writable = self.flags.contains(AllocFlags::WRITABLE);
        let executable = self.flags.contains(AllocFlags::EXECUTABLE);
        let copies = if self.double_mapped { 2 } else { 1 };
        (0..copies)
            .map(|copy| {
                let va = self.va + copy * self.size;
                match self.gem.memory() {
                    GemMemory::Backed(backing) => {
                        backing.span(va, 0, self.size, writable, executable)
                    }
                    GemMemory::User => {
                        let BoKind::Userptr(address) = self.kind else {
                            unreachable!("only userptr BOs have user memory")
                        };
                        HostSpan {
                            va_start: va,
                            va_end: va + self.size,
                            host: address as *mut u8,
                            writable,
                            executable,
                            keep_alive: self.gem.clone(),
                        }
                    }
                }
            })
            .collect()
    }
}

/// Which memory a set of flags allocates (`amdgpu_amdkfd_gpuvm_alloc_memory_of_gpu`: VRAM
/// wins over GTT, GTT over the rest).
fn kind_of(flags: AllocFlags, mmap_offset: u64) -> Result<BoKind, Errno> {
    if flags.contains(AllocFlags::VRAM) {
        Ok(BoKind::Vram)
    } else if flags.contains(AllocFlags::GTT) {
        Ok(BoKind::Gtt)
    } else if flags.contains(AllocFlags::USERPTR) {
        if mmap_offset == 0 {
            return Err(Errno::EINVAL);
        }
        Ok(BoKind::Userptr(mmap_offset))
    } else if flags.contains(AllocFlags::DOORBELL) {
        Ok(BoKind::Doorbell)
    } else if flags.contains(AllocFlags::MMIO_REMAP) {
        Ok(BoKind::MmioRemap)
    } else {
        Err(Errno::EINVAL)
    }
}

impl Pdd {
    /// The process doorbell slice of this device, allocated on first use
    /// (`kfd_get_process_doorbells`).
    pub(crate) fn doorbell_slice(
        &mut self,
        memory: &Arc<crate::driver::host_memory::MemoryFile>,
    ) -> Result<Arc<DoorbellSlice>, Errno> {
        if let Some(slice) = &self.doorbells {
            return Ok(slice.clone());
        }
        let slice = DoorbellSlice::new(memory).map_err(|_| Errno::ENOMEM)?;
        self.doorbells = Some(slice.clone());
        Ok(slice)
    }
}

impl Process {
    /// ALLOC_MEMORY_OF_GPU.
    pub(crate) fn alloc_memory(&self, args: &mut AllocMemoryOfGpuArgs) -> Result<(), Errno> {
        if args.size == 0 {
            return Err(Errno::EINVAL);
        }
        // No SVM ranges exist in the simulator, so the EADDRINUSE checks never trigger.
        let flags = AllocFlags::from_bits_retain(args.flags);
        let mut state = self.state();
        let index = self.device_index(args.gpu_id).ok_or(Errno::EINVAL)?;
        let shared = self.shared.clone();
        let pdd = &mut state.pdds[index];
        let device = pdd.device.clone();
        if flags.contains(AllocFlags::PUBLIC | AllocFlags::VRAM) && !device.config.large_bar {
            return Err(Errno::EINVAL);
        }
        let Some(drm_file) = pdd.drm_file.clone() else {
            return Err(Errno::ENODEV);
        };
        let mut doorbells = None;
        if flags.contains(AllocFlags::DOORBELL) {
            if args.size != DOORBELL_SLICE_SIZE as u64 {
                return Err(Errno::EINVAL);
            }
            doorbells = Some(pdd.doorbell_slice(&shared.memory)?);
        } else if flags.contains(AllocFlags::MMIO_REMAP) && args.size != PAGE_SIZE {
            return Err(Errno::EINVAL);
        }
        let kind = kind_of(flags, args.mmap_offset)?;
        if matches!(kind, BoKind::Doorbell | BoKind::MmioRemap) && args.size > u64::from(u32::MAX) {
            return Err(Errno::EINVAL);
        }
        let double_mapped = flags.contains(AllocFlags::AQL_QUEUE_MEM);
        let size = if double_mapped {
            args.size >> 1
        } else {
            args.size
        };
        let size = size
            .checked_next_multiple_of(PAGE_SIZE)
            .filter(|&s| s > 0)
            .ok_or(Errno::ENOMEM)?;
        let charge = match kind {
            BoKind::Vram => Charge::Vram,
            BoKind::Gtt => Charge::Gtt,
            BoKind::Userptr(_) => Charge::Userptr,
            BoKind::Doorbell | BoKind::MmioRemap => Charge::None,
        };
        let reservation = Reservation::take(charge, size, &device.vram, &shared.system)?;
        let (memory, user_reservation) = match kind {
            BoKind::Vram | BoKind::Gtt => (
                GemMemory::Backed(shared.memory.allocate(size, Some(reservation))?),
                None,
            ),
            BoKind::Userptr(address) => {
                // get_user_pages: the whole range must be mapped (EFAULT otherwise). An
                // unaligned start is refused (unconfirmed: the kernel path has no explicit
                // check, but HMM works on whole pages).
                if address % PAGE_SIZE != 0 {
                    return Err(Errno::EINVAL);
                }
                if !range_is_mapped(address, size) {
                    return Err(Errno::EFAULT);
                }
                (GemMemory::User, Some(reservation))
            }
            BoKind::Doorbell => {
                let slice = doorbells.ok_or(Errno::ENOMEM)?;
                (GemMemory::Backed(slice.backing.clone()), None)
            }
            BoKind::MmioRemap => (GemMemory::Backed(device.mmio_page.clone()), None),
        };
        let idr = lowest_free(&pdd.bos, 0).ok_or(Errno::EFAULT)?;
        let gem = device.gem.create(size, memory, drm_file.id);
        let mmap_offset = if kind == BoKind::MmioRemap {
            encode(MmapType::Mmio, args.gpu_id, 0)
        } else {
            gem.offset()
        };
        pdd.bos.insert(
            idr,
            Bo {
                kind,
                flags,
                va: args.va_addr,
                size,
                double_mapped,
                gem,
                mapped: BTreeMap::new(),
                _reservation: user_reservation,
            },
        );
        self.counters.bos.fetch_add(1, Ordering::AcqRel);
        args.handle = make_handle(args.gpu_id, idr);
        args.mmap_offset = mmap_offset;
        Ok(())
    }

    /// FREE_MEMORY_OF_GPU.
    pub(crate) fn free_memory(&self, handle: u64) -> Result<(), Errno> {
        let removed = {
            let mut state = self.state();
            if state.signal_handle != 0 && state.signal_handle == handle {
                return Err(Errno::EPERM);
            }
            let index = self
                .device_index(handle_gpu_id(handle))
                .ok_or(Errno::EINVAL)?;
            let pdd = &mut state.pdds[index];
            let idr = handle_idr_id(handle);
            let bo = pdd.bos.get(&idr).ok_or(Errno::EINVAL)?;
            if !bo.mapped.is_empty() {
                return Err(Errno::EBUSY);
            }
            let removed = pdd.bos.remove(&idr);
            self.counters.bos.fetch_sub(1, Ordering::AcqRel);
            removed
        };
        if let Some(bo) = removed {
            bo.revoke();
        }
        Ok(())
    }

    /// MAP_MEMORY_TO_GPU.
    pub(crate) fn map_memory(&self, args: &mut MapMemoryToGpuArgs) -> Result<(), Errno> {
        let devices = read_device_ids(args.n_devices, args.n_success, args.device_ids_array_ptr)?;
        let mut state = self.state();
        let owner = self
            .device_index(handle_gpu_id(args.handle))
            .ok_or(Errno::EINVAL)?;
        if !state.pdds[owner].bound() {
            return Err(Errno::ENODEV);
        }
        let idr = handle_idr_id(args.handle);
        if !state.pdds[owner].bos.contains_key(&idr) {
            return Err(Errno::ENOMEM);
        }
        let key = BoKey { device: owner, idr };
        for i in args.n_success..args.n_devices {
            let peer = self
                .device_index(devices[i as usize])
                .ok_or(Errno::EINVAL)?;
            if !state.pdds[peer].bound() {
                return Err(Errno::ENODEV);
            }
            let bo = &state.pdds[owner].bos[&idr];
            if !bo.mapped.contains_key(&peer) {
                let copies = if bo.double_mapped { 2 } else { 1 };
                let vm = state.pdds[peer].vm.clone();
                vm.check(bo.va, bo.size * copies)?;
                vm.insert(key, bo.spans());
                if let Some(bo) = state.pdds[owner].bos.get_mut(&idr) {
                    bo.mapped.insert(peer, 0);
                }
            }
            args.n_success = i + 1;
        }
        Ok(())
    }

    /// UNMAP_MEMORY_FROM_GPU (no bind check: §11.4).
    pub(crate) fn unmap_memory(&self, args: &mut UnmapMemoryFromGpuArgs) -> Result<(), Errno> {
        let devices = read_device_ids(args.n_devices, args.n_success, args.device_ids_array_ptr)?;
        let mut state = self.state();
        let owner = self
            .device_index(handle_gpu_id(args.handle))
            .ok_or(Errno::EINVAL)?;
        let idr = handle_idr_id(args.handle);
        if !state.pdds[owner].bos.contains_key(&idr) {
            return Err(Errno::ENOMEM);
        }
        let key = BoKey { device: owner, idr };
        for i in args.n_success..args.n_devices {
            let peer = self
                .device_index(devices[i as usize])
                .ok_or(Errno::EINVAL)?;
            let bo = state.pdds[owner].bos.get_mut(&idr).ok_or(Errno::ENOMEM)?;
            match bo.mapped.get(&peer) {
                None => return Err(Errno::EINVAL),
                Some(&queues) if queues > 0 => return Err(Errno::EBUSY),
                Some(_) => {}
            }
            bo.mapped.remove(&peer);
            state.pdds[peer].vm.remove(key);
            args.n_success = i + 1;
        }
        Ok(())
    }

    /// The CPU range `[start, start + len)` was unmapped: userptr BOs over it lose their pages,
    /// and the GPU faults on them from now on (the kernel's MMU-notifier eviction followed by a
    /// failed restore, which clears the PTEs).
    pub(crate) fn invalidate_user_range(&self, start: u64, len: u64) {
        let end = start.saturating_add(len);
        let state = self.state();
        for (owner, pdd) in state.pdds.iter().enumerate() {
            for (&idr, bo) in &pdd.bos {
                let BoKind::Userptr(address) = bo.kind else {
                    continue;
                };
                if address < end && address + bo.size > start {
                    for &peer in bo.mapped.keys() {
                        state.pdds[peer].vm.remove(BoKey { device: owner, idr });
                    }
                }
            }
        }
    }

    /// The BO `handle` as the event page: its memory, if it can be kernel-mapped.
    pub(crate) fn event_page_memory(
        &self,
        handle: u64,
    ) -> Result<Arc<crate::driver::host_memory::Backing>, Errno> {
        let state = self.state();
        let index = self
            .device_index(handle_gpu_id(handle))
            .ok_or(Errno::EINVAL)?;
        let pdd = &state.pdds[index];
        if !pdd.bound() {
            return Err(Errno::ENODEV);
        }
        let bo = pdd.bos.get(&handle_idr_id(handle)).ok_or(Errno::EINVAL)?;
        match bo.gem.memory() {
            // "userptr can't be mapped to kernel".
            GemMemory::User => Err(Errno::EINVAL),
            GemMemory::Backed(backing) => Ok(backing.clone()),
        }
    }
}

/// The device-id array of MAP/UNMAP, after the argument checks.
fn read_device_ids(n_devices: u32, n_success: u32, ptr: u64) -> Result<Vec<u32>, Errno> {
    if n_devices == 0 || n_success > n_devices {
        return Err(Errno::EINVAL);
    }
    let bytes = u64::from(n_devices) * 4;
    if bytes > KMALLOC_MAX_SIZE {
        return Err(Errno::ENOMEM);
    }
    let raw = user_memory::read_bytes(ptr, bytes as usize)?;
    Ok(raw
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

impl Pdd {
    /// Whether this BO can back a queue buffer on this device: the `BoKey` of the mapping that
    /// starts at the page of `address` with exactly `size` bytes (`size` 0: any size), as
    /// `kfd_queue_buffer_get` checks.
    pub(crate) fn queue_buffer(&self, address: u64, size: u64) -> Result<BoKey, Errno> {
        let (key, start, len) = self.vm.mapping_at(address).ok_or(Errno::EINVAL)?;
        let page = address & !(PAGE_SIZE - 1);
        if page != start || (size >= PAGE_SIZE && size / PAGE_SIZE * PAGE_SIZE != len) {
            return Err(Errno::EINVAL);
        }
        Ok(key)
    }
}

/// Count or release a queue's use of a BO mapping.
pub(crate) fn adjust_queue_refs(pdds: &mut [Pdd], mapped_on: usize, key: BoKey, delta: i32) {
    if let Some(bo) = pdds
        .get_mut(key.device)
        .and_then(|p| p.bos.get_mut(&key.idr))
        && let Some(count) = bo.mapped.get_mut(&mapped_on)
    {
        *count = count.saturating_add_signed(delta);
    }
}
