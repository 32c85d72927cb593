//! `amd_queue_t`: the 256-byte queue descriptor shared by the host, the command processor and
//! kernel code (aql.md §2). Pinned to the layout of ROCr's `amd_hsa_queue.h` as Debian ships it
//! (5.2.3); newer ROCr names some reserved words (`caps`, async-reclaim fields) that aqueduct
//! leaves at 0, which the CP firmware treats as "feature off".

use bitflags::bitflags;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `AMD_QUEUE_ALIGN_BYTES`.
pub const AMD_QUEUE_ALIGN_BYTES: usize = 64;

/// `hsa_queue_type_t`.
#[repr(transparent)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct HsaQueueType(pub u32);

impl HsaQueueType {
    /// `HSA_QUEUE_TYPE_MULTI`: many producers.
    pub const MULTI: Self = Self(0);
    /// `HSA_QUEUE_TYPE_SINGLE`: one producer.
    pub const SINGLE: Self = Self(1);
    /// `HSA_QUEUE_TYPE_COOPERATIVE`.
    pub const COOPERATIVE: Self = Self(2);
}

/// `HSA_QUEUE_FEATURE_KERNEL_DISPATCH`.
pub const HSA_QUEUE_FEATURE_KERNEL_DISPATCH: u32 = 1;
/// `HSA_QUEUE_FEATURE_AGENT_DISPATCH`.
pub const HSA_QUEUE_FEATURE_AGENT_DISPATCH: u32 = 2;

/// `hsa_queue_t`: the standard HSA part at the start of `amd_queue_t`.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct HsaQueue {
    /// [`HsaQueueType`].
    pub r#type: u32,
    /// `HSA_QUEUE_FEATURE_*` bits.
    pub features: u32,
    /// GPU address of the ring.
    pub base_address: u64,
    /// Handle of the doorbell signal (an `amd_signal_t` of kind DOORBELL).
    pub doorbell_signal: u64,
    /// Ring size in packets, a power of two.
    pub size: u32,
    /// Must be 0.
    pub reserved1: u32,
    /// Queue id.
    pub id: u64,
}

bitflags! {
    /// `AMD_QUEUE_PROPERTIES_*`: the `queue_properties` word.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct QueueProperties: u32 {
        /// `AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER`.
        const ENABLE_TRAP_HANDLER = 1 << 0;
        /// `AMD_QUEUE_PROPERTIES_IS_PTR64`.
        const IS_PTR64 = 1 << 1;
        /// `AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER_DEBUG_SGPRS`.
        const ENABLE_TRAP_HANDLER_DEBUG_SGPRS = 1 << 2;
        /// `AMD_QUEUE_PROPERTIES_ENABLE_PROFILING`: the CP writes start/end timestamps into
        /// completion signals.
        const ENABLE_PROFILING = 1 << 3;
        /// `AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE`.
        const USE_SCRATCH_ONCE = 1 << 4;
    }
}

/// Bit positions of [`QueueProperties`] as `amd_hsa_queue.h` names them (`*_SHIFT`).
pub mod properties_bits {
    /// `AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER_SHIFT`.
    pub const ENABLE_TRAP_HANDLER: u32 = 0;
    /// `AMD_QUEUE_PROPERTIES_IS_PTR64_SHIFT`.
    pub const IS_PTR64: u32 = 1;
    /// `AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER_DEBUG_SGPRS_SHIFT`.
    pub const ENABLE_TRAP_HANDLER_DEBUG_SGPRS: u32 = 2;
    /// `AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT`.
    pub const ENABLE_PROFILING: u32 = 3;
    /// `AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE_SHIFT`.
    pub const USE_SCRATCH_ONCE: u32 = 4;
}

