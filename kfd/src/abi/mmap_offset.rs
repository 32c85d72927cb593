//! The `/dev/kfd` mmap-offset encoding.
//!
//! These values come from `drivers/gpu/drm/amd/amdkfd/kfd_priv.h` (`KFD_MMAP_TYPE_*`,
//! `KFD_MMAP_GPU_ID_*`), which is not a uapi header, so no installed header can check them; they
//! have been stable since the 2018 rework (kfd.md §5.5, §10). Bits 63–62 select the mapping
//! type, bits 61–46 carry the gpu_id (16 bits, `KFD_GPU_ID_HASH_WIDTH`), bits 45–0 a value
//! (for doorbells: the byte offset of a queue's doorbell inside the process slice).

/// Bit position of the mapping type.
pub const TYPE_SHIFT: u32 = 62;
/// Mask of the mapping type bits.
pub const TYPE_MASK: u64 = 3 << TYPE_SHIFT;
/// Bit position of the gpu_id.
pub const GPU_ID_SHIFT: u32 = 46;
/// Width of the gpu_id field (`KFD_GPU_ID_HASH_WIDTH`).
pub const GPU_ID_WIDTH: u32 = 16;
/// Mask of the gpu_id bits.
pub const GPU_ID_MASK: u64 = ((1 << GPU_ID_WIDTH) - 1) << GPU_ID_SHIFT;
/// Mask of the value bits below the gpu_id.
pub const VALUE_MASK: u64 = (1 << GPU_ID_SHIFT) - 1;

/// The kind of object an mmap of `/dev/kfd` maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MmapType {
    /// `KFD_MMAP_TYPE_MMIO` (0): the HDP-flush MMIO remap page of one GPU.
    Mmio,
    /// `KFD_MMAP_TYPE_RESERVED_MEM` (1): CWSR trap-handler pages (APUs).
    ReservedMem,
    /// `KFD_MMAP_TYPE_EVENTS` (2): the kernel-allocated event page.
    Events,
    /// `KFD_MMAP_TYPE_DOORBELL` (3): the process' doorbell slice on one GPU.
    Doorbell,
}

impl MmapType {
    /// The type bits, already shifted into place.
    pub const fn bits(self) -> u64 {
        (match self {
            Self::Mmio => 0u64,
            Self::ReservedMem => 1,
            Self::Events => 2,
            Self::Doorbell => 3,
        }) << TYPE_SHIFT
    }
}

/// Build an offset from its parts (`KFD_MMAP_TYPE_x | KFD_MMAP_GPU_ID(gpu_id) | value`).
pub const fn encode(kind: MmapType, gpu_id: u32, value: u64) -> u64 {
    kind.bits() | (((gpu_id as u64) << GPU_ID_SHIFT) & GPU_ID_MASK) | (value & VALUE_MASK)
}

/// The type of an offset.
pub const fn mmap_type(offset: u64) -> MmapType {
    match (offset & TYPE_MASK) >> TYPE_SHIFT {
        0 => MmapType::Mmio,
        1 => MmapType::ReservedMem,
        2 => MmapType::Events,
        _ => MmapType::Doorbell,
    }
}

/// The gpu_id of an offset (`KFD_MMAP_GET_GPU_ID`).
pub const fn gpu_id(offset: u64) -> u32 {
    ((offset & GPU_ID_MASK) >> GPU_ID_SHIFT) as u32
}

/// The value bits of an offset.
pub const fn value(offset: u64) -> u64 {
    offset & VALUE_MASK
}

/// Size of one doorbell on SOC15 (GFX9) and later.
pub const DOORBELL_SIZE: usize = 8;
/// Doorbells per process per GPU (`KFD_MAX_NUM_OF_QUEUES_PER_PROCESS`-sized slice).
pub const DOORBELLS_PER_PROCESS: usize = 1024;
/// Bytes of the per-process doorbell slice on GFX9+: `roundup(8 × 1024, PAGE_SIZE)`.
pub const DOORBELL_SLICE_SIZE: usize = DOORBELL_SIZE * DOORBELLS_PER_PROCESS;

/// Split a CREATE_QUEUE `doorbell_offset` into the mmap offset of the whole slice and the byte
/// offset of this queue's doorbell inside it (libhsakmt and tinygrad do the same split).
pub const fn split_doorbell_offset(doorbell_offset: u64) -> (u64, usize) {
    let in_slice = doorbell_offset & (DOORBELL_SLICE_SIZE as u64 - 1);
    (doorbell_offset - in_slice, in_slice as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doorbell_offset_round_trips() {
        let off = encode(MmapType::Doorbell, 0xBEEF, 0x18);
        assert_eq!(off, 3 << 62 | 0xBEEF << 46 | 0x18);
        assert_eq!(mmap_type(off), MmapType::Doorbell);
        assert_eq!(gpu_id(off), 0xBEEF);
        assert_eq!(value(off), 0x18);
        assert_eq!(split_doorbell_offset(off), (3 << 62 | 0xBEEF << 46, 0x18));
    }

    #[test]
    fn gpu_id_is_truncated_to_sixteen_bits() {
        assert_eq!(gpu_id(encode(MmapType::Mmio, 0x1_2345, 0)), 0x2345);
        assert_eq!(mmap_type(encode(MmapType::Events, 7, 0)), MmapType::Events);
        assert_eq!(encode(MmapType::Events, 0, 0), 2 << 62);
    }
}
