//! What a simulated machine is made of: its GPUs (presets of real boards, with knobs to scale
//! them down), how they are linked, the host they sit in, and the engines that execute queues
//! and kernels.
//!
//! Board facts come from `device-presets.md` (AMD's own emulator configs for MI210 and MI300X).
//! A scaled-down GPU (fewer compute units, less VRAM) is reported consistently everywhere: the
//! topology, `AMDGPU_INFO`, the CWSR sizes CREATE_QUEUE demands, and the memory budget.

use std::fmt;
use std::sync::Arc;

use crate::error::SimError;
use crate::gpu::cp::CommandProcessorEngine;
use crate::gpu::dispatch::ShaderCore;
use crate::gpu::queue::QueueEngine;
use crate::gpu::sdma::SdmaEngine;
use crate::gpu::shader_cores::shader_core_for;
use crate::gpu::target::GfxTarget;

/// `AMDGPU_FAMILY_AI`: every GFX9 part, including GC 9.4.2 (MI210) and 9.4.3 (MI300X).
///
/// device-presets.md lists 146 for MI300X, but 146 is `AMDGPU_FAMILY_YC` in `amdgpu_drm.h`;
/// amdgpu's IP discovery assigns `AMDGPU_FAMILY_AI` to all GC 9.x versions, so the simulator
/// reports 141 for both (unconfirmed on hardware).
pub const AMDGPU_FAMILY_AI: u32 = 141;

/// `AMDGPU_FAMILY_GC_11_0_0` (`amdgpu_drm.h`): Navi 31/32/33 (GC 11.0.x).
pub const AMDGPU_FAMILY_GC_11_0_0: u32 = 145;

/// `AMDGPU_VRAM_TYPE_HBM` (`amdgpu_drm.h`).
pub const VRAM_TYPE_HBM: u32 = 6;
/// `AMDGPU_VRAM_TYPE_GDDR6` (`amdgpu_drm.h`).
pub const VRAM_TYPE_GDDR6: u32 = 9;

/// One cache level as the topology reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// Size in KiB (per instance).
    pub size_kib: u32,
    /// Line size in bytes.
    pub line_bytes: u32,
    /// Associativity.
    pub associativity: u32,
}

/// The scalar caches of an RDNA work-group processor (an SQC shared by its two CUs): KFD
/// lists an instruction and a scalar data cache per SQC beside the vector L1 of each CU
/// (`kfd_fill_gpu_cache_info_from_gfx_config`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqcCaches {
    /// The instruction cache of one SQC.
    pub instruction: CacheConfig,
    /// The scalar data cache of one SQC.
    pub scalar_data: CacheConfig,
    /// CUs that share one SQC.
    pub cus_per_sqc: u32,
}

