//! The KFD topology in sysfs: paths, property names and the values they carry
//! (`kfd_topology.c` prints them; `kfd_sysfs.h` defines the bit values; kfd.md §2).
//!
//! Every file is text: `name value\n` lines, values printed with `%u` or `%llu` (the cache
//! `sibling_map` line is a comma list). Readers must ignore names they do not know.

use bitflags::bitflags;

/// Root of the topology tree (libhsakmt's path; `/sys/class/kfd/kfd/topology` is the same).
pub const TOPOLOGY_ROOT: &str = "/sys/devices/virtual/kfd/kfd/topology";
/// Path of the KFD character device.
pub const KFD_DEVICE_PATH: &str = "/dev/kfd";

/// File names under [`TOPOLOGY_ROOT`] and under each node directory.
pub mod files {
    /// Bumped whenever the topology changes; read before and after a walk.
    pub const GENERATION_ID: &str = "generation_id";
    /// `platform_oem`, `platform_id`, `platform_rev`.
    pub const SYSTEM_PROPERTIES: &str = "system_properties";
    /// Directory of nodes `0..N`.
    pub const NODES: &str = "nodes";
    /// Decimal gpu_id of a node; 0 for CPU nodes.
    pub const GPU_ID: &str = "gpu_id";
    /// ASIC name of a node.
    pub const NAME: &str = "name";
    /// The node's property lines.
    pub const PROPERTIES: &str = "properties";
    /// Directory of memory banks.
    pub const MEM_BANKS: &str = "mem_banks";
    /// Directory of caches.
    pub const CACHES: &str = "caches";
    /// Directory of IO links.
    pub const IO_LINKS: &str = "io_links";
    /// Directory of peer-to-peer links.
    pub const P2P_LINKS: &str = "p2p_links";
    /// Per-bank current usage file of GPU memory banks.
    pub const USED_MEMORY: &str = "used_memory";
}

/// Names in `system_properties`.
pub mod system {
    /// OEM id.
    pub const PLATFORM_OEM: &str = "platform_oem";
    /// Platform id.
    pub const PLATFORM_ID: &str = "platform_id";
    /// Platform revision.
    pub const PLATFORM_REV: &str = "platform_rev";
}

