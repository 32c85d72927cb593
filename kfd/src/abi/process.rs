use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `struct kfd_process_device_apertures`: one GPU's apertures as seen by this process.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct ProcessDeviceApertures {
    /// Base of the LDS (group segment) aperture.
    pub lds_base: u64,
    /// Limit of the LDS aperture.
    pub lds_limit: u64,
    /// Base of the scratch (private segment) aperture.
    pub scratch_base: u64,
    /// Limit of the scratch aperture.
    pub scratch_limit: u64,
    /// Lowest GPU VA userspace may use.
    pub gpuvm_base: u64,
    /// Highest GPU VA userspace may use.
    pub gpuvm_limit: u64,
    /// The GPU.
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_get_process_apertures_new_args` (AMDKFD_IOC_GET_PROCESS_APERTURES_NEW).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct GetProcessAperturesNewArgs {
    /// User pointer to an array of [`ProcessDeviceApertures`] (to KFD).
    pub kfd_process_device_apertures_ptr: u64,
    /// To KFD: capacity of the array (0 = just count). From KFD: entries filled (or the count).
    pub num_of_nodes: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_acquire_vm_args` (AMDKFD_IOC_ACQUIRE_VM).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct AcquireVmArgs {
    /// An open amdgpu DRM file whose VM becomes this process' compute VM (to KFD).
    pub drm_fd: u32,
    /// The GPU (to KFD).
    pub gpu_id: u32,
}

/// `KFD_IOC_CACHE_POLICY_*`: the policies of SET_MEMORY_POLICY.
#[repr(transparent)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct CachePolicy(pub u32);

impl CachePolicy {
    /// `KFD_IOC_CACHE_POLICY_COHERENT`.
    pub const COHERENT: Self = Self(0);
    /// `KFD_IOC_CACHE_POLICY_NONCOHERENT`.
    pub const NONCOHERENT: Self = Self(1);
}

/// `KFD_PROC_FLAG_MFMA_HIGH_PRECISION` (1.18): bit 0 of `misc_process_flag`.
pub const KFD_PROC_FLAG_MFMA_HIGH_PRECISION: u32 = 1 << 0;

/// `struct kfd_ioctl_set_memory_policy_args` (AMDKFD_IOC_SET_MEMORY_POLICY).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SetMemoryPolicyArgs {
    /// Base of the alternate aperture (ignored on GFX9+).
    pub alternate_aperture_base: u64,
    /// Size of the alternate aperture (ignored on GFX9+).
    pub alternate_aperture_size: u64,
    /// The GPU.
    pub gpu_id: u32,
    /// [`CachePolicy`] outside the alternate aperture.
    pub default_policy: u32,
    /// [`CachePolicy`] inside the alternate aperture.
    pub alternate_policy: u32,
    /// Process flags (1.18; was `pad`).
    pub misc_process_flag: u32,
}

/// `struct kfd_ioctl_set_xnack_mode_args` (AMDKFD_IOC_SET_XNACK_MODE).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SetXnackModeArgs {
    /// To KFD: negative = query, 0 = off, positive = on. From KFD: the current mode.
    pub xnack_enabled: i32,
}

/// `KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK`.
pub const KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK: u32 = 1;
/// `KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK`.
pub const KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK: u32 = 2;

/// `struct kfd_ioctl_runtime_enable_args` (AMDKFD_IOC_RUNTIME_ENABLE, 1.13).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct RuntimeEnableArgs {
    /// Address of the loader's `r_debug` (to KFD).
    pub r_debug: u64,
    /// `KFD_RUNTIME_ENABLE_MODE_*` bits; 0 disables (to KFD).
    pub mode_mask: u32,
    /// Debugger capabilities (from KFD).
    pub capabilities_mask: u32,
}

/// `struct kfd_ioctl_get_clock_counters_args` (AMDKFD_IOC_GET_CLOCK_COUNTERS).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct GetClockCountersArgs {
    /// GPU timestamp counter (from KFD; 0 for an unknown gpu_id).
    pub gpu_clock_counter: u64,
    /// CLOCK_MONOTONIC_RAW in ns (from KFD).
    pub cpu_clock_counter: u64,
    /// CLOCK_BOOTTIME in ns (from KFD).
    pub system_clock_counter: u64,
    /// Frequency of `system_clock_counter`, 1e9 (from KFD).
    pub system_clock_freq: u64,
    /// The GPU (to KFD).
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct kfd_ioctl_set_trap_handler_args` (AMDKFD_IOC_SET_TRAP_HANDLER).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SetTrapHandlerArgs {
    /// Trap base address (to KFD).
    pub tba_addr: u64,
    /// Trap memory address (to KFD).
    pub tma_addr: u64,
    /// The GPU (to KFD).
    pub gpu_id: u32,
    /// Padding.
    pub pad: u32,
}
