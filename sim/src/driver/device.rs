//! One simulated GPU as the kernel driver knows it: the configuration turned into the numbers
//! KFD reports (gpu_id, node, render minor, SIMD layout, capability bits, queue buffer sizes,
//! queue limits) and the per-device state shared by all processes (VRAM budget, GEM offsets,
//! the MMIO remap page, SDMA queue slots).

use std::sync::Arc;

use kfd::abi::sysfs::Capability;

use crate::config::GpuConfig;
use crate::driver::accounting::VramPool;
use crate::driver::cwsr::{NodeShape, QueueBufferSizes, queue_buffer_sizes};
use crate::driver::fork_gate::TableMutex;
use crate::driver::gem::GemOffsets;
use crate::driver::host_memory::{Backing, MemoryFile};
use crate::gpu::target::GfxTarget;

/// `KFD_GPU_PROCESSOR_ID_BASE`: SIMD ids of the first GPU start here.
const GPU_PROCESSOR_ID_BASE: u32 = 0x8000_1000;

/// How the active CUs are spread over the chip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CuLayout {
    /// XCCs.
    pub xccs: u32,
    /// Shader engines per XCC.
    pub shader_engines_per_xcc: u32,
    /// Shader arrays per engine.
    pub shader_arrays_per_engine: u32,
    /// Physical CUs per shader array.
    pub cu_per_shader_array: u32,
    /// Active CUs per XCC.
    pub active_cus_per_xcc: u32,
}

impl CuLayout {
    pub(crate) fn for_config(gpu: &GpuConfig) -> Self {
        let per_xcc = gpu.compute_units / gpu.xccs;
        let engines = gpu.shader_engines_per_xcc.min(per_xcc).max(1);
        let arrays = gpu.shader_arrays_per_engine;
        let preset_cus = gpu.shader_engines_per_xcc * arrays * gpu.cu_per_shader_array;
        // Keep the preset's physical layout unless scaling shrank it below the active CUs'
        // needs or removed engines.
        let cu_per_array = if engines == gpu.shader_engines_per_xcc && per_xcc <= preset_cus {
            gpu.cu_per_shader_array
        } else {
            per_xcc.div_ceil(engines * arrays)
        };
        Self {
            xccs: gpu.xccs,
            shader_engines_per_xcc: engines,
            shader_arrays_per_engine: arrays,
            cu_per_shader_array: cu_per_array,
            active_cus_per_xcc: per_xcc,
        }
    }

    /// Shader arrays of one XCC.
    pub fn arrays_per_xcc(&self) -> u32 {
        self.shader_engines_per_xcc * self.shader_arrays_per_engine
    }

    /// Active CUs of the whole node.
    pub fn total_cus(&self) -> u32 {
        self.active_cus_per_xcc * self.xccs
    }

    /// Active CUs of shader array `array` (of one XCC): the active CUs dealt out round-robin.
    pub fn active_cus_in_array(&self, array: u32) -> u32 {
        let arrays = self.arrays_per_xcc();
        self.active_cus_per_xcc / arrays + u32::from(array < self.active_cus_per_xcc % arrays)
    }
}

/// One GPU of the machine.
pub(crate) struct Device {
    pub index: usize,
    pub node: u32,
    pub gpu_id: u32,
    pub render_minor: u32,
    pub config: GpuConfig,
    pub layout: CuLayout,
    pub simd_id_base: u32,
    pub location_id: u32,
    pub unique_id: u64,
    pub hive_id: u64,
    pub capability: u32,
    pub debug_prop: u64,
    pub sizes: QueueBufferSizes,
    /// Queues one process may have on this device (`max_queues` in `pqm_create_queue`).
    pub max_queues_per_process: u32,
    pub vram: Arc<VramPool>,
    pub gem: GemOffsets,
    pub mmio_page: Arc<Backing>,
    pub sdma: TableMutex<SdmaSlots>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("gpu_id", &self.gpu_id)
            .field("node", &self.node)
            .field("target", &self.config.target)
            .finish_non_exhaustive()
    }
}

/// SDMA queue slots of a device (shared by all processes, as the DQM's SDMA bitmaps are).
#[derive(Debug, Default)]
pub(crate) struct SdmaSlots {
    /// `dqm->sdma_bitmap` inverted: bit `sdma_id` set while a PCIe SDMA queue uses it.
    pub pcie_used: u128,
    /// The same for the XGMI SDMA engines.
    pub xgmi_used: u128,
}

