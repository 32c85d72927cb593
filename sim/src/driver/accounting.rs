//! KFD's memory limits (`amdgpu_amdkfd_reserve_mem_limit` and
//! `amdgpu_amdkfd_get_available_memory` in `amdgpu_amdkfd_gpuvm.c`).
//!
//! VRAM is accounted per GPU, system memory (GTT and userptr) machine-wide. An allocation takes
//! a [`Reservation`] that is given back when the buffer is finally released, which, as in the
//! kernel, is when the last reference goes: the BO handle, a GPU mapping or a CPU mapping. All
//! counters are atomics so that releasing never takes a lock (a release can happen on a command
//! processor thread, or in a forked child).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kfd::Errno;

/// `VRAM_AVAILABLITY_ALIGN`: VRAM use is rounded up to 2 MiB per allocation for
/// AVAILABLE_MEMORY.
pub const VRAM_AVAILABILITY_ALIGN: u64 = 1 << 21;
/// `AMDGPU_VM_RESERVED_VRAM`: the minimum VRAM reserved for page tables.
pub const AMDGPU_VM_RESERVED_VRAM: u64 = 8 << 20;
/// `AMDGPU_RESERVE_MEM_LIMIT`: system memory KFD leaves to the rest of the system.
const AMDGPU_RESERVE_MEM_LIMIT: u64 = 3 << 29;

/// Add `size` to `counter` unless the result would exceed `limit`.
fn try_add(counter: &AtomicU64, size: u64, limit: u64) -> bool {
    counter
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
            used.checked_add(size).filter(|&total| total <= limit)
        })
        .is_ok()
}

/// One GPU's VRAM as KFD sees it.
#[derive(Debug)]
pub(crate) struct VramPool {
    size: u64,
    reserved_for_page_tables: u64,
    used: AtomicU64,
    used_aligned: AtomicU64,
}

impl VramPool {
    pub(crate) fn new(size: u64, system_memory: u64) -> Self {
        Self {
            size,
            // ESTIMATE_PT_SIZE(amdgpu_amdkfd_total_mem_size): the estimate is taken from the
            // host's memory size, with AMDGPU_VM_RESERVED_VRAM as the floor.
            reserved_for_page_tables: (system_memory >> 14).max(AMDGPU_VM_RESERVED_VRAM),
            used: AtomicU64::new(0),
            used_aligned: AtomicU64::new(0),
        }
    }

    /// Bytes of VRAM currently allocated.
    pub(crate) fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }

    /// AVAILABLE_MEMORY for a dGPU: free VRAM minus the page-table reserve, aligned down.
    pub(crate) fn available(&self) -> u64 {
        let used = self.used_aligned.load(Ordering::Acquire);
        self.size
            .saturating_sub(used)
            .saturating_sub(self.reserved_for_page_tables)
            / VRAM_AVAILABILITY_ALIGN
            * VRAM_AVAILABILITY_ALIGN
    }
}

/// The machine's system memory limits for KFD.
#[derive(Debug)]
pub(crate) struct SystemPool {
    limit: u64,
    ttm_limit: u64,
    used: AtomicU64,
    ttm_used: AtomicU64,
}

impl SystemPool {
    pub(crate) fn new(system_memory: u64) -> Self {
        // amdgpu_amdkfd_gpuvm_init_mem_limits: 63/64 of RAM minus 1.5 GiB (halved on small
        // machines); the TTM limit is ttm_tt_pages_limit(), half of RAM by default.
        let mut limit = system_memory - (system_memory >> 6);
        if limit < 2 * AMDGPU_RESERVE_MEM_LIMIT {
            limit >>= 1;
        } else {
            limit -= AMDGPU_RESERVE_MEM_LIMIT;
        }
        Self {
            limit,
            ttm_limit: system_memory / 2,
            used: AtomicU64::new(0),
            ttm_used: AtomicU64::new(0),
        }
    }

    /// The GTT heap size (the TTM limit).
    pub(crate) fn gtt_size(&self) -> u64 {
        self.ttm_limit
    }

    /// Bytes of GTT in use.
    pub(crate) fn gtt_used(&self) -> u64 {
        self.ttm_used.load(Ordering::Acquire)
    }
}

