//! The amdgpu DRM uapi subset aqueduct reads: `DRM_IOCTL_AMDGPU_INFO` and its query structs
//! (`include/uapi/drm/amdgpu_drm.h`), plus `DRM_IOCTL_VERSION` from `drm.h` (the struct comes
//! from `drm-sys`). Layouts are checked against the headers by `tests/abi_headers/`.

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `DRM_IOCTL_BASE`: the ioctl type byte of DRM device files.
pub const DRM_IOCTL_BASE: u8 = b'd';
/// `DRM_COMMAND_BASE`: first driver-specific request number.
pub const DRM_COMMAND_BASE: u8 = 0x40;
/// `DRM_AMDGPU_INFO`: the INFO request, relative to [`DRM_COMMAND_BASE`].
pub const DRM_AMDGPU_INFO: u8 = 0x05;

/// `AMDGPU_INFO_*` query ids (the `query` field of [`InfoArgs`]).
pub mod query {
    /// `AMDGPU_INFO_FW_VERSION`: one firmware's version; answered with [`super::FirmwareInfo`].
    pub const FW_VERSION: u32 = 0x0e;
    /// `AMDGPU_INFO_VRAM_GTT`: sizes; answered with [`super::VramGttInfo`].
    pub const VRAM_GTT: u32 = 0x14;
    /// `AMDGPU_INFO_DEV_INFO`: device description; answered with [`super::DeviceInfo`].
    pub const DEV_INFO: u32 = 0x16;
    /// `AMDGPU_INFO_MEMORY`: heap sizes and usage; answered with [`super::MemoryInfo`].
    pub const MEMORY: u32 = 0x19;
}

/// `AMDGPU_INFO_FW_*` firmware types for [`query::FW_VERSION`].
pub mod firmware {
    /// `AMDGPU_INFO_FW_GFX_ME`.
    pub const GFX_ME: u32 = 0x04;
    /// `AMDGPU_INFO_FW_GFX_PFP`.
    pub const GFX_PFP: u32 = 0x05;
    /// `AMDGPU_INFO_FW_GFX_CE`.
    pub const GFX_CE: u32 = 0x06;
    /// `AMDGPU_INFO_FW_GFX_RLC`.
    pub const GFX_RLC: u32 = 0x07;
    /// `AMDGPU_INFO_FW_GFX_MEC`: the compute micro-engine, which runs AQL queues.
    pub const GFX_MEC: u32 = 0x08;
    /// `AMDGPU_INFO_FW_SDMA`.
    pub const SDMA: u32 = 0x0b;
}

/// `AMDGPU_IDS_FLAGS_FUSION`: the device is an APU.
pub const AMDGPU_IDS_FLAGS_FUSION: u64 = 0x1;

/// `struct drm_amdgpu_query_fw`: the union member of [`InfoArgs`] for FW_VERSION.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct QueryFw {
    /// One of [`firmware`].
    pub fw_type: u32,
    /// IP instance.
    pub ip_instance: u32,
    /// Index (e.g. the MEC pipe).
    pub index: u32,
    /// Padding.
    pub pad: u32,
}

/// `struct drm_amdgpu_info` (32 bytes): the argument of `DRM_IOCTL_AMDGPU_INFO`.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct InfoArgs {
    /// User pointer the kernel writes the answer to.
    pub return_pointer: u64,
    /// Bytes available at `return_pointer`; the kernel writes at most this many.
    pub return_size: u32,
    /// One of [`query`].
    pub query: u32,
    /// The 16-byte union of per-query inputs; FW_VERSION uses it as [`QueryFw`].
    pub query_fw: QueryFw,
}

/// `struct drm_amdgpu_info_vram_gtt`.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct VramGttInfo {
    /// VRAM bytes.
    pub vram_size: u64,
    /// VRAM bytes the CPU can map.
    pub vram_cpu_accessible_size: u64,
    /// GTT bytes.
    pub gtt_size: u64,
}