/// The capability bits of a GFX9 compute part, as KFD composes them: watch points (4),
/// doorbell type 2.0 (64-bit, AQL semantics), debugger trap support with wave-launch override
/// and mode, precise memory operations (GC 9.4.2+), EDC and RAS notification (RAS-enabled
/// boards), and debugger firmware support. SVM API support is not claimed: the simulator does
/// not model SVM ranges. (Modelled on the decoded MI100 value of kfd.md §2.4; unconfirmed for
/// MI210/MI300X boards.)
///
/// GFX11 boards (RX 7900 XTX) have no ECC or RAS: the same bits without EDC and RAS
/// notification, which is the real gfx1100 value 0x2807A280 of kfd.md §2.4 without the SVM bit.
fn capability_bits(target: GfxTarget) -> u32 {
    let ecc = if target.is_gfx9() {
        Capability::MEM_EDCSUPPORTED.bits()
            | Capability::RASEVENTNOTIFY.bits()
            | Capability::SRAM_EDCSUPPORTED.bits()
    } else {
        0
    };
    let c = ecc
        | Capability::WATCH_POINTS_SUPPORTED.bits()
        | (2 << Capability::WATCH_POINTS_TOTALBITS_SHIFT)
        | (Capability::DOORBELL_TYPE_2_0 << Capability::DOORBELL_TYPE_SHIFT)
        | Capability::TRAP_DEBUG_SUPPORT.bits()
        | Capability::TRAP_DEBUG_WAVE_LAUNCH_TRAP_OVERRIDE_SUPPORTED.bits()
        | Capability::TRAP_DEBUG_WAVE_LAUNCH_MODE_SUPPORTED.bits()
        | Capability::TRAP_DEBUG_PRECISE_MEMORY_OPERATIONS_SUPPORTED.bits()
        | Capability::TRAP_DEBUG_FIRMWARE_SUPPORTED.bits();
    c & !Capability::RESERVED_WAS_SRAM_EDCSUPPORTED.bits()
}

/// `debug_prop`: the watch-address mask bits (low bit 6 on GFX9, 7 from GFX10; high bit 29)
/// and DispatchInfoAlwaysValid (ttmps set up at every wave launch). GFX9: 1494, the MI100
/// value (kfd.md §2.6; unconfirmed for MI210/MI300X). GFX11: 1495, the value of a real
/// RX 7900 XTX's properties file (tinygrad's KFD mock); the kernel sets the always-valid bit
/// there only with new enough MES firmware.
fn debug_properties(target: GfxTarget) -> u64 {
    const HI_BIT: u64 = 29 << 4;
    const DISPATCH_INFO_ALWAYS_VALID: u64 = 0x400;
    let lo_bit = if target.is_gfx9() { 6 } else { 7 };
    lo_bit | HI_BIT | DISPATCH_INFO_ALWAYS_VALID
}

/// A 16-bit, non-zero gpu_id, different for every GPU of the machine (the kernel hashes PCI
/// location, device id and memory size; any consistent value will do).
fn gpu_id_for(index: usize, gpu: &GpuConfig, taken: &[u32]) -> u32 {
    let mut h: u32 = 0x9E37_79B9;
    for word in [
        gpu.device_id,
        index as u32,
        gpu.compute_units,
        (gpu.vram_bytes >> 20) as u32,
    ] {
        h = (h ^ word).wrapping_mul(0x0100_0193).rotate_left(7);
    }
    let mut id = (h ^ (h >> 16)) & 0xFFFF;
    while id == 0 || taken.contains(&id) {
        id = (id + 0x1357) & 0xFFFF;
    }
    id
}