/// One simulated GPU.
#[derive(Clone)]
pub struct GpuConfig {
    /// The ISA.
    pub target: GfxTarget,
    /// Marketing name (`AMD Instinct MI210`).
    pub marketing_name: String,
    /// The ASIC name KFD prints in the node's `name` file (amdgpu's ASIC name, lower case).
    pub asic_name: String,
    /// PCI device id.
    pub device_id: u32,
    /// PCI revision id (`AMDGPU_INFO_DEV_INFO.pci_rev`, the sysfs `revision`); with the device
    /// id it picks the marketing name in libdrm's `amdgpu.ids`.
    pub pci_revision: u32,
    /// `AMDGPU_FAMILY_*`.
    pub family: u32,
    /// Active compute units, all XCCs together.
    pub compute_units: u32,
    /// Accelerator complex dies (XCCs) in the node.
    pub xccs: u32,
    /// Shader engines per XCC.
    pub shader_engines_per_xcc: u32,
    /// Shader arrays per shader engine.
    pub shader_arrays_per_engine: u32,
    /// Physical CUs per shader array (may exceed the active ones).
    pub cu_per_shader_array: u32,
    /// SIMDs per CU.
    pub simd_per_cu: u32,
    /// Wave slots per SIMD.
    pub max_waves_per_simd: u32,
    /// LDS per CU, KiB.
    pub lds_size_kib: u32,
    /// Scratch wave slots per CU.
    pub max_slots_scratch_cu: u32,
    /// VRAM bytes.
    pub vram_bytes: u64,
    /// Whether all of VRAM is host-visible (resizable BAR); allocating PUBLIC VRAM needs it.
    pub large_bar: bool,
    /// Memory bus width in bits.
    pub memory_width_bits: u32,
    /// Max memory clock, MHz.
    pub memory_clock_mhz: u32,
    /// Max shader clock, MHz.
    pub engine_clock_mhz: u32,
    /// Vector L1 cache (per CU).
    pub l1: CacheConfig,
    /// L2 cache (per XCC).
    pub l2: CacheConfig,
    /// Last-level (MALL/Infinity) cache, if any.
    pub l3: Option<CacheConfig>,
    /// The per-WGP scalar caches the topology lists (RDNA). The GFX9 presets leave them out:
    /// their SQC caches are not modelled.
    pub sqc: Option<SqcCaches>,
    /// The GL1 cache of each shader array (RDNA), if the topology lists one.
    pub gl1: Option<CacheConfig>,
    /// `AMDGPU_VRAM_TYPE_*` of the memory.
    pub vram_type: u32,
    /// L2 channels (`num_tcc_blocks` of `AMDGPU_INFO_DEV_INFO`).
    pub tcc_blocks: u32,
    /// `num_shader_visible_vgprs` of `AMDGPU_INFO_DEV_INFO` (amdgpu's `max_gprs`).
    pub shader_visible_vgprs: u32,
    /// PCIe generation of the link (`pcie_gen` of `AMDGPU_INFO_DEV_INFO`).
    pub pcie_gen: u32,
    /// PCIe SDMA engines.
    pub sdma_engines: u32,
    /// XGMI SDMA engines.
    pub sdma_xgmi_engines: u32,
    /// SDMA queues per engine.
    pub sdma_queues_per_engine: u32,
    /// Compute queues usable by KFD (`num_cp_queues`).
    pub cp_queues: u32,
    /// MEC firmware version.
    pub mec_fw_version: u32,
    /// SDMA firmware version.
    pub sdma_fw_version: u32,
    /// The shader core that runs this GPU's kernels: by default the one of its ISA
    /// ([`shader_core_for`]: a GFX9 core of its own with one worker per available CPU, whose
    /// worker threads exist only while a dispatch runs).
    pub shader: Arc<dyn ShaderCore>,
}

impl fmt::Debug for GpuConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuConfig")
            .field("target", &self.target)
            .field("marketing_name", &self.marketing_name)
            .field("compute_units", &self.compute_units)
            .field("xccs", &self.xccs)
            .field("vram_bytes", &self.vram_bytes)
            .finish_non_exhaustive()
    }
}

impl GpuConfig {
    /// An AMD Instinct MI210 (gfx90a, 104 CUs, 64 GiB HBM2e).
    pub fn mi210() -> Self {
        Self {
            target: GfxTarget::Gfx90a,
            marketing_name: "AMD Instinct MI210".to_owned(),
            asic_name: "aldebaran".to_owned(),
            device_id: 0x740F,
            // amdgpu.ids: "740F, 02, AMD Instinct MI210".
            pci_revision: 0x02,
            family: AMDGPU_FAMILY_AI,
            compute_units: 104,
            xccs: 1,
            shader_engines_per_xcc: 8,
            shader_arrays_per_engine: 1,
            cu_per_shader_array: 14,
            simd_per_cu: 4,
            max_waves_per_simd: 8,
            lds_size_kib: 64,
            max_slots_scratch_cu: 32,
            vram_bytes: 64 << 30,
            large_bar: true,
            memory_width_bits: 4096,
            memory_clock_mhz: 1600,
            engine_clock_mhz: 1700,
            l1: CacheConfig {
                size_kib: 16,
                line_bytes: 64,
                associativity: 4,
            },
            l2: CacheConfig {
                size_kib: 8192,
                line_bytes: 128,
                associativity: 16,
            },
            l3: None,
            sqc: None,
            gl1: None,
            vram_type: VRAM_TYPE_HBM,
            tcc_blocks: 16,
            shader_visible_vgprs: 512,
            pcie_gen: 4,
            sdma_engines: 2,
            sdma_xgmi_engines: 3,
            sdma_queues_per_engine: 8,
            cp_queues: 24,
            // Plausible MI210 firmware levels; any value is consistent as long as topology
            // and AMDGPU_INFO agree.
            mec_fw_version: 78,
            sdma_fw_version: 8,
            shader: shader_core_for(GfxTarget::Gfx90a),
        }
    }