/// What an allocation counts against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Charge {
    /// VRAM of one GPU.
    Vram,
    /// GTT: system memory and TTM.
    Gtt,
    /// Userptr: system memory only.
    Userptr,
    /// Doorbell and MMIO BOs are not accounted.
    None,
}

/// Memory taken from the budgets; given back on drop.
#[derive(Debug)]
pub(crate) struct Reservation {
    vram: Option<(Arc<VramPool>, u64)>,
    system: Option<(Arc<SystemPool>, u64, u64)>,
}

impl Reservation {
    /// Reserve `size` (already page-aligned) bytes, or ENOMEM.
    pub(crate) fn take(
        charge: Charge,
        size: u64,
        vram: &Arc<VramPool>,
        system: &Arc<SystemPool>,
    ) -> Result<Self, Errno> {
        match charge {
            Charge::Vram => {
                let limit = vram.size.saturating_sub(vram.reserved_for_page_tables);
                if !try_add(&vram.used, size, limit) {
                    return Err(Errno::ENOMEM);
                }
                let aligned = size.next_multiple_of(VRAM_AVAILABILITY_ALIGN);
                vram.used_aligned.fetch_add(aligned, Ordering::AcqRel);
                Ok(Self {
                    vram: Some((vram.clone(), size)),
                    system: None,
                })
            }
            Charge::Gtt | Charge::Userptr => {
                if !try_add(&system.used, size, system.limit) {
                    return Err(Errno::ENOMEM);
                }
                let ttm = if charge == Charge::Gtt { size } else { 0 };
                if !try_add(&system.ttm_used, ttm, system.ttm_limit) {
                    system.used.fetch_sub(size, Ordering::AcqRel);
                    return Err(Errno::ENOMEM);
                }
                Ok(Self {
                    vram: None,
                    system: Some((system.clone(), size, ttm)),
                })
            }
            Charge::None => Ok(Self {
                vram: None,
                system: None,
            }),
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some((pool, size)) = &self.vram {
            pool.used.fetch_sub(*size, Ordering::AcqRel);
            pool.used_aligned.fetch_sub(
                size.next_multiple_of(VRAM_AVAILABILITY_ALIGN),
                Ordering::AcqRel,
            );
        }
        if let Some((pool, size, ttm)) = &self.system {
            pool.used.fetch_sub(*size, Ordering::AcqRel);
            pool.ttm_used.fetch_sub(*ttm, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vram_runs_out_and_comes_back() {
        let vram = Arc::new(VramPool::new(64 << 20, 64 << 30));
        let system = Arc::new(SystemPool::new(64 << 30));
        // 64 MiB minus the 8 MiB page-table floor.
        assert_eq!(vram.available(), 56 << 20);
        let a = Reservation::take(Charge::Vram, 40 << 20, &vram, &system).unwrap();
        assert_eq!(vram.available(), 16 << 20);
        assert_eq!(
            Reservation::take(Charge::Vram, 17 << 20, &vram, &system).unwrap_err(),
            Errno::ENOMEM
        );
        let small = Reservation::take(Charge::Vram, 4096, &vram, &system).unwrap();
        // A 4 KiB allocation costs 2 MiB of availability.
        assert_eq!(vram.available(), 14 << 20);
        drop((a, small));
        assert_eq!(vram.available(), 56 << 20);
        assert_eq!(vram.used(), 0);
    }

    #[test]
    fn gtt_counts_against_ttm_and_userptr_does_not() {
        let vram = Arc::new(VramPool::new(64 << 20, 4 << 30));
        let system = Arc::new(SystemPool::new(4 << 30));
        let gtt = Reservation::take(Charge::Gtt, 1 << 30, &vram, &system).unwrap();
        assert_eq!(system.gtt_used(), 1 << 30);
        assert_eq!(
            Reservation::take(Charge::Gtt, (1 << 30) + 4096, &vram, &system).unwrap_err(),
            Errno::ENOMEM
        );
        let user = Reservation::take(Charge::Userptr, 1 << 30, &vram, &system).unwrap();
        assert_eq!(system.gtt_used(), 1 << 30);
        drop((gtt, user));
        assert_eq!(system.gtt_used(), 0);
        assert_eq!(system.used.load(Ordering::Acquire), 0);
    }
}