/// `struct drm_amdgpu_heap_info`.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct HeapInfo {
    /// Total bytes of the heap.
    pub total_heap_size: u64,
    /// Bytes usable by userspace.
    pub usable_heap_size: u64,
    /// Bytes in use.
    pub heap_usage: u64,
    /// Largest single allocation.
    pub max_allocation: u64,
}

/// `struct drm_amdgpu_memory_info`.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct MemoryInfo {
    /// All VRAM.
    pub vram: HeapInfo,
    /// CPU-visible VRAM.
    pub cpu_accessible_vram: HeapInfo,
    /// GTT.
    pub gtt: HeapInfo,
}

/// `struct drm_amdgpu_info_firmware`.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct FirmwareInfo {
    /// Firmware version.
    pub ver: u32,
    /// Feature version.
    pub feature: u32,
}

/// `struct drm_amdgpu_info_device`, as of Linux 7.2. The kernel copies
/// `min(return_size, its size)` bytes, so this layout works with older and newer kernels alike
/// (fields the kernel does not know stay zero).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout)]
pub struct DeviceInfo {
    /// PCI device id.
    pub device_id: u32,
    /// Internal chip revision.
    pub chip_rev: u32,
    /// External revision.
    pub external_rev: u32,
    /// PCI revision id.
    pub pci_rev: u32,
    /// `AMDGPU_FAMILY_*` (141 for gfx9/AI, 146 for gfx94x? see device presets).
    pub family: u32,
    /// Shader engines.
    pub num_shader_engines: u32,
    /// Shader arrays per engine.
    pub num_shader_arrays_per_engine: u32,
    /// GPU timestamp counter frequency in kHz.
    pub gpu_counter_freq: u32,
    /// Max engine clock in kHz.
    pub max_engine_clock: u64,
    /// Max memory clock in kHz.
    pub max_memory_clock: u64,
    /// Active CUs.
    pub cu_active_number: u32,
    /// Invalid, do not use.
    pub cu_ao_mask: u32,
    /// Active CU bitmap per shader engine and array.
    pub cu_bitmap: [[u32; 4]; 4],
    /// Render backend mask.
    pub enabled_rb_pipes_mask: u32,
    /// Render backends.
    pub num_rb_pipes: u32,
    /// Hardware gfx contexts.
    pub num_hw_gfx_contexts: u32,
    /// PCIe generation (was `_pad`).
    pub pcie_gen: u32,
    /// `AMDGPU_IDS_FLAGS_*`.
    pub ids_flags: u64,
    /// Lowest VA for user-mode drivers.
    pub virtual_address_offset: u64,
    /// Highest VA.
    pub virtual_address_max: u64,
    /// VA alignment.
    pub virtual_address_alignment: u32,
    /// PTE fragment size.
    pub pte_fragment_size: u32,
    /// GART page size.
    pub gart_page_size: u32,
    /// Constant-engine RAM size.
    pub ce_ram_size: u32,
    /// `AMDGPU_VRAM_TYPE_*`.
    pub vram_type: u32,
    /// VRAM bus width in bits.
    pub vram_bit_width: u32,
    /// VCE harvesting.
    pub vce_harvest_config: u32,
    /// Double off-chip LDS buffers.
    pub gc_double_offchip_lds_buf: u32,
    /// NGG primitive buffer.
    pub prim_buf_gpu_addr: u64,
    /// NGG position buffer.
    pub pos_buf_gpu_addr: u64,
    /// NGG control sideband.
    pub cntl_sb_buf_gpu_addr: u64,
    /// NGG parameter cache.
    pub param_buf_gpu_addr: u64,
    /// NGG primitive buffer size.
    pub prim_buf_size: u32,
    /// NGG position buffer size.
    pub pos_buf_size: u32,
    /// NGG control sideband size.
    pub cntl_sb_buf_size: u32,
    /// NGG parameter cache size.
    pub param_buf_size: u32,
    /// Wavefront size.
    pub wave_front_size: u32,
    /// Shader-visible VGPRs.
    pub num_shader_visible_vgprs: u32,
    /// CUs per shader array.
    pub num_cu_per_sh: u32,
    /// TCC blocks.
    pub num_tcc_blocks: u32,
    /// GS VGT table depth.
    pub gs_vgt_table_depth: u32,
    /// GS primitive buffer depth.
    pub gs_prim_buffer_depth: u32,
    /// Max GS waves per VGT.
    pub max_gs_waves_per_vgt: u32,
    /// PCIe lanes (was `_pad1`).
    pub pcie_num_lanes: u32,
    /// Always-on CU bitmap.
    pub cu_ao_bitmap: [[u32; 4]; 4],
    /// Lowest high VA.
    pub high_va_offset: u64,
    /// Highest high VA.
    pub high_va_max: u64,
    /// gfx10 PA_SC_TILE_STEERING_OVERRIDE.
    pub pa_sc_tile_steering_override: u32,
    /// Padding.
    pub pad: u32,
    /// Disabled TCCs.
    pub tcc_disabled_mask: u64,
    /// Min engine clock in kHz.
    pub min_engine_clock: u64,
    /// Min memory clock in kHz.
    pub min_memory_clock: u64,
    /// TCP cache size in KiB.
    pub tcp_cache_size: u32,
    /// SQCs per WGP.
    pub num_sqc_per_wgp: u32,
    /// Scalar data cache size in KiB.
    pub sqc_data_cache_size: u32,
    /// Instruction cache size in KiB.
    pub sqc_inst_cache_size: u32,
    /// GL1 cache size in KiB.
    pub gl1c_cache_size: u32,
    /// GL2 cache size in KiB.
    pub gl2c_cache_size: u32,
    /// Infinity cache size.
    pub mall_size: u64,
    /// Render backend mask, high half.
    pub enabled_rb_pipes_mask_hi: u32,
    /// Shadow buffer size.
    pub shadow_size: u32,
    /// Shadow buffer alignment.
    pub shadow_alignment: u32,
    /// CSA size.
    pub csa_size: u32,
    /// CSA alignment.
    pub csa_alignment: u32,
    /// IP blocks with user queues.
    pub userq_ip_mask: u32,
}

