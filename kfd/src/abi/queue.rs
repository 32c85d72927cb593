use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `KFD_IOC_QUEUE_TYPE_*`: the `queue_type` of CREATE_QUEUE. Kept open (a newtype, not an enum)
/// because the kernel may grow new types; an unknown type is answered with ENOTSUPP (524).
#[repr(transparent)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct QueueType(pub u32);

impl QueueType {
    /// `KFD_IOC_QUEUE_TYPE_COMPUTE`: a PM4 compute queue.
    pub const COMPUTE: Self = Self(0);
    /// `KFD_IOC_QUEUE_TYPE_SDMA`: an SDMA (copy engine) queue.
    pub const SDMA: Self = Self(1);
    /// `KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`: an AQL compute queue (what aqueduct creates).
    pub const COMPUTE_AQL: Self = Self(2);
    /// `KFD_IOC_QUEUE_TYPE_SDMA_XGMI`: an SDMA queue on an XGMI engine.
    pub const SDMA_XGMI: Self = Self(3);
    /// `KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID` (minor 1.17): an SDMA queue on a chosen engine.
    pub const SDMA_BY_ENG_ID: Self = Self(4);

    /// Whether this is one of the compute queue types (which need EOP and CWSR buffers).
    pub const fn is_compute(self) -> bool {
        self.0 == Self::COMPUTE.0 || self.0 == Self::COMPUTE_AQL.0
    }
}

/// `KFD_MAX_QUEUE_PERCENTAGE`: the largest accepted `queue_percentage & 0xff`.
pub const KFD_MAX_QUEUE_PERCENTAGE: u32 = 100;
/// `KFD_MAX_QUEUE_PRIORITY`: the largest accepted `queue_priority`.
pub const KFD_MAX_QUEUE_PRIORITY: u32 = 15;
/// `KFD_MIN_QUEUE_RING_SIZE`: smaller (power-of-two) rings are silently raised to this.
pub const KFD_MIN_QUEUE_RING_SIZE: u32 = 1024;

/// `struct kfd_ioctl_create_queue_args` (AMDKFD_IOC_CREATE_QUEUE), 96 bytes since 1.17.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct CreateQueueArgs {
    /// GPU VA of the ring (to KFD).
    pub ring_base_address: u64,
    /// GPU VA of the 64-bit write pointer (to KFD; for AQL `&amd_queue_t.write_dispatch_id`).
    pub write_pointer_address: u64,
    /// GPU VA of the 64-bit read pointer (to KFD; for AQL `&amd_queue_t.read_dispatch_id`).
    pub read_pointer_address: u64,
    /// mmap offset of the queue's doorbell (from KFD): type, gpu_id and in-slice byte offset.
    pub doorbell_offset: u64,
    /// Ring size in bytes, a power of two (to KFD).
    pub ring_size: u32,
    /// The GPU (to KFD).
    pub gpu_id: u32,
    /// One of [`QueueType`] (to KFD).
    pub queue_type: u32,
    /// Percentage of the queue's time slice, 0..=100 in bits 7:0 (to KFD).
    pub queue_percentage: u32,
    /// Priority 0..=15 (to KFD).
    pub queue_priority: u32,
    /// Per-process queue id (from KFD).
    pub queue_id: u32,
    /// GPU VA of the end-of-pipe buffer (to KFD).
    pub eop_buffer_address: u64,
    /// Size of the EOP buffer, must equal the node's (to KFD).
    pub eop_buffer_size: u64,
    /// GPU VA of the context save/restore (CWSR) area (to KFD).
    pub ctx_save_restore_address: u64,
    /// CWSR size per XCC, must equal the node's (to KFD).
    pub ctx_save_restore_size: u32,
    /// Control stack size, must equal the node's (to KFD).
    pub ctl_stack_size: u32,
    /// SDMA engine for `SDMA_BY_ENG_ID` queues (to KFD, 1.17).
    pub sdma_engine_id: u32,
    /// Size of the metadata ring behind the ring (to KFD, 1.22; was `pad`).
    pub metadata_ring_size: u32,
}

/// `struct kfd_ioctl_destroy_queue_args` (AMDKFD_IOC_DESTROY_QUEUE).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct DestroyQueueArgs {
    /// Queue to destroy (to KFD).
    pub queue_id: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_update_queue_args` (AMDKFD_IOC_UPDATE_QUEUE).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct UpdateQueueArgs {
    /// New ring VA (to KFD).
    pub ring_base_address: u64,
    /// Queue to update (to KFD).
    pub queue_id: u32,
    /// New ring size in bytes (to KFD).
    pub ring_size: u32,
    /// New percentage; 0 suspends the queue (to KFD).
    pub queue_percentage: u32,
    /// New priority (to KFD).
    pub queue_priority: u32,
}

/// `struct kfd_ioctl_set_cu_mask_args` (AMDKFD_IOC_SET_CU_MASK).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SetCuMaskArgs {
    /// Queue (to KFD).
    pub queue_id: u32,
    /// Number of mask bits, a non-zero multiple of 32 (to KFD).
    pub num_cu_mask: u32,
    /// User pointer to `num_cu_mask / 32` u32 words (to KFD).
    pub cu_mask_ptr: u64,
}

/// `struct kfd_ioctl_get_queue_wave_state_args` (AMDKFD_IOC_GET_QUEUE_WAVE_STATE).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct GetQueueWaveStateArgs {
    /// User buffer receiving the control stack (to KFD).
    pub ctl_stack_address: u64,
    /// Bytes of control stack in use (from KFD).
    pub ctl_stack_used_size: u32,
    /// Bytes of the save area in use (from KFD).
    pub save_area_used_size: u32,
    /// Queue (to KFD).
    pub queue_id: u32,
    /// Padding.
    pub pad: u32,
}