/// Names in `nodes/N/properties`, in the kernel's print order. The lines from
/// `max_engine_clk_fcompute` to `num_xcc` are printed for GPU nodes only.
pub mod node {
    /// CPU cores in the node (0 on GPU nodes).
    pub const CPU_CORES_COUNT: &str = "cpu_cores_count";
    /// SIMDs of the GPU (all XCCs); 0 for CPU nodes.
    pub const SIMD_COUNT: &str = "simd_count";
    /// Number of `mem_banks/*`.
    pub const MEM_BANKS_COUNT: &str = "mem_banks_count";
    /// Number of `caches/*`.
    pub const CACHES_COUNT: &str = "caches_count";
    /// Number of `io_links/*`.
    pub const IO_LINKS_COUNT: &str = "io_links_count";
    /// Number of `p2p_links/*`.
    pub const P2P_LINKS_COUNT: &str = "p2p_links_count";
    /// First CPU core id.
    pub const CPU_CORE_ID_BASE: &str = "cpu_core_id_base";
    /// First SIMD id.
    pub const SIMD_ID_BASE: &str = "simd_id_base";
    /// Wave slots per SIMD.
    pub const MAX_WAVES_PER_SIMD: &str = "max_waves_per_simd";
    /// LDS per CU in KiB.
    pub const LDS_SIZE_IN_KB: &str = "lds_size_in_kb";
    /// GDS size in KiB.
    pub const GDS_SIZE_IN_KB: &str = "gds_size_in_kb";
    /// Global wave sync resources.
    pub const NUM_GWS: &str = "num_gws";
    /// Wavefront size (64 or 32).
    pub const WAVE_FRONT_SIZE: &str = "wave_front_size";
    /// Shader arrays (all XCCs).
    pub const ARRAY_COUNT: &str = "array_count";
    /// Shader arrays per shader engine.
    pub const SIMD_ARRAYS_PER_ENGINE: &str = "simd_arrays_per_engine";
    /// CUs per shader array.
    pub const CU_PER_SIMD_ARRAY: &str = "cu_per_simd_array";
    /// SIMDs per CU.
    pub const SIMD_PER_CU: &str = "simd_per_cu";
    /// Scratch wave slots per CU.
    pub const MAX_SLOTS_SCRATCH_CU: &str = "max_slots_scratch_cu";
    /// major·10000 + minor·100 + stepping.
    pub const GFX_TARGET_VERSION: &str = "gfx_target_version";
    /// PCI vendor id.
    pub const VENDOR_ID: &str = "vendor_id";
    /// PCI device id.
    pub const DEVICE_ID: &str = "device_id";
    /// PCI bus/devfn.
    pub const LOCATION_ID: &str = "location_id";
    /// PCI domain.
    pub const DOMAIN: &str = "domain";
    /// Minor of `/dev/dri/renderD<minor>`.
    pub const DRM_RENDER_MINOR: &str = "drm_render_minor";
    /// XGMI hive id (64-bit).
    pub const HIVE_ID: &str = "hive_id";
    /// PCIe SDMA engines.
    pub const NUM_SDMA_ENGINES: &str = "num_sdma_engines";
    /// XGMI SDMA engines.
    pub const NUM_SDMA_XGMI_ENGINES: &str = "num_sdma_xgmi_engines";
    /// SDMA queues per engine.
    pub const NUM_SDMA_QUEUES_PER_ENGINE: &str = "num_sdma_queues_per_engine";
    /// Compute queues usable by KFD.
    pub const NUM_CP_QUEUES: &str = "num_cp_queues";
    /// Max shader clock in MHz.
    pub const MAX_ENGINE_CLK_FCOMPUTE: &str = "max_engine_clk_fcompute";
    /// Printed as 0 by current kernels (64-bit).
    pub const LOCAL_MEM_SIZE: &str = "local_mem_size";
    /// MEC firmware version.
    pub const FW_VERSION: &str = "fw_version";
    /// [`Capability`](super::Capability) bits.
    pub const CAPABILITY: &str = "capability";
    /// Extra capability bits (newer kernels).
    pub const CAPABILITY2: &str = "capability2";
    /// Debug properties (64-bit).
    pub const DEBUG_PROP: &str = "debug_prop";
    /// SDMA firmware version.
    pub const SDMA_FW_VERSION: &str = "sdma_fw_version";
    /// Unique id (64-bit).
    pub const UNIQUE_ID: &str = "unique_id";
    /// XCCs in this node.
    pub const NUM_XCC: &str = "num_xcc";
    /// Max CPU clock in MHz (every node, last line).
    pub const MAX_ENGINE_CLK_CCOMPUTE: &str = "max_engine_clk_ccompute";
    /// CWSR size the kernel demands at CREATE_QUEUE (newer kernels).
    pub const CWSR_SIZE: &str = "cwsr_size";
    /// Control stack size the kernel demands at CREATE_QUEUE (newer kernels).
    pub const CTL_STACK_SIZE: &str = "ctl_stack_size";
}

/// Names in `mem_banks/M/properties`.
pub mod mem_bank {
    /// One of the `HEAP_TYPE_*` values.
    pub const HEAP_TYPE: &str = "heap_type";
    /// Size in bytes (64-bit).
    pub const SIZE_IN_BYTES: &str = "size_in_bytes";
    /// `HSA_MEM_FLAGS_*`.
    pub const FLAGS: &str = "flags";
    /// Bus width in bits.
    pub const WIDTH: &str = "width";
    /// Max memory clock in MHz.
    pub const MEM_CLK_MAX: &str = "mem_clk_max";

    /// `HSA_MEM_HEAP_TYPE_SYSTEM`.
    pub const HEAP_TYPE_SYSTEM: u32 = 0;
    /// `HSA_MEM_HEAP_TYPE_FB_PUBLIC`: host-visible VRAM.
    pub const HEAP_TYPE_FB_PUBLIC: u32 = 1;
    /// `HSA_MEM_HEAP_TYPE_FB_PRIVATE`: VRAM not visible to the host.
    pub const HEAP_TYPE_FB_PRIVATE: u32 = 2;
    /// `HSA_MEM_HEAP_TYPE_GPU_GDS`.
    pub const HEAP_TYPE_GPU_GDS: u32 = 3;
    /// `HSA_MEM_HEAP_TYPE_GPU_LDS`.
    pub const HEAP_TYPE_GPU_LDS: u32 = 4;
    /// `HSA_MEM_HEAP_TYPE_GPU_SCRATCH`.
    pub const HEAP_TYPE_GPU_SCRATCH: u32 = 5;
}