    /// An AMD Instinct MI300X (gfx942, 304 CUs in 8 XCCs, 192 GiB HBM3).
    pub fn mi300x() -> Self {
        Self {
            target: GfxTarget::Gfx942,
            marketing_name: "AMD Instinct MI300X".to_owned(),
            // MI300X is an IP-discovery ASIC: amdgpu's ASIC name is "IP DISCOVERY".
            asic_name: "ip discovery".to_owned(),
            device_id: 0x74A1,
            // amdgpu.ids: "74A1, 00, AMD Instinct MI300X".
            pci_revision: 0x00,
            family: AMDGPU_FAMILY_AI,
            compute_units: 304,
            xccs: 8,
            shader_engines_per_xcc: 4,
            shader_arrays_per_engine: 1,
            cu_per_shader_array: 10,
            simd_per_cu: 4,
            max_waves_per_simd: 8,
            lds_size_kib: 64,
            max_slots_scratch_cu: 32,
            vram_bytes: 192 << 30,
            large_bar: true,
            memory_width_bits: 8192,
            memory_clock_mhz: 1300,
            engine_clock_mhz: 2100,
            l1: CacheConfig {
                size_kib: 32,
                line_bytes: 128,
                associativity: 4,
            },
            l2: CacheConfig {
                size_kib: 4096,
                line_bytes: 128,
                associativity: 16,
            },
            l3: Some(CacheConfig {
                size_kib: 256 * 1024,
                line_bytes: 64,
                associativity: 16,
            }),
            sqc: None,
            gl1: None,
            vram_type: VRAM_TYPE_HBM,
            tcc_blocks: 16,
            shader_visible_vgprs: 512,
            pcie_gen: 5,
            sdma_engines: 4,
            sdma_xgmi_engines: 6,
            sdma_queues_per_engine: 8,
            cp_queues: 128,
            mec_fw_version: 177,
            sdma_fw_version: 19,
            shader: shader_core_for(GfxTarget::Gfx942),
        }
    }

