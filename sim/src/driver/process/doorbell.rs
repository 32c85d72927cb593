//! The per-process, per-GPU doorbell slice (kfd_doorbell.c): 1024 64-bit doorbells in 8 KiB,
//! mapped by the driver through `/dev/kfd` and by the simulator for the command processors.
//!
//! On SOC15 parts a compute queue gets the lowest free doorbell index of a per-process bitmap
//! in which the indices reserved for SDMA, IH and VCN (and their +512 mirrors) are pre-set.

use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use kfd::Errno;
use kfd::abi::mmap_offset::{DOORBELL_SIZE, DOORBELL_SLICE_SIZE, DOORBELLS_PER_PROCESS};

use crate::driver::host_memory::{Backing, MemoryFile};
use crate::gpu::queue::RunningQueue;
use crate::gpu::target::GfxTarget;

/// A running command processor, shared by the queue and its doorbell: what a doorbell write
/// reaches.
pub(crate) struct QueueRunner {
    pub(super) running: Box<dyn RunningQueue>,
    /// The doorbell value [`DoorbellSlice::poll`] saw last ([`NO_DOORBELL_STORE`] before any).
    pub(super) polled: AtomicU64,
    /// Whether the runner listens on its doorbell (from attach to detach): a
    /// [`CachedDoorbell`] that finds it cleared looks the doorbell up again.
    attached: AtomicBool,
}

/// What a doorbell holds from CREATE_QUEUE until the first store: a value no AQL producer
/// stores (it would be the index of packet 2^64 - 1), so that polling notices a first store of
/// 0. The doorbell memory is kernel-owned; on hardware it is MMIO and reads of it mean nothing,
/// so no client depends on what it holds.
pub(crate) const NO_DOORBELL_STORE: u64 = u64::MAX;

impl QueueRunner {
    /// A runner for `running`, whose doorbell has not been stored to yet.
    pub(super) fn new(running: Box<dyn RunningQueue>) -> Self {
        Self {
            running,
            polled: AtomicU64::new(NO_DOORBELL_STORE),
            attached: AtomicBool::new(false),
        }
    }

    pub(crate) fn doorbell_rung(&self, value: u64) {
        self.running.doorbell_rung(value);
    }

    pub(crate) fn update(&self, ring_va: u64, ring_bytes: u64, percentage: u32, priority: u32) {
        self.running
            .update(ring_va, ring_bytes, percentage, priority);
    }

    pub(crate) fn stop(&self) {
        self.running.stop();
    }
}

/// `KFD_QUEUE_DOORBELL_MIRROR_OFFSET`.
const MIRROR_OFFSET: usize = 512;

/// The non-CP doorbell range of the device's doorbell layout (`first_non_cp..=last_non_cp`):
/// Vega20's layout for GC 9.4.2 (SDMA from 0x100 to VCE ring 6/7 at 0x18F), layout 1 for
/// GC 9.4.3 (SDMA from 0x100 to VCN end at 0x1E8), Navi 10's layout for GC 11 (soc21 uses
/// it: SDMA engine 0 at 0x100 to VCNe_f at 0x18F). From amdgpu_doorbell.h; unconfirmed on
/// hardware. Compute queues never reach these indices below 256 queues.
fn reserved_range(target: GfxTarget) -> std::ops::RangeInclusive<usize> {
    match target {
        GfxTarget::Gfx90a | GfxTarget::Gfx1100 => 0x100..=0x18F,
        GfxTarget::Gfx942 => 0x100..=0x1E8,
    }
}

/// The doorbell bitmap of a new process (`init_doorbell_bitmap`).
pub(crate) fn initial_bitmap(target: GfxTarget) -> [u64; 16] {
    let mut bitmap = [0u64; 16];
    for i in reserved_range(target) {
        for bit in [i, i + MIRROR_OFFSET] {
            bitmap[bit / 64] |= 1 << (bit % 64);
        }
    }
    bitmap
}

/// Take the lowest free doorbell index, or EBUSY.
pub(crate) fn allocate_index(bitmap: &mut [u64; 16]) -> Result<u32, Errno> {
    for (word_index, word) in bitmap.iter_mut().enumerate() {
        if *word != u64::MAX {
            let bit = word.trailing_ones() as usize;
            *word |= 1 << bit;
            return Ok((word_index * 64 + bit) as u32);
        }
    }
    Err(Errno::EBUSY)
}

/// Give an index back.
pub(crate) fn release_index(bitmap: &mut [u64; 16], index: u32) {
    let index = index as usize % DOORBELLS_PER_PROCESS;
    bitmap[index / 64] &= !(1 << (index % 64));
}

/// One doorbell slice.
pub(crate) struct DoorbellSlice {
    pub backing: Arc<Backing>,
    runners: RwLock<HashMap<u32, Arc<QueueRunner>>>,
}

impl std::fmt::Debug for DoorbellSlice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DoorbellSlice").finish_non_exhaustive()
    }
}

impl DoorbellSlice {
    pub(crate) fn new(memory: &Arc<MemoryFile>) -> Result<Arc<Self>, Errno> {
        Ok(Arc::new(Self {
            backing: memory.allocate(DOORBELL_SLICE_SIZE as u64, None)?,
            runners: RwLock::new(HashMap::new()),
        }))
    }

