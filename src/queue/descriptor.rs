//! A queue as programs that write packets themselves see it (the HSA runtime's clients): the
//! address of its `amd_queue_t` (with the `hsa_queue_t` at its start, the ring's address and
//! size, and the read and write indices), the `hsa_queue_t` fields a runtime fills in (the
//! doorbell signal's handle, the queue id), and the doorbell rung with a write index.
//!
//! A producer of its own reserves slots with an atomic add on `write_dispatch_id` (what
//! [`Queue::submit`] does too, so both kinds of producer may share a queue), writes the packet
//! body, publishes the header with a release store and rings the doorbell.

use std::mem::offset_of;

use aql::queue::{AmdQueue, HsaQueue, QueueProperties};
use zerocopy::IntoBytes;

use crate::error::{Error, Result};
use crate::queue::Queue;

impl Queue {
    /// The CPU address of the queue's `amd_queue_t` (the GPU's address of it too: queue memory
    /// is mapped at the same address on both sides). Valid while the queue lives.
    pub fn descriptor_address(&self) -> Result<u64> {
        self.owned.with_fast(|state| {
            state
                .queue
                .queue_memory()
                .pointer_page()
                .host_ptr()
                .map(|p| p.as_ptr() as u64)
                .ok_or_else(|| {
                    Error::Driver(kfd::Error::Kernel(
                        "a queue's descriptor has no CPU mapping".to_owned(),
                    ))
                })
        })
    }

    /// Write the `hsa_queue_t` fields a runtime owns: `doorbell_signal` (the handle its
    /// clients ring the doorbell through) and `id`.
    pub fn set_runtime_fields(&self, doorbell_signal: u64, id: u64) -> Result<()> {
        self.owned.with_fast(|state| {
            let page = state.queue.queue_memory().pointer_page();
            let hsa = offset_of!(AmdQueue, hsa_queue);
            let writes: [(usize, &[u8]); 2] = [
                (
                    hsa + offset_of!(HsaQueue, doorbell_signal),
                    doorbell_signal.as_bytes(),
                ),
                (hsa + offset_of!(HsaQueue, id), id.as_bytes()),
            ];
            for (offset, bytes) in writes {
                page.write(offset as u64, bytes)
                    .map_err(|e| Error::driver(|| "the queue's hsa_queue_t".to_owned(), e))?;
            }
            Ok(())
        })
    }

    /// Turn the CP's profiling timestamps for this queue's completion signals on or off
    /// (`AMD_QUEUE_PROPERTIES_ENABLE_PROFILING`; takes effect for packets processed after it).
    pub fn set_profiling(&self, enabled: bool) -> Result<()> {
        self.owned.with_fast(|state| {
            let page = state.queue.queue_memory().pointer_page();
            let offset = offset_of!(AmdQueue, queue_properties) as u64;
            let what = || "the queue's properties".to_owned();
            let mut word = [0u8; 4];
            page.read(offset, &mut word)
                .map_err(|e| Error::driver(what, e))?;
            let mut properties = QueueProperties::from_bits_retain(u32::from_ne_bytes(word));
            properties.set(QueueProperties::ENABLE_PROFILING, enabled);
            page.write(offset, &properties.bits().to_ne_bytes())
                .map_err(|e| Error::driver(what, e))
        })
    }

    /// Ring the doorbell with `write_index`: the packets before it are published (a store of
    /// the index into the doorbell, as on hardware; the CP reads packets up to it).
    pub fn ring_doorbell(&self, write_index: u64) -> Result<()> {
        self.owned.with_fast(|state| {
            state.queue.doorbell().ring(write_index);
            Ok(())
        })
    }
}