    /// An AMD Radeon RX 7900 XTX (Navi 31, gfx1100, 96 CUs in 48 WGPs, 24 GiB GDDR6).
    ///
    /// The topology numbers follow the properties file of a real board that tinygrad's KFD
    /// mock carries (`test/mockgpu/amd/amdgpu.py`, kfd.md §2.6): simd_count 192, 16 waves per
    /// SIMD, wave32, 12 shader arrays of 8 CUs, 32 scratch slots per CU, 2 SDMA engines with
    /// 6 KFD queues each, 8 CP queues (MES keeps the rest), MEC firmware 2140, SDMA firmware
    /// 20, max shader clock 2482 MHz, 206 caches. Cache sizes are AMD's published RDNA3
    /// figures (32 KiB vector L0 per CU, 32 KiB instruction and 16 KiB scalar cache per WGP,
    /// 256 KiB GL1 per shader array, 6 MiB L2, 96 MiB Infinity Cache); the kernel reads them
    /// from the board's IP discovery table, which was not available here (unsure: line
    /// sizes, and associativity, which that path leaves 0).
    ///
    /// The BAR: this preset has resizable BAR on (the CPU sees all 24 GiB, heap FB_PUBLIC),
    /// as AMD's platforms enable it by default for RDNA3 ("Smart Access Memory") and ROCm
    /// recommends it. Without it the CPU sees 256 MiB: `rx7900xtx-small-bar`.
    pub fn rx7900xtx() -> Self {
        Self {
            target: GfxTarget::Gfx1100,
            marketing_name: "AMD Radeon RX 7900 XTX".to_owned(),
            // Navi 31 is an IP-discovery ASIC, like MI300X.
            asic_name: "ip discovery".to_owned(),
            device_id: 0x744C,
            // amdgpu.ids: "744C, C8, AMD Radeon RX 7900 XTX" (CC is the 7900 XT).
            pci_revision: 0xC8,
            family: AMDGPU_FAMILY_GC_11_0_0,
            compute_units: 96,
            xccs: 1,
            shader_engines_per_xcc: 6,
            shader_arrays_per_engine: 2,
            cu_per_shader_array: 8,
            simd_per_cu: 2,
            max_waves_per_simd: 16,
            lds_size_kib: 64,
            max_slots_scratch_cu: 32,
            vram_bytes: 24 << 30,
            large_bar: true,
            memory_width_bits: 384,
            // KFD's mem_clk_max is the memory controller clock: 20 Gbps GDDR6 is 2500 MHz,
            // of which amdgpu's DPM tables report half (unsure: not read from a board).
            memory_clock_mhz: 1250,
            engine_clock_mhz: 2482,
            l1: CacheConfig {
                size_kib: 32,
                line_bytes: 128,
                associativity: 0,
            },
            l2: CacheConfig {
                size_kib: 6 * 1024,
                line_bytes: 128,
                associativity: 0,
            },
            l3: Some(CacheConfig {
                size_kib: 96 * 1024,
                line_bytes: 64,
                associativity: 0,
            }),
            sqc: Some(SqcCaches {
                instruction: CacheConfig {
                    size_kib: 32,
                    line_bytes: 64,
                    associativity: 0,
                },
                scalar_data: CacheConfig {
                    size_kib: 16,
                    line_bytes: 64,
                    associativity: 0,
                },
                cus_per_sqc: 2,
            }),
            gl1: Some(CacheConfig {
                size_kib: 256,
                line_bytes: 128,
                associativity: 0,
            }),
            vram_type: VRAM_TYPE_GDDR6,
            // 384-bit bus in 24 16-bit channels, one L2 channel each (unsure: the kernel
            // takes gc_num_tccs from IP discovery).
            tcc_blocks: 24,
            // 192 KiB of VGPRs per SIMD: 1536 wave32 registers (unsure: amdgpu's max_gprs
            // comes from IP discovery's gc_num_gprs).
            shader_visible_vgprs: 1536,
            pcie_gen: 4,
            sdma_engines: 2,
            sdma_xgmi_engines: 0,
            sdma_queues_per_engine: 6,
            cp_queues: 8,
            mec_fw_version: 2140,
            sdma_fw_version: 20,
            shader: shader_core_for(GfxTarget::Gfx1100),
        }
    }

    /// The preset for `target` (MI210 for gfx90a, MI300X for gfx942, RX 7900 XTX for gfx1100).
    pub fn for_target(target: GfxTarget) -> Self {
        match target {
            GfxTarget::Gfx90a => Self::mi210(),
            GfxTarget::Gfx942 => Self::mi300x(),
            GfxTarget::Gfx1100 => Self::rx7900xtx(),
        }
    }

    /// Scale the GPU to `compute_units` active CUs (a multiple of the XCC count). The shader
    /// engines shrink with it where there are fewer CUs than engines.
    #[must_use]
    pub fn with_compute_units(mut self, compute_units: u32) -> Self {
        self.compute_units = compute_units;
        self
    }

    /// Give the GPU `bytes` of VRAM.
    #[must_use]
    pub fn with_vram(mut self, bytes: u64) -> Self {
        self.vram_bytes = bytes;
        self
    }

    /// Run this GPU's kernels on `shader`.
    #[must_use]
    pub fn with_shader(mut self, shader: Arc<dyn ShaderCore>) -> Self {
        self.shader = shader;
        self
    }

    /// A resizable (large) BAR that shows all of VRAM to the CPU, or a small one that shows
    /// only the first 256 MiB.
    #[must_use]
    pub fn with_large_bar(mut self, large_bar: bool) -> Self {
        self.large_bar = large_bar;
        self
    }