/// Names in `caches/C/properties`.
pub mod cache {
    /// Lowest processor id served.
    pub const PROCESSOR_ID_LOW: &str = "processor_id_low";
    /// Cache level.
    pub const LEVEL: &str = "level";
    /// Size in KiB.
    pub const SIZE: &str = "size";
    /// Line size in bytes.
    pub const CACHE_LINE_SIZE: &str = "cache_line_size";
    /// Lines per tag.
    pub const CACHE_LINES_PER_TAG: &str = "cache_lines_per_tag";
    /// Associativity.
    pub const ASSOCIATION: &str = "association";
    /// Latency.
    pub const LATENCY: &str = "latency";
    /// `HSA_CACHE_TYPE_*` bits.
    pub const TYPE: &str = "type";
    /// Comma list of 0/1, printed last.
    pub const SIBLING_MAP: &str = "sibling_map";

    /// `HSA_CACHE_TYPE_DATA`.
    pub const TYPE_DATA: u32 = 1;
    /// `HSA_CACHE_TYPE_INSTRUCTION`.
    pub const TYPE_INSTRUCTION: u32 = 2;
    /// `HSA_CACHE_TYPE_CPU`.
    pub const TYPE_CPU: u32 = 4;
    /// `HSA_CACHE_TYPE_HSACU`.
    pub const TYPE_HSACU: u32 = 8;
}

/// Names in `io_links/L/properties` and `p2p_links/L/properties`.
pub mod io_link {
    /// One of the `TYPE_*` values.
    pub const TYPE: &str = "type";
    /// Major version of the link.
    pub const VERSION_MAJOR: &str = "version_major";
    /// Minor version of the link.
    pub const VERSION_MINOR: &str = "version_minor";
    /// Source node.
    pub const NODE_FROM: &str = "node_from";
    /// Destination node.
    pub const NODE_TO: &str = "node_to";
    /// Relative cost.
    pub const WEIGHT: &str = "weight";
    /// Minimum latency.
    pub const MIN_LATENCY: &str = "min_latency";
    /// Maximum latency.
    pub const MAX_LATENCY: &str = "max_latency";
    /// Minimum bandwidth.
    pub const MIN_BANDWIDTH: &str = "min_bandwidth";
    /// Maximum bandwidth.
    pub const MAX_BANDWIDTH: &str = "max_bandwidth";
    /// Recommended transfer size.
    pub const RECOMMENDED_TRANSFER_SIZE: &str = "recommended_transfer_size";
    /// SDMA engines recommended for this link (newer kernels).
    pub const RECOMMENDED_SDMA_ENGINE_ID_MASK: &str = "recommended_sdma_engine_id_mask";
    /// `FLAGS_*` bits.
    pub const FLAGS: &str = "flags";

    /// `HSA_IOLINK_TYPE_PCIEXPRESS`.
    pub const TYPE_PCIEXPRESS: u32 = 2;
    /// `HSA_IOLINK_TYPE_XGMI`.
    pub const TYPE_XGMI: u32 = 11;
    /// `HSA_IOLINK_FLAGS_ENABLED`.
    pub const FLAGS_ENABLED: u32 = 1 << 0;
    /// `HSA_IOLINK_FLAGS_NON_COHERENT`.
    pub const FLAGS_NON_COHERENT: u32 = 1 << 1;
    /// `HSA_IOLINK_FLAGS_NO_ATOMICS_32_BIT`.
    pub const FLAGS_NO_ATOMICS_32_BIT: u32 = 1 << 2;
    /// `HSA_IOLINK_FLAGS_NO_ATOMICS_64_BIT`.
    pub const FLAGS_NO_ATOMICS_64_BIT: u32 = 1 << 3;
    /// `HSA_IOLINK_FLAGS_NO_PEER_TO_PEER_DMA`.
    pub const FLAGS_NO_PEER_TO_PEER_DMA: u32 = 1 << 4;
}

