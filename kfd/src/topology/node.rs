//! `nodes/N/properties`: every field KFD prints for a CPU or GPU node (kfd.md §2.2).

use crate::abi::sysfs::{Capability, node};
use crate::topology::property_text::typed_properties;
use crate::topology::target::{GfxVersion, GfxVersionError};

typed_properties! {
    /// The `properties` file of one topology node, every field in the kernel's print order.
    /// Fields the kernel did not print read as 0 (`None` for those only newer kernels print).
    pub struct NodeProperties {
        /// CPU cores in this node (0 on GPU nodes).
        cpu_cores_count: u32 = node::CPU_CORES_COUNT,
        /// SIMDs of the GPU (all XCCs of the partition); 0 for a CPU node.
        simd_count: u32 = node::SIMD_COUNT,
        /// Number of `mem_banks/*`.
        mem_banks_count: u32 = node::MEM_BANKS_COUNT,
        /// Number of `caches/*`.
        caches_count: u32 = node::CACHES_COUNT,
        /// Number of `io_links/*`.
        io_links_count: u32 = node::IO_LINKS_COUNT,
        /// Number of `p2p_links/*`.
        p2p_links_count: u32 = node::P2P_LINKS_COUNT,
        /// First CPU core id.
        cpu_core_id_base: u32 = node::CPU_CORE_ID_BASE,
        /// First SIMD id.
        simd_id_base: u32 = node::SIMD_ID_BASE,
        /// Wave slots per SIMD.
        max_waves_per_simd: u32 = node::MAX_WAVES_PER_SIMD,
        /// LDS per CU in KiB.
        lds_size_in_kb: u32 = node::LDS_SIZE_IN_KB,
        /// GDS in KiB.
        gds_size_in_kb: u32 = node::GDS_SIZE_IN_KB,
        /// Global wave sync resources.
        num_gws: u32 = node::NUM_GWS,
        /// Wavefront size: 64 (GCN/CDNA) or 32 (RDNA).
        wave_front_size: u32 = node::WAVE_FRONT_SIZE,
        /// Shader arrays of all XCCs.
        array_count: u32 = node::ARRAY_COUNT,
        /// Shader arrays per shader engine.
        simd_arrays_per_engine: u32 = node::SIMD_ARRAYS_PER_ENGINE,
        /// CUs per shader array.
        cu_per_simd_array: u32 = node::CU_PER_SIMD_ARRAY,
        /// SIMDs per CU: 4 (GCN/CDNA) or 2 (RDNA).
        simd_per_cu: u32 = node::SIMD_PER_CU,
        /// Scratch wave slots per CU.
        max_slots_scratch_cu: u32 = node::MAX_SLOTS_SCRATCH_CU,
        /// major·10000 + minor·100 + stepping (see [`GfxVersion`]).
        gfx_target_version: u32 = node::GFX_TARGET_VERSION,
        /// PCI vendor id (4098 = AMD).
        vendor_id: u32 = node::VENDOR_ID,
        /// PCI device id.
        device_id: u32 = node::DEVICE_ID,
        /// PCI bus/devfn.
        location_id: u32 = node::LOCATION_ID,
        /// PCI domain.
        domain: u32 = node::DOMAIN,
        /// Minor of `/dev/dri/renderD<minor>`.
        drm_render_minor: u32 = node::DRM_RENDER_MINOR,
        /// XGMI hive id (0 if none).
        hive_id: u64 = node::HIVE_ID,
        /// PCIe SDMA engines.
        num_sdma_engines: u32 = node::NUM_SDMA_ENGINES,
        /// XGMI SDMA engines.
        num_sdma_xgmi_engines: u32 = node::NUM_SDMA_XGMI_ENGINES,
        /// SDMA queues per engine.
        num_sdma_queues_per_engine: u32 = node::NUM_SDMA_QUEUES_PER_ENGINE,
        /// Compute queues usable by KFD.
        num_cp_queues: u32 = node::NUM_CP_QUEUES,
        /// The CWSR size CREATE_QUEUE demands (newer kernels print it).
        cwsr_size: Option<u32> = node::CWSR_SIZE,
        /// The control-stack size CREATE_QUEUE demands (newer kernels print it).
        ctl_stack_size: Option<u32> = node::CTL_STACK_SIZE,
        /// Max shader clock in MHz.
        max_engine_clk_fcompute: u32 = node::MAX_ENGINE_CLK_FCOMPUTE,
        /// Printed as 0 by current kernels (memory banks carry the sizes).
        local_mem_size: u64 = node::LOCAL_MEM_SIZE,
        /// MEC firmware version.
        fw_version: u32 = node::FW_VERSION,
        /// [`Capability`] bits (see [`NodeProperties::capability`]).
        capability: u32 = node::CAPABILITY,
        /// Extra capability bits (newer kernels).
        capability2: Option<u32> = node::CAPABILITY2,
        /// Debug properties.
        debug_prop: u64 = node::DEBUG_PROP,
        /// SDMA firmware version.
        sdma_fw_version: u32 = node::SDMA_FW_VERSION,
        /// Unique id of the device or partition.
        unique_id: u64 = node::UNIQUE_ID,
        /// XCCs in this node (see [`NodeProperties::xcc_count`]).
        num_xcc: Option<u32> = node::NUM_XCC,
        /// Max CPU clock in MHz.
        max_engine_clk_ccompute: u32 = node::MAX_ENGINE_CLK_CCOMPUTE,
    }
}

