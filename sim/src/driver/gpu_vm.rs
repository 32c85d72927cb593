//! The GPU page table of one process on one GPU: what MAP_MEMORY_TO_GPU puts in and the
//! device reads through [`GpuVm`].
//!
//! A mapping covers a whole BO attachment at the BO's virtual address; the host side of every
//! span is the simulator's own mapping of the backing memory (or, for userptr BOs, the user's
//! pages), kept alive by the span. Anything outside a mapping faults.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{PoisonError, RwLock};

use kfd::Errno;

use crate::gpu::vm::{Access, FaultKind, GpuVm, HostSpan, MemoryFault};

/// GPU page size (`AMDGPU_GPU_PAGE_SIZE`).
pub(crate) const GPU_PAGE_SIZE: u64 = 4096;
/// `max_pfn << AMDGPU_GPU_PAGE_SHIFT` for the 48-bit GFX9 VM: mappings must end below it.
pub(crate) const GPU_VM_MAX: u64 = 1 << 48;

/// Which BO a mapping belongs to: the owning GPU's index and the BO's IDR id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct BoKey {
    pub device: usize,
    pub idr: u32,
}

#[derive(Clone, Debug)]
struct Mapping {
    span: HostSpan,
    bo: BoKey,
}

/// One process' address space on one GPU.
#[derive(Debug, Default)]
pub(crate) struct PageTable {
    mappings: RwLock<BTreeMap<u64, Mapping>>,
    /// Ranges `[start, end)` the kernel maps for itself at ACQUIRE_VM (the CWSR trap handler's
    /// TBA/TMA pages, on older kernels also the IB page): no user mapping may overlap them. The
    /// simulator keeps no memory behind them (nothing it models reads the trap handler).
    kernel_ranges: RwLock<Vec<(u64, u64)>>,
    generation: AtomicU64,
}