impl Default for DeviceInfo {
    fn default() -> Self {
        zerocopy::FromZeros::new_zeroed()
    }
}

/// `struct drm_version` (`DRM_IOCTL_VERSION`), with its pointers as integers and the
/// implicit padding after `version_patchlevel` made explicit. The same layout as
/// `drm_sys::drm_version` (asserted below), which holds raw pointers and so cannot be used
/// as a byte-safe ioctl argument.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct VersionArgs {
    /// Driver major version (from the kernel).
    pub version_major: i32,
    /// Driver minor version (from the kernel).
    pub version_minor: i32,
    /// Driver patch level (from the kernel).
    pub version_patchlevel: i32,
    /// Padding (implicit in C).
    pub pad: u32,
    /// In: capacity of `name`; out: length of the driver name.
    pub name_len: u64,
    /// User buffer for the driver name (e.g. `amdgpu`), or 0.
    pub name: u64,
    /// In: capacity of `date`; out: its length.
    pub date_len: u64,
    /// User buffer for the driver date, or 0.
    pub date: u64,
    /// In: capacity of `desc`; out: its length.
    pub desc_len: u64,
    /// User buffer for the driver description, or 0.
    pub desc: u64,
}

const _: () = {
    assert!(size_of::<VersionArgs>() == size_of::<drm_sys::drm_version>());
    assert!(align_of::<VersionArgs>() == align_of::<drm_sys::drm_version>());
    assert!(DRM_IOCTL_BASE == drm_sys::DRM_IOCTL_BASE);
    assert!(DRM_COMMAND_BASE as u32 == drm_sys::DRM_COMMAND_BASE);
};