impl NodeProperties {
    /// Whether this is a GPU node. libhsakmt treats `simd_count == 0` as a CPU node; the
    /// `gpu_id` file (0 for CPUs) is the other half of the test, applied by the topology reader.
    pub const fn has_simds(&self) -> bool {
        self.simd_count != 0
    }

    /// The capability bits, unknown bits kept.
    pub const fn capability(&self) -> Capability {
        Capability::from_bits_retain(self.capability)
    }

    /// Whether SRAM ECC is on (the capability's `SRAM_EDCSUPPORTED` bit): the `sramecc`
    /// feature of the node's target id.
    pub const fn sram_ecc(&self) -> bool {
        self.capability().contains(Capability::SRAM_EDCSUPPORTED)
    }

    /// XCCs in the node; libhsakmt takes an absent or zero count as 1.
    pub fn xcc_count(&self) -> u32 {
        self.num_xcc.filter(|&n| n != 0).unwrap_or(1)
    }

    /// Compute units of the node (all XCCs): `simd_count / simd_per_cu`; `None` when
    /// `simd_per_cu` is 0.
    pub const fn compute_units(&self) -> Option<u32> {
        self.simd_count.checked_div(self.simd_per_cu)
    }

    /// Shader engines of the node: `array_count / simd_arrays_per_engine` (libhsakmt's
    /// NumShaderBanks); `None` when the divisor is 0.
    pub const fn shader_engines(&self) -> Option<u32> {
        self.array_count.checked_div(self.simd_arrays_per_engine)
    }

    /// The ISA version from `gfx_target_version`.
    pub const fn gfx_version(&self) -> Result<GfxVersion, GfxVersionError> {
        GfxVersion::from_target_version(self.gfx_target_version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::PropertyText;

    /// The MI100 (gfx908) properties file of kfd.md §2.6, from mrodden/rocmi's test fixture.
    pub(crate) const MI100: &str = "cpu_cores_count 0\nsimd_count 480\nmem_banks_count 1\n\
        caches_count 217\nio_links_count 1\np2p_links_count 3\ncpu_core_id_base 0\n\
        simd_id_base 2147487744\nmax_waves_per_simd 10\nlds_size_in_kb 64\ngds_size_in_kb 0\n\
        num_gws 64\nwave_front_size 64\narray_count 8\nsimd_arrays_per_engine 1\n\
        cu_per_simd_array 16\nsimd_per_cu 4\nmax_slots_scratch_cu 32\n\
        gfx_target_version 90008\nvendor_id 4098\ndevice_id 29580\nlocation_id 8960\ndomain 0\n\
        drm_render_minor 128\nhive_id 0\nnum_sdma_engines 2\nnum_sdma_xgmi_engines 6\n\
        num_sdma_queues_per_engine 8\nnum_cp_queues 24\nmax_engine_clk_fcompute 1502\n\
        local_mem_size 0\nfw_version 65\ncapability 749970048\ndebug_prop 1494\n\
        sdma_fw_version 18\nunique_id 7809984429061111111\nnum_xcc 1\n\
        max_engine_clk_ccompute 2000\n";

    #[test]
    fn mi100_fixture_decodes() {
        let props =
            NodeProperties::from_text(&PropertyText::parse(MI100.as_bytes()).unwrap()).unwrap();
        assert!(props.unknown.is_empty(), "{:?}", props.unknown);
        assert_eq!(props.compute_units(), Some(120));
        assert_eq!(props.shader_engines(), Some(8));
        assert_eq!(props.gfx_version().unwrap().processor_name(), "gfx908");
        assert_eq!(props.drm_render_minor, 128);
        assert_eq!(props.unique_id, 7809984429061111111);
        assert_eq!(props.simd_id_base, 2147487744);
        assert_eq!(props.xcc_count(), 1);
        assert_eq!(props.cwsr_size, None);
        let caps = props.capability();
        assert_eq!(caps.doorbell_type(), Capability::DOORBELL_TYPE_2_0);
        assert!(caps.contains(Capability::SVMAPI_SUPPORTED));
        assert!(caps.contains(Capability::TRAP_DEBUG_FIRMWARE_SUPPORTED));
        assert!(props.sram_ecc());
    }

    #[test]
    fn unknown_names_are_reported_and_wide_values_rejected() {
        let text = PropertyText::parse(b"simd_count 8\nsimd_per_cu 4\nnew_field 3\n").unwrap();
        let props = NodeProperties::from_text(&text).unwrap();
        assert_eq!(props.compute_units(), Some(2));
        assert_eq!(props.unknown.len(), 1);
        assert_eq!(props.xcc_count(), 1);
        let wide = PropertyText::parse(b"simd_count 4294967296\n").unwrap();
        assert_eq!(
            NodeProperties::from_text(&wide),
            Err(("simd_count", "value does not fit 32 bits"))
        );
    }

    #[test]
    fn cpu_nodes_divide_safely() {
        let props = NodeProperties::default();
        assert!(!props.has_simds());
        assert!(!props.sram_ecc());
        assert_eq!(props.compute_units(), None);
        assert_eq!(props.shader_engines(), None);
        assert!(props.gfx_version().is_err());
    }
}