impl PageTable {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<u64, Mapping>> {
        // Mutations are single map operations; a panic cannot leave the map inconsistent.
        self.mappings.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<u64, Mapping>> {
        self.mappings
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// `amdgpu_vm_verify_parameters` plus the overlap check of `amdgpu_vm_bo_map`: EINVAL for
    /// an unaligned, overflowing, out-of-range or overlapping mapping.
    pub(crate) fn check(&self, va: u64, size: u64) -> Result<(), Errno> {
        if va % GPU_PAGE_SIZE != 0 || size % GPU_PAGE_SIZE != 0 || size == 0 {
            return Err(Errno::EINVAL);
        }
        let end = va.checked_add(size).ok_or(Errno::EINVAL)?;
        if end > GPU_VM_MAX {
            return Err(Errno::EINVAL);
        }
        let map = self.read();
        let overlaps = map
            .range(..end)
            .next_back()
            .is_some_and(|(_, m)| m.span.va_end > va);
        let overlaps_kernel = self
            .kernel_ranges
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .any(|&(start, stop)| start < end && va < stop);
        if overlaps || overlaps_kernel {
            Err(Errno::EINVAL)
        } else {
            Ok(())
        }
    }

    /// Map `[va, va + size)` for the kernel's own use (`kfd_process_alloc_gpuvm`): from now on
    /// [`check`](Self::check) refuses user mappings that overlap it.
    pub(crate) fn reserve_for_kernel(&self, va: u64, size: u64) {
        self.kernel_ranges
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push((va, va + size));
    }

    /// Insert spans (already checked) for `bo`.
    pub(crate) fn insert(&self, bo: BoKey, spans: Vec<HostSpan>) {
        let mut map = self.write();
        for span in spans {
            map.insert(span.va_start, Mapping { span, bo });
        }
        drop(map);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Remove every mapping of `bo`.
    pub(crate) fn remove(&self, bo: BoKey) {
        let removed: Vec<Mapping> = {
            let mut map = self.write();
            let keys: Vec<u64> = map
                .iter()
                .filter(|(_, m)| m.bo == bo)
                .map(|(&k, _)| k)
                .collect();
            keys.iter().filter_map(|k| map.remove(k)).collect()
        };
        self.generation.fetch_add(1, Ordering::AcqRel);
        // The backing may be released here, outside the lock.
        drop(removed);
    }

    /// Remove every mapping, the kernel's own included.
    pub(crate) fn clear(&self) {
        self.kernel_ranges
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        let removed = std::mem::take(&mut *self.write());
        self.generation.fetch_add(1, Ordering::AcqRel);
        drop(removed);
    }

    /// The mapping that starts at the page of `va`, as `amdgpu_vm_bo_lookup_mapping` finds
    /// it: its owner and size in bytes.
    pub(crate) fn mapping_at(&self, va: u64) -> Option<(BoKey, u64, u64)> {
        let page = va & !(GPU_PAGE_SIZE - 1);
        let map = self.read();
        let (_, m) = map.range(..=page).next_back()?;
        (m.span.va_end > page).then(|| (m.bo, m.span.va_start, m.span.va_end - m.span.va_start))
    }

    /// Number of mappings (for tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.read().len()
    }
}

impl GpuVm for PageTable {
    fn translate(&self, va: u64, len: u64, access: Access) -> Result<HostSpan, MemoryFault> {
        let fault = |kind| MemoryFault { va, access, kind };
        let map = self.read();
        let Some((_, mapping)) = map.range(..=va).next_back() else {
            return Err(fault(FaultKind::NotPresent));
        };
        let span = &mapping.span;
        if !span.contains(va, len.max(1)) {
            // Report the first byte outside the mapping when the access starts inside it.
            let first_bad = if va < span.va_end { span.va_end } else { va };
            return Err(MemoryFault {
                va: first_bad,
                access,
                kind: FaultKind::NotPresent,
            });
        }
        span.permits(access).map_err(fault)?;
        Ok(span.clone())
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::host_memory::MemoryFile;

    #[test]
    fn accesses_outside_mappings_fault() {
        let file = MemoryFile::new().unwrap();
        let backing = file.allocate(8192, None).unwrap();
        let vm = PageTable::default();
        let key = BoKey { device: 0, idr: 3 };
        let va = 0x7f00_0000_0000;
        vm.check(va, 8192).unwrap();
        vm.insert(key, vec![backing.span(va, 0, 8192, false, true)]);
        assert_eq!(vm.check(va + 4096, 4096), Err(Errno::EINVAL));
        assert_eq!(vm.check(va - 4096, 8192), Err(Errno::EINVAL));
        vm.check(va + 8192, 4096).unwrap();
        assert_eq!(vm.check(va + 1, 4096), Err(Errno::EINVAL));
        assert_eq!(vm.check(GPU_VM_MAX - 4096, 8192), Err(Errno::EINVAL));
        let g = vm.generation();

        let span = vm.translate(va + 16, 8, Access::Read).unwrap();
        assert_eq!(
            span.host_address(va + 16),
            backing.as_ptr().wrapping_add(16)
        );
        assert_eq!(
            vm.translate(va + 16, 8, Access::Write).unwrap_err().kind,
            FaultKind::ReadOnly
        );
        let fault = vm.translate(va + 8190, 4, Access::Read).unwrap_err();
        assert_eq!((fault.va, fault.kind), (va + 8192, FaultKind::NotPresent));
        assert_eq!(
            vm.translate(va - 8, 4, Access::Read).unwrap_err().kind,
            FaultKind::NotPresent
        );
        assert_eq!(vm.mapping_at(va + 4100), Some((key, va, 8192)));

        vm.remove(key);
        assert!(vm.generation() > g);
        assert_eq!(vm.len(), 0);
        // The span handed out earlier still keeps the memory alive.
        assert!(
            span.keep_alive
                .downcast_ref::<crate::driver::host_memory::Backing>()
                .is_some()
        );
    }
}
