//! The fields of `amd_queue_t` the CP reads (aql.md §2.2): it finds the descriptor from the
//! read-index address the driver gave at CREATE_QUEUE, as the firmware does, and re-reads the
//! fields the host may change while the queue runs (`queue_properties`, the scratch fields,
//! `queue_inactive_signal`).

use std::mem::offset_of;
use std::sync::atomic::Ordering;

use aql::QueueProperties;
use aql::queue::AmdQueue;

use super::device_memory::DeviceMemory;
use crate::gpu::dispatch::ScratchSetup;
use crate::gpu::vm::MemoryFault;

const fn field(offset: usize) -> u64 {
    offset as u64
}

const READ_DISPATCH_ID: u64 = field(offset_of!(AmdQueue, read_dispatch_id));
const BASE_BYTE_OFFSET: u64 = field(offset_of!(
    AmdQueue,
    read_dispatch_id_field_base_byte_offset
));
const COMPUTE_TMPRING_SIZE: u64 = field(offset_of!(AmdQueue, compute_tmpring_size));
const SCRATCH_RESOURCE_DESCRIPTOR: u64 = field(offset_of!(AmdQueue, scratch_resource_descriptor));
const SCRATCH_LOCATION: u64 = field(offset_of!(AmdQueue, scratch_backing_memory_location));
const SCRATCH_BYTE_SIZE: u64 = field(offset_of!(AmdQueue, scratch_backing_memory_byte_size));
const SCRATCH_WAVE64_LANE_BYTE_SIZE: u64 =
    field(offset_of!(AmdQueue, scratch_wave64_lane_byte_size));
const QUEUE_PROPERTIES: u64 = field(offset_of!(AmdQueue, queue_properties));
const QUEUE_INACTIVE_SIGNAL: u64 = field(offset_of!(AmdQueue, queue_inactive_signal));

/// Where a queue's `amd_queue_t` lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QueueDescriptor {
    /// GPU address of the `amd_queue_t` (the Queue Ptr SGPR value).
    pub(crate) va: u64,
}

impl QueueDescriptor {
    /// Find the descriptor from the read-index address: the CP subtracts
    /// `read_dispatch_id_field_base_byte_offset`, which sits right after `read_dispatch_id`
    /// ([abi]: "the CP derives the base from &read_dispatch_id − offset").
    pub(crate) fn locate(
        memory: &mut DeviceMemory,
        read_pointer_va: u64,
    ) -> Result<Self, MemoryFault> {
        let offset_va = read_pointer_va + (BASE_BYTE_OFFSET - READ_DISPATCH_ID);
        let offset = memory.load_u32(offset_va, Ordering::Acquire)?;
        Ok(Self {
            va: read_pointer_va.wrapping_sub(u64::from(offset)),
        })
    }

    /// `queue_properties`.
    pub(crate) fn properties(
        self,
        memory: &mut DeviceMemory,
    ) -> Result<QueueProperties, MemoryFault> {
        let bits = memory.load_u32(self.va + QUEUE_PROPERTIES, Ordering::Acquire)?;
        Ok(QueueProperties::from_bits_retain(bits))
    }

    /// The handle of `queue_inactive_signal` (hint bits not yet stripped; 0 = none).
    pub(crate) fn inactive_signal(self, memory: &mut DeviceMemory) -> Result<u64, MemoryFault> {
        memory.load_u64(self.va + QUEUE_INACTIVE_SIGNAL, Ordering::Acquire)
    }

    /// The scratch fields as they are now (the host rewrites them when it grows scratch).
    pub(crate) fn scratch(self, memory: &mut DeviceMemory) -> Result<ScratchSetup, MemoryFault> {
        let mut resource_descriptor = [0u32; 4];
        for (i, word) in resource_descriptor.iter_mut().enumerate() {
            *word = memory.load_u32(
                self.va + SCRATCH_RESOURCE_DESCRIPTOR + 4 * i as u64,
                Ordering::Acquire,
            )?;
        }
        Ok(ScratchSetup {
            resource_descriptor,
            backing_memory_location: memory
                .load_u64(self.va + SCRATCH_LOCATION, Ordering::Acquire)?,
            backing_memory_byte_size: memory
                .load_u64(self.va + SCRATCH_BYTE_SIZE, Ordering::Acquire)?,
            wave64_lane_byte_size: memory
                .load_u32(self.va + SCRATCH_WAVE64_LANE_BYTE_SIZE, Ordering::Acquire)?,
            compute_tmpring_size: memory
                .load_u32(self.va + COMPUTE_TMPRING_SIZE, Ordering::Acquire)?,
        })
    }
}