    /// The simulator's view of doorbell `index` (what [`crate::gpu::queue::QueueSpec::doorbell`]
    /// holds).
    pub(crate) fn doorbell_ptr(&self, index: u32) -> NonNull<u64> {
        let ptr = self
            .backing
            .as_ptr()
            .wrapping_add(index as usize % DOORBELLS_PER_PROCESS * DOORBELL_SIZE);
        // The backing is a page-aligned live mapping (never null), so every doorbell is 8-aligned.
        #[allow(clippy::cast_ptr_alignment)]
        let ptr = ptr.cast::<u64>();
        NonNull::new(ptr).unwrap_or(NonNull::dangling())
    }

    pub(crate) fn attach(&self, index: u32, runner: Arc<QueueRunner>) {
        // SAFETY: `doorbell_ptr` points into this slice's live, 8-aligned backing, which is
        // only ever accessed with atomic operations.
        unsafe { AtomicU64::from_ptr(self.doorbell_ptr(index).as_ptr()) }
            .store(NO_DOORBELL_STORE, Ordering::Release);
        runner.attached.store(true, Ordering::Release);
        self.runners
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(index, runner);
    }

    pub(crate) fn detach(&self, index: u32) {
        let runner = self
            .runners
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&index);
        if let Some(runner) = runner {
            runner.attached.store(false, Ordering::Release);
        }
    }

    /// Look at every attached doorbell and wake the queues whose doorbell holds a value it did
    /// not hold at the last look: for a way in where doorbell stores reach the simulator only as
    /// memory (an LD_PRELOAD interposer serving programs that know nothing of
    /// [`kfd::Sys::notify_doorbell`]), as the hardware's doorbell unit sees every store.
    /// Returns how many queues were woken. Storing the same value twice wakes once: the command
    /// processor works to the highest value anyway.
    pub(crate) fn poll(&self) -> usize {
        let runners = self.runners.read().unwrap_or_else(PoisonError::into_inner);
        let mut woken = 0;
        for (&index, runner) in runners.iter() {
            // SAFETY: as in `attach`: a live, aligned doorbell of this slice.
            let value = unsafe { AtomicU64::from_ptr(self.doorbell_ptr(index).as_ptr()) }
                .load(Ordering::Acquire);
            if value != NO_DOORBELL_STORE && runner.polled.swap(value, Ordering::AcqRel) != value {
                runner.doorbell_rung(value);
                woken += 1;
            }
        }
        woken
    }

    /// The queue listening on the doorbell at byte `offset` of the slice.
    pub(crate) fn runner_at(&self, offset: usize) -> Option<Arc<QueueRunner>> {
        let index = (offset / DOORBELL_SIZE) as u32;
        self.runners
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&index)
            .cloned()
    }
}

/// A doorbell of a slice with the queue that listens on it looked up once
/// ([`kfd::Sys::doorbell_notifier`]): a store then reaches the command processor without a
/// lock or a map lookup, as a store to a doorbell page reaches hardware's doorbell unit.
///
/// The doorbell belongs to whichever queue holds its index now: once the cached queue is
/// destroyed (detached), each store looks the index up again, so a reused index reaches the
/// new queue as on hardware.
pub(crate) struct CachedDoorbell {
    slice: Arc<DoorbellSlice>,
    offset: usize,
    runner: Arc<QueueRunner>,
}

impl CachedDoorbell {
    /// The doorbell at byte `offset` of `slice`, if a queue listens on it now.
    pub(crate) fn resolve(slice: Arc<DoorbellSlice>, offset: usize) -> Option<Self> {
        let runner = slice.runner_at(offset)?;
        Some(Self {
            slice,
            offset,
            runner,
        })
    }
}

impl std::fmt::Debug for CachedDoorbell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedDoorbell")
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl kfd::DoorbellNotifier for CachedDoorbell {
    fn rung(&self, value: u64) {
        // A detach between this load and the ring reaches a stopped processor, as a store
        // landing just before DESTROY_QUEUE would.
        if self.runner.attached.load(Ordering::Acquire) {
            self.runner.doorbell_rung(value);
        } else if let Some(runner) = self.slice.runner_at(self.offset) {
            runner.doorbell_rung(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_doorbells_skip_the_reserved_range() {
        let mut bitmap = initial_bitmap(GfxTarget::Gfx90a);
        let first: Vec<u32> = (0..3)
            .map(|_| allocate_index(&mut bitmap).unwrap())
            .collect();
        assert_eq!(first, [0, 1, 2]);
        release_index(&mut bitmap, 1);
        assert_eq!(allocate_index(&mut bitmap).unwrap(), 1);
        for _ in 3..0x100 {
            allocate_index(&mut bitmap).unwrap();
        }
        // 0x100..=0x18F are SDMA/IH/VCN doorbells.
        assert_eq!(allocate_index(&mut bitmap).unwrap(), 0x190);
        let total_free = 1024 - 2 * 0x90;
        let mut n = 0x101;
        while allocate_index(&mut bitmap).is_ok() {
            n += 1;
        }
        assert_eq!(n, total_free);
        assert_eq!(allocate_index(&mut bitmap), Err(Errno::EBUSY));
    }
}
