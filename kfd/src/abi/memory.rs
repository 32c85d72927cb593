use bitflags::bitflags;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

bitflags! {
    /// `KFD_IOC_ALLOC_MEM_FLAGS_*`: the `flags` of ALLOC_MEMORY_OF_GPU. Exactly one of the
    /// domain bits (VRAM, GTT, USERPTR, DOORBELL, MMIO_REMAP) must be set.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct AllocFlags: u32 {
        /// Device memory.
        const VRAM = 1 << 0;
        /// System memory allocated by the kernel, GPU-mapped through GART.
        const GTT = 1 << 1;
        /// Existing user pages; the CPU address goes in `mmap_offset`.
        const USERPTR = 1 << 2;
        /// The process' doorbell slice as a BO (size must equal the slice).
        const DOORBELL = 1 << 3;
        /// The HDP-flush MMIO remap page (size must be one 4 KiB page).
        const MMIO_REMAP = 1 << 4;
        /// GPU page table entries writable.
        const WRITABLE = 1 << 31;
        /// GPU page table entries executable.
        const EXECUTABLE = 1 << 30;
        /// VRAM must be host-visible (large BAR).
        const PUBLIC = 1 << 29;
        /// Never substitute another domain.
        const NO_SUBSTITUTE = 1 << 28;
        /// GFX7/8 double-mapped AQL ring workaround.
        const AQL_QUEUE_MEM = 1 << 27;
        /// Fine-grained (coherent) memory type.
        const COHERENT = 1 << 26;
        /// Uncached memory type (signals, event page, queue descriptors).
        const UNCACHED = 1 << 25;
        /// Coherent including device-scope atomics (1.15).
        const EXT_COHERENT = 1 << 24;
        /// Physically contiguous VRAM (1.16).
        const CONTIGUOUS = 1 << 23;
    }
}

impl AllocFlags {
    /// The domain bits, of which exactly one must be set.
    pub const DOMAINS: Self = Self::VRAM
        .union(Self::GTT)
        .union(Self::USERPTR)
        .union(Self::DOORBELL)
        .union(Self::MMIO_REMAP);
}

/// `struct kfd_ioctl_alloc_memory_of_gpu_args` (AMDKFD_IOC_ALLOC_MEMORY_OF_GPU).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct AllocMemoryOfGpuArgs {
    /// GPU VA the BO will be mapped at (to KFD; validated at MAP time).
    pub va_addr: u64,
    /// Size in bytes, rounded up to a page (to KFD).
    pub size: u64,
    /// `gpu_id << 32 | id` (from KFD).
    pub handle: u64,
    /// For USERPTR: the CPU address (to KFD). Otherwise the mmap offset (from KFD): on the
    /// render node for VRAM/GTT, on `/dev/kfd` for DOORBELL and MMIO_REMAP.
    pub mmap_offset: u64,
    /// GPU that owns the BO (to KFD).
    pub gpu_id: u32,
    /// [`AllocFlags`] bits (to KFD).
    pub flags: u32,
}

/// `struct kfd_ioctl_free_memory_of_gpu_args` (AMDKFD_IOC_FREE_MEMORY_OF_GPU).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct FreeMemoryOfGpuArgs {
    /// BO handle (to KFD).
    pub handle: u64,
}

/// `struct kfd_ioctl_map_memory_to_gpu_args` (AMDKFD_IOC_MAP_MEMORY_TO_GPU).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct MapMemoryToGpuArgs {
    /// BO handle (to KFD).
    pub handle: u64,
    /// User pointer to `n_devices` u32 gpu_ids (to KFD).
    pub device_ids_array_ptr: u64,
    /// Number of gpu_ids (to KFD).
    pub n_devices: u32,
    /// Devices already mapped; the kernel starts at this index and updates it (to/from KFD).
    pub n_success: u32,
}

/// `struct kfd_ioctl_unmap_memory_from_gpu_args` (AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct UnmapMemoryFromGpuArgs {
    /// BO handle (to KFD).
    pub handle: u64,
    /// User pointer to `n_devices` u32 gpu_ids (to KFD).
    pub device_ids_array_ptr: u64,
    /// Number of gpu_ids (to KFD).
    pub n_devices: u32,
    /// Devices already unmapped (to/from KFD).
    pub n_success: u32,
}

/// `struct kfd_ioctl_get_available_memory_args` (AMDKFD_IOC_AVAILABLE_MEMORY, 1.9).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct GetAvailableMemoryArgs {
    /// Bytes of VRAM this process may still allocate (from KFD).
    pub available: u64,
    /// The GPU (to KFD).
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_set_scratch_backing_va_args` (AMDKFD_IOC_SET_SCRATCH_BACKING_VA).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SetScratchBackingVaArgs {
    /// GPU VA of the scratch backing memory (to KFD).
    pub va_addr: u64,
    /// The GPU (to KFD).
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}

/// Make a BO handle the way the kernel does (`MAKE_HANDLE` in kfd_priv.h): the owning gpu_id in
/// the high 32 bits and the per-device IDR id (from 0) in the low 32 bits.
pub const fn make_handle(gpu_id: u32, idr_id: u32) -> u64 {
    ((gpu_id as u64) << 32) | idr_id as u64
}

/// The gpu_id part of a BO handle (`GET_GPU_ID` in kfd_priv.h).
pub const fn handle_gpu_id(handle: u64) -> u32 {
    (handle >> 32) as u32
}

/// The IDR id part of a BO handle (`GET_IDR_HANDLE` in kfd_priv.h).
pub const fn handle_idr_id(handle: u64) -> u32 {
    handle as u32
}