impl Device {
    pub(crate) fn build(
        index: usize,
        gpu: &GpuConfig,
        taken_ids: &[u32],
        simd_id_base: u32,
        hive_id: u64,
        system_memory: u64,
        memory: &Arc<MemoryFile>,
    ) -> Result<Self, crate::error::SimError> {
        let layout = CuLayout::for_config(gpu);
        let gfxv = gpu.target.gfx_target_version();
        let sizes = queue_buffer_sizes(&NodeShape {
            gfx_target_version: gfxv,
            simd_count: layout.total_cus() * gpu.simd_per_cu,
            simd_per_cu: gpu.simd_per_cu,
            xccs: layout.xccs,
            array_count_per_xcc: layout.arrays_per_xcc(),
            simd_arrays_per_engine: layout.shader_arrays_per_engine,
            lds_size_in_kb: gpu.lds_size_kib,
        });
        let mmio_page = memory
            .allocate(4096, None)
            .map_err(|e| crate::error::SimError::host("allocating the MMIO remap page", e))?;
        let gpu_id = gpu_id_for(index, gpu, taken_ids);
        Ok(Self {
            index,
            node: index as u32 + 1,
            gpu_id,
            render_minor: 128 + index as u32,
            config: gpu.clone(),
            layout,
            simd_id_base,
            // PCI bus 0x03, 0x23, 0x43, ... device 0, function 0.
            location_id: ((0x03 + 0x20 * index as u32) & 0xFF) << 8,
            unique_id: 0x5A1E_0000_0000_0000
                | (u64::from(gpu.device_id) << 16)
                | (u64::from(gpu_id) << 32 & 0xFFFF_0000_0000)
                | index as u64,
            hive_id,
            capability: capability_bits(gpu.target),
            debug_prop: debug_properties(gpu.target),
            sizes,
            max_queues_per_process: match gpu.target {
                // GC 9.4.3 (MI300X) has no HWS limit: 255.
                GfxTarget::Gfx942 => 255,
                // pqm_create_queue has no GC 11 case: the HWS limit applies under MES too
                // (unsure whether MES refuses earlier on a real board).
                GfxTarget::Gfx90a | GfxTarget::Gfx1100 => 127,
            },
            vram: Arc::new(VramPool::new(gpu.vram_bytes, system_memory)),
            gem: GemOffsets::default(),
            mmio_page,
            sdma: TableMutex::new(SdmaSlots::default()),
        })
    }

    /// First SIMD id of the next GPU.
    pub(crate) fn next_simd_id_base(&self) -> u32 {
        self.simd_id_base + self.simd_count()
    }

    /// SIMDs of the node (all XCCs), as `simd_count` prints it.
    pub(crate) fn simd_count(&self) -> u32 {
        self.layout.total_cus() * self.config.simd_per_cu
    }

    /// The ISA.
    pub(crate) fn target(&self) -> GfxTarget {
        self.config.target
    }

    /// LDS bytes one workgroup may use.
    pub(crate) fn lds_bytes_per_workgroup(&self) -> u32 {
        self.config.lds_size_kib * 1024
    }
}

/// The SIMD id base of the first GPU.
pub(crate) const FIRST_SIMD_ID_BASE: u32 = GPU_PROCESSOR_ID_BASE;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_follow_the_presets_and_scale_down() {
        let mi210 = CuLayout::for_config(&GpuConfig::mi210());
        assert_eq!(
            (
                mi210.shader_engines_per_xcc,
                mi210.cu_per_shader_array,
                mi210.total_cus()
            ),
            (8, 14, 104)
        );
        assert_eq!(
            (0..8).map(|a| mi210.active_cus_in_array(a)).sum::<u32>(),
            104
        );
        let small = CuLayout::for_config(&GpuConfig::mi210().with_compute_units(4));
        assert_eq!(
            (
                small.shader_engines_per_xcc,
                small.cu_per_shader_array,
                small.total_cus()
            ),
            (4, 1, 4)
        );
        let mi300x = CuLayout::for_config(&GpuConfig::mi300x());
        assert_eq!(
            (mi300x.arrays_per_xcc(), mi300x.active_cus_per_xcc),
            (4, 38)
        );
        let tiny = CuLayout::for_config(&GpuConfig::mi300x().with_compute_units(16));
        assert_eq!(
            (tiny.shader_engines_per_xcc, tiny.active_cus_per_xcc),
            (2, 2)
        );
        assert_eq!(tiny.cu_per_shader_array, 1);
    }

    #[test]
    fn capability_says_doorbell_type_two() {
        let caps = Capability::from_bits_retain(capability_bits(GfxTarget::Gfx90a));
        assert_eq!(caps.doorbell_type(), 2);
        assert!(!caps.contains(Capability::RESERVED_WAS_SRAM_EDCSUPPORTED));
        assert!(caps.contains(Capability::TRAP_DEBUG_FIRMWARE_SUPPORTED));
        // A real gfx1100 reports 0x2807A280; the simulator claims no SVM API (bit 27).
        assert_eq!(
            capability_bits(GfxTarget::Gfx1100),
            0x2807_A280 & !Capability::SVMAPI_SUPPORTED.bits()
        );
        assert_eq!(debug_properties(GfxTarget::Gfx90a), 1494);
        assert_eq!(debug_properties(GfxTarget::Gfx1100), 1495);
    }

    #[test]
    fn gpu_ids_are_distinct_and_sixteen_bits() {
        let gpu = GpuConfig::mi210();
        let mut taken = Vec::new();
        for i in 0..64 {
            let id = gpu_id_for(i, &gpu, &taken);
            assert!(id != 0 && id <= 0xFFFF && !taken.contains(&id));
            taken.push(id);
        }
    }
}
