//! Signal memory and events, recycled.
//!
//! A signal is a 64-byte `amd_signal_t` in fine-grained host memory that every GPU of the
//! device maps (any queue may decrement it), plus, for interrupt signals, a KFD signal event
//! whose event-page slot is the signal's mailbox. Both cost system calls to make, so freed
//! slots return here with their event and are handed out again.

use std::ptr::NonNull;
use std::sync::Arc;

use aql::AmdSignal;
use kfd::{Allocation, BufferObject, GpuMapping, Kfd, MemoryKind};

use crate::error::{Error, Result};

/// Bytes of signal memory allocated at a time.
const PAGE_BYTES: u64 = 4096;
/// Signals per page.
const SIGNALS_PER_PAGE: usize = PAGE_BYTES as usize / size_of::<AmdSignal>();

/// One slot: where the signal lives, and its event if it ever had one.
pub(crate) struct SignalSlot {
    /// The `amd_signal_t`, 64-byte aligned inside `page`'s CPU mapping.
    pub(crate) ptr: NonNull<AmdSignal>,
    /// The KFD signal event (auto-reset) whose mailbox interrupt signals use.
    pub(crate) event: Option<kfd::Event>,
    /// Keeps the memory alive (and mapped on the GPUs) while the slot exists.
    _page: Arc<SignalPage>,
}

// SAFETY: the slot's pointer refers to memory owned by `_page` (shared, reference counted);
// all access to it goes through `aql::signal::SignalRef`'s atomics.
unsafe impl Send for SignalSlot {}
// SAFETY: as above: the slot itself has no interior state besides atomically accessed memory.
unsafe impl Sync for SignalSlot {}

/// A page of signal memory.
struct SignalPage {
    _mapping: GpuMapping,
    _bo: Arc<BufferObject>,
}

/// Free signal slots, with the events they had.
#[derive(Default)]
pub(crate) struct SignalPool {
    free: Vec<SignalSlot>,
}

impl SignalPool {
    /// A slot for a new signal; with `interrupt`, one that has an event.
    pub(crate) fn take(&mut self, kfd: &Arc<Kfd>, interrupt: bool) -> Result<SignalSlot> {
        let position = self
            .free
            .iter()
            .rposition(|slot| slot.event.is_some() == interrupt)
            .or_else(|| (!self.free.is_empty()).then(|| self.free.len() - 1));
        let mut slot = if let Some(i) = position {
            self.free.swap_remove(i)
        } else {
            self.grow(kfd)?;
            self.free.pop().ok_or_else(|| Error::OutOfMemory {
                what: "signal memory".to_owned(),
                source: None,
            })?
        };
        if interrupt && slot.event.is_none() {
            slot.event = Some(
                kfd.create_signal_event(true)
                    .map_err(|e| Error::driver(|| "a signal's event".to_owned(), e))?,
            );
        }
        Ok(slot)
    }

    /// Return a slot for reuse.
    pub(crate) fn give_back(&mut self, slot: SignalSlot) {
        self.free.push(slot);
    }

    fn grow(&mut self, kfd: &Arc<Kfd>) -> Result<()> {
        let gpu_ids: Vec<u32> = kfd.gpus().iter().map(kfd::Gpu::gpu_id).collect();
        let first = *gpu_ids
            .first()
            .ok_or_else(|| Error::Unsupported("signals need at least one GPU".to_owned()))?;
        let what = || "signal memory".to_owned();
        let bo = kfd
            .allocate(first, Allocation::new(MemoryKind::GttFine, PAGE_BYTES))
            .map_err(|e| Error::driver(what, e))?;
        let mapping = bo.map_to(&gpu_ids).map_err(|e| Error::driver(what, e))?;
        let base = bo.host_ptr().ok_or_else(|| {
            Error::Driver(kfd::Error::Kernel(
                "fine-grained host memory has no CPU mapping".to_owned(),
            ))
        })?;
        let page = Arc::new(SignalPage {
            _mapping: mapping,
            _bo: bo,
        });
        for i in (0..SIGNALS_PER_PAGE).rev() {
            // SAFETY: `base` is the page-aligned start of a PAGE_BYTES mapping; slot `i` is the
            // i-th 64-byte (hence aligned) piece of it.
            let ptr = unsafe { base.add(i * size_of::<AmdSignal>()) }.cast::<AmdSignal>();
            self.free.push(SignalSlot {
                ptr,
                event: None,
                _page: Arc::clone(&page),
            });
        }
        Ok(())
    }
}