    pub(crate) fn validate(&self) -> Result<(), SimError> {
        let bad = |what: String| Err(SimError::Config(what));
        if self.xccs == 0 || self.compute_units == 0 || self.compute_units % self.xccs != 0 {
            return bad(format!(
                "{} compute units cannot be spread over {} XCCs",
                self.compute_units, self.xccs
            ));
        }
        if self.shader_engines_per_xcc == 0
            || self.shader_arrays_per_engine == 0
            || self.simd_per_cu == 0
        {
            return bad("shader engines, arrays and SIMDs per CU must be non-zero".to_owned());
        }
        if self.compute_units > 1024 {
            return bad(format!("{} compute units is too many", self.compute_units));
        }
        if self.vram_bytes < (64 << 20) || self.vram_bytes % 4096 != 0 {
            return bad(format!(
                "VRAM size {:#x} must be page-aligned and at least 64 MiB",
                self.vram_bytes
            ));
        }
        Ok(())
    }
}

/// A whole simulated machine: the host and its GPUs.
#[derive(Clone)]
pub struct MachineConfig {
    /// The GPUs, in topology order (node 1, 2, ...).
    pub gpus: Vec<GpuConfig>,
    /// Whether the GPUs form one XGMI hive (fully connected by XGMI io_links).
    pub xgmi_hive: bool,
    /// Starts the command processor of every queue CREATE_QUEUE creates (by default a fresh
    /// [`CommandProcessorEngine`]: AQL queues execute; PM4 queues are accepted but idle).
    pub engine: Arc<dyn QueueEngine>,
    /// Starts the copy engine of every SDMA queue CREATE_QUEUE creates (by default a fresh
    /// [`SdmaEngine`]).
    pub sdma_engine: Arc<dyn QueueEngine>,
    /// The KFD interface minor version GET_VERSION reports; ioctls newer than it are outside
    /// the table and answer ENOTTY (see `kfd_ioctl`).
    pub kfd_minor_version: u32,
    /// CPU cores of the host node.
    pub cpu_cores: u32,
    /// Max CPU clock, MHz.
    pub cpu_clock_mhz: u32,
    /// System memory bytes (the CPU node's memory bank; the KFD and TTM limits derive from it).
    pub system_memory_bytes: u64,
}

impl fmt::Debug for MachineConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MachineConfig")
            .field("gpus", &self.gpus)
            .field("xgmi_hive", &self.xgmi_hive)
            .field("kfd_minor_version", &self.kfd_minor_version)
            .finish_non_exhaustive()
    }
}

/// The newest KFD interface minor version the simulator implements (1.18, Linux 6.17: it has
/// `sdma_engine_id` in CREATE_QUEUE and `misc_process_flag` in SET_MEMORY_POLICY, but neither
/// CREATE_PROCESS (1.19) nor the later additions).
pub const NEWEST_KFD_MINOR_VERSION: u32 = 18;

impl Default for MachineConfig {
    fn default() -> Self {
        Self::mi210()
    }
}

impl MachineConfig {
    /// A host with one GPU.
    pub fn single(gpu: GpuConfig) -> Self {
        Self {
            gpus: vec![gpu],
            xgmi_hive: false,
            engine: Arc::new(CommandProcessorEngine::new()),
            sdma_engine: Arc::new(SdmaEngine::new()),
            kfd_minor_version: NEWEST_KFD_MINOR_VERSION,
            cpu_cores: 16,
            cpu_clock_mhz: 3000,
            system_memory_bytes: 64 << 30,
        }
    }

    /// One MI210 (gfx90a): the default machine.
    pub fn mi210() -> Self {
        Self::single(GpuConfig::mi210())
    }

    /// One MI300X (gfx942).
    pub fn mi300x() -> Self {
        Self::single(GpuConfig::mi300x())
    }

    /// One MI210 behind a small BAR: only the first 256 MiB of VRAM are CPU-visible, so VRAM
    /// the CPU maps (`PUBLIC`) cannot be allocated and reaching VRAM from the host takes a
    /// copy engine (topology heap `FB_PRIVATE`, `AMDGPU_INFO` visible VRAM 256 MiB).
    pub fn mi210_small_bar() -> Self {
        Self::single(GpuConfig::mi210().with_large_bar(false))
    }

    /// One Radeon RX 7900 XTX (gfx1100) with resizable BAR.
    pub fn rx7900xtx() -> Self {
        Self::single(GpuConfig::rx7900xtx())
    }