/// `amd_queue_t` (256 bytes, 64-byte aligned).
#[repr(C, align(64))]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct AmdQueue {
    /// The HSA part.
    pub hsa_queue: HsaQueue,
    /// Reserved (newer ROCr: `caps` at 0x28).
    pub reserved1: [u32; 4],
    /// 64-bit monotonic write index; the CP's write-pointer poll address.
    pub write_dispatch_id: u64,
    /// High half of the LDS flat aperture (gfx7/8 code).
    pub group_segment_aperture_base_hi: u32,
    /// High half of the scratch flat aperture (gfx7/8 code).
    pub private_segment_aperture_base_hi: u32,
    /// Highest CU id.
    pub max_cu_id: u32,
    /// Highest wave id per CU.
    pub max_wave_id: u32,
    /// gfx7/8 write-pointer proxy.
    pub max_legacy_doorbell_dispatch_id_plus_1: u64,
    /// gfx7/8 spinlock.
    pub legacy_doorbell_lock: u32,
    /// Reserved.
    pub reserved2: [u32; 9],
    /// 64-bit read index written by the CP: the next packet to consume.
    pub read_dispatch_id: u64,
    /// Offset of `read_dispatch_id` in this struct (0x80): the CP subtracts it to find the base.
    pub read_dispatch_id_field_base_byte_offset: u32,
    /// COMPUTE_TMPRING_SIZE register image.
    pub compute_tmpring_size: u32,
    /// Scratch buffer resource descriptor (V#), handed to waves as the private segment buffer.
    pub scratch_resource_descriptor: [u32; 4],
    /// GPU address of the queue's scratch memory.
    pub scratch_backing_memory_location: u64,
    /// Bytes of scratch memory (per XCC).
    pub scratch_backing_memory_byte_size: u64,
    /// Per-lane scratch bytes normalised to wave64 (0 = no scratch).
    pub scratch_wave64_lane_byte_size: u32,
    /// [`QueueProperties`] bits.
    pub queue_properties: u32,
    /// Reserved (newer ROCr: `scratch_last_used_index`).
    pub reserved3: [u32; 2],
    /// Handle of the signal where the CP reports queue errors ([`queue_error`]).
    pub queue_inactive_signal: u64,
    /// Reserved (newer ROCr: alternate-scratch fields used only with async reclaim).
    pub reserved4: [u32; 14],
}

/// Offset of `read_dispatch_id` inside [`AmdQueue`].
pub const READ_DISPATCH_ID_OFFSET: usize = core::mem::offset_of!(AmdQueue, read_dispatch_id);
/// Offset of `write_dispatch_id` inside [`AmdQueue`].
pub const WRITE_DISPATCH_ID_OFFSET: usize = core::mem::offset_of!(AmdQueue, write_dispatch_id);

/// Error words the CP stores into `queue_inactive_signal` (ROCr `DynamicQueueEventsHandler`;
/// aql.md §5A). Several may be or-ed together.
pub mod queue_error {
    /// Insufficient scratch, wave64 (recoverable: the host grows scratch and stores 0).
    pub const SCRATCH_WAVE64: i64 = 0x1;
    /// Invalid dispatch dimensions.
    pub const INVALID_DIMENSIONS: i64 = 0x2;
    /// Invalid group segment (LDS) size.
    pub const INVALID_GROUP_MEMORY: i64 = 0x4;
    /// Invalid or null code object / kernel descriptor.
    pub const INVALID_CODE_OBJECT: i64 = 0x8;
    /// Invalid packet format (unknown packet type).
    pub const INVALID_PACKET_FORMAT: i64 = 0x20;
    /// Workgroup too large.
    pub const WORKGROUP_TOO_LARGE: i64 = 0x40;
    /// Out of VGPRs.
    pub const OUT_OF_REGISTERS: i64 = 0x80;
    /// Unsupported vendor packet format.
    pub const UNSUPPORTED_VENDOR_PACKET: i64 = 0x100;
    /// Use-once scratch was consumed.
    pub const SCRATCH_USE_ONCE_DONE: i64 = 0x200;
    /// Insufficient scratch, wave32.
    pub const SCRATCH_WAVE32: i64 = 0x400;
    /// Memory violation (address beyond the aperture).
    pub const MEMORY_VIOLATION: i64 = 0x2000_0000;
    /// Illegal instruction.
    pub const ILLEGAL_INSTRUCTION: i64 = 0x4000_0000;
    /// Debug trap.
    pub const DEBUG_TRAP: i64 = 0x8000_0000;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_is_256_bytes_with_indices_where_the_cp_looks() {
        assert_eq!(size_of::<AmdQueue>(), 256);
        assert_eq!(align_of::<AmdQueue>(), AMD_QUEUE_ALIGN_BYTES);
        assert_eq!(READ_DISPATCH_ID_OFFSET, 0x80);
        assert_eq!(WRITE_DISPATCH_ID_OFFSET, 0x38);
    }
}