bitflags! {
    /// `HSA_CAP_*`: the node `capability` property.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct Capability: u32 {
        /// `HSA_CAP_HOT_PLUGGABLE`.
        const HOT_PLUGGABLE = 0x0000_0001;
        /// `HSA_CAP_ATS_PRESENT`.
        const ATS_PRESENT = 0x0000_0002;
        /// `HSA_CAP_SHARED_WITH_GRAPHICS`.
        const SHARED_WITH_GRAPHICS = 0x0000_0004;
        /// `HSA_CAP_QUEUE_SIZE_POW2`.
        const QUEUE_SIZE_POW2 = 0x0000_0008;
        /// `HSA_CAP_QUEUE_SIZE_32BIT`.
        const QUEUE_SIZE_32BIT = 0x0000_0010;
        /// `HSA_CAP_QUEUE_IDLE_EVENT`.
        const QUEUE_IDLE_EVENT = 0x0000_0020;
        /// `HSA_CAP_VA_LIMIT`.
        const VA_LIMIT = 0x0000_0040;
        /// `HSA_CAP_WATCH_POINTS_SUPPORTED`.
        const WATCH_POINTS_SUPPORTED = 0x0000_0080;
        /// `HSA_CAP_WATCH_POINTS_TOTALBITS_MASK` (log2 of the count, bits 11:8).
        const WATCH_POINTS_TOTALBITS_MASK = 0x0000_0f00;
        /// `HSA_CAP_DOORBELL_TYPE_TOTALBITS_MASK` (bits 13:12, see [`Capability::doorbell_type`]).
        const DOORBELL_TYPE_TOTALBITS_MASK = 0x0000_3000;
        /// `HSA_CAP_AQL_QUEUE_DOUBLE_MAP`.
        const AQL_QUEUE_DOUBLE_MAP = 0x0000_4000;
        /// `HSA_CAP_TRAP_DEBUG_SUPPORT`.
        const TRAP_DEBUG_SUPPORT = 0x0000_8000;
        /// `HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE_SUPPORTED`.
        const TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE_SUPPORTED = 0x0001_0000;
        /// `HSA_CAP_TRAP_DEBUG_WAVE_LAUNCH_MODE_SUPPORTED`.
        const TRAP_DEBUG_WAVE_LAUNCH_MODE_SUPPORTED = 0x0002_0000;
        /// `HSA_CAP_TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED`.
        const TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED = 0x0004_0000;
        /// `HSA_CAP_RESERVED_WAS_SRAM_EDCSUPPORTED`: must read 0.
        const RESERVED_WAS_SRAM_EDCSUPPORTED = 0x0008_0000;
        /// `HSA_CAP_MEM_EDCSUPPORTED`.
        const MEM_EDCSUPPORTED = 0x0010_0000;
        /// `HSA_CAP_RASEVENTNOTIFY`.
        const RASEVENTNOTIFY = 0x0020_0000;
        /// `HSA_CAP_ASIC_REVISION_MASK` (bits 25:22).
        const ASIC_REVISION_MASK = 0x03c0_0000;
        /// `HSA_CAP_SRAM_EDCSUPPORTED`.
        const SRAM_EDCSUPPORTED = 0x0400_0000;
        /// `HSA_CAP_SVMAPI_SUPPORTED`.
        const SVMAPI_SUPPORTED = 0x0800_0000;
        /// `HSA_CAP_FLAGS_COHERENTHOSTACCESS`.
        const FLAGS_COHERENTHOSTACCESS = 0x1000_0000;
        /// `HSA_CAP_TRAP_DEBUG_FIRMWARE_SUPPORTED`.
        const TRAP_DEBUG_FIRMWARE_SUPPORTED = 0x2000_0000;
        /// `HSA_CAP_TRAP_DEBUG_PRECISE_ALU_OPERATIONS_SUPPORTED`.
        const TRAP_DEBUG_PRECISE_ALU_OPERATIONS_SUPPORTED = 0x4000_0000;
        /// `HSA_CAP_PER_QUEUE_RESET_SUPPORTED`.
        const PER_QUEUE_RESET_SUPPORTED = 0x8000_0000;
    }
}

impl Capability {
    /// `HSA_CAP_DOORBELL_TYPE_TOTALBITS_SHIFT`.
    pub const DOORBELL_TYPE_SHIFT: u32 = 12;
    /// `HSA_CAP_DOORBELL_TYPE_2_0`: 64-bit doorbells with AQL semantics (GFX9+).
    pub const DOORBELL_TYPE_2_0: u32 = 2;
    /// `HSA_CAP_ASIC_REVISION_SHIFT`.
    pub const ASIC_REVISION_SHIFT: u32 = 22;
    /// `HSA_CAP_WATCH_POINTS_TOTALBITS_SHIFT`.
    pub const WATCH_POINTS_TOTALBITS_SHIFT: u32 = 8;

    /// The doorbell type in bits 13:12 (`HSA_CAP_DOORBELL_TYPE_*`).
    pub const fn doorbell_type(self) -> u32 {
        (self.bits() & Self::DOORBELL_TYPE_TOTALBITS_MASK.bits()) >> Self::DOORBELL_TYPE_SHIFT
    }
}