    /// One Radeon RX 7900 XTX in a host without resizable BAR: the CPU sees the first
    /// 256 MiB of its VRAM only.
    pub fn rx7900xtx_small_bar() -> Self {
        Self::single(GpuConfig::rx7900xtx().with_large_bar(false))
    }

    /// `count` MI210s joined by XGMI bridges into one hive.
    pub fn mi210_hive(count: usize) -> Self {
        Self::mi210().with_gpu_count(count).with_xgmi_hive(true)
    }

    /// An 8-GPU MI300X platform: one XGMI hive, every GPU linked to every other.
    pub fn mi300x_platform() -> Self {
        Self::mi300x().with_gpu_count(8).with_xgmi_hive(true)
    }

    /// Replace the GPUs with `count` copies of the first one (the copies share its shader core;
    /// give a GPU its own with [`GpuConfig::with_shader`]).
    #[must_use]
    pub fn with_gpu_count(mut self, count: usize) -> Self {
        let first = self.gpus.first().cloned().unwrap_or_else(GpuConfig::mi210);
        self.gpus = vec![first; count];
        self
    }

    /// Replace every GPU with the preset of `target`, keeping the GPU count. Apply scaling
    /// knobs (compute units, VRAM, shader) after this one.
    #[must_use]
    pub fn with_target(mut self, target: GfxTarget) -> Self {
        let count = self.gpus.len().max(1);
        self.gpus = vec![GpuConfig::for_target(target); count];
        self
    }

    /// Scale every GPU to `compute_units` active CUs.
    #[must_use]
    pub fn with_compute_units(mut self, compute_units: u32) -> Self {
        for gpu in &mut self.gpus {
            gpu.compute_units = compute_units;
        }
        self
    }

    /// Give every GPU `bytes` of VRAM.
    #[must_use]
    pub fn with_vram(mut self, bytes: u64) -> Self {
        for gpu in &mut self.gpus {
            gpu.vram_bytes = bytes;
        }
        self
    }

    /// Join the GPUs in one XGMI hive (or not).
    #[must_use]
    pub fn with_xgmi_hive(mut self, hive: bool) -> Self {
        self.xgmi_hive = hive;
        self
    }

    /// Start queues with `engine`.
    #[must_use]
    pub fn with_engine(mut self, engine: Arc<dyn QueueEngine>) -> Self {
        self.engine = engine;
        self
    }

    /// Start SDMA queues with `engine`.
    #[must_use]
    pub fn with_sdma_engine(mut self, engine: Arc<dyn QueueEngine>) -> Self {
        self.sdma_engine = engine;
        self
    }

    /// Run every GPU's kernels on `shader`.
    #[must_use]
    pub fn with_shader(mut self, shader: Arc<dyn ShaderCore>) -> Self {
        if let Some((last, rest)) = self.gpus.split_last_mut() {
            for gpu in rest {
                gpu.shader = shader.clone();
            }
            last.shader = shader;
        }
        self
    }

    /// Report KFD interface version 1.`minor` (and refuse the ioctls newer than it).
    #[must_use]
    pub fn with_kfd_minor_version(mut self, minor: u32) -> Self {
        self.kfd_minor_version = minor;
        self
    }

    /// Give the host `bytes` of system memory.
    #[must_use]
    pub fn with_system_memory(mut self, bytes: u64) -> Self {
        self.system_memory_bytes = bytes;
        self
    }

    pub(crate) fn validate(&self) -> Result<(), SimError> {
        if self.gpus.is_empty() || self.gpus.len() > 64 {
            return Err(SimError::Config(format!(
                "{} GPUs: a machine has 1 to 64",
                self.gpus.len()
            )));
        }
        if !(1..=NEWEST_KFD_MINOR_VERSION).contains(&self.kfd_minor_version) {
            return Err(SimError::Config(format!(
                "KFD minor version {} is not simulated (1..={NEWEST_KFD_MINOR_VERSION})",
                self.kfd_minor_version
            )));
        }
        if self.system_memory_bytes < (1 << 30) {
            return Err(SimError::Config(
                "system memory must be at least 1 GiB".to_owned(),
            ));
        }
        self.gpus.iter().try_for_each(GpuConfig::validate)
    }
}
