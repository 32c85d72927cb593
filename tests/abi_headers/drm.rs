//! `drm-amdgpu` crate against `drm.h` and `amdgpu_drm.h`.

use drm_amdgpu::abi::*;
use drm_amdgpu::request;

use crate::harness::Check;
use crate::{constant, layout};

/// Items present in both libdrm's and the kernel's copies.
pub fn common_checks() -> Vec<Check> {
    let mut c = vec![
        layout!("struct drm_version" => VersionArgs {
            version_major, version_minor, version_patchlevel, pad = _, name_len, name, date_len, date, desc_len, desc,
        }),
        layout!("struct drm_amdgpu_query_fw" => QueryFw { fw_type, ip_instance, index, pad = "_pad" }),
        layout!("struct drm_amdgpu_info" => InfoArgs { return_pointer, return_size, query, query_fw }),
        layout!("struct drm_amdgpu_info_vram_gtt" => VramGttInfo { vram_size, vram_cpu_accessible_size, gtt_size }),
        layout!("struct drm_amdgpu_heap_info" => HeapInfo { total_heap_size, usable_heap_size, heap_usage, max_allocation }),
        layout!("struct drm_amdgpu_memory_info" => MemoryInfo { vram, cpu_accessible_vram, gtt }),
        layout!("struct drm_amdgpu_info_firmware" => FirmwareInfo { ver, feature }),
        // The union's largest member is 16 bytes: query_fw covers it.
        constant!(
            "sizeof(((struct drm_amdgpu_info *)0)->read_mmr_reg)",
            size_of::<QueryFw>()
        ),
        constant!("DRM_IOCTL_BASE", DRM_IOCTL_BASE).ifdef(),
        constant!("DRM_COMMAND_BASE", DRM_COMMAND_BASE).ifdef(),
        constant!("DRM_AMDGPU_INFO", DRM_AMDGPU_INFO).ifdef(),
        constant!("AMDGPU_INFO_FW_VERSION", query::FW_VERSION).ifdef(),
        constant!("AMDGPU_INFO_VRAM_GTT", query::VRAM_GTT).ifdef(),
        constant!("AMDGPU_INFO_DEV_INFO", query::DEV_INFO).ifdef(),
        constant!("AMDGPU_INFO_MEMORY", query::MEMORY).ifdef(),
        constant!("AMDGPU_INFO_FW_GFX_ME", firmware::GFX_ME).ifdef(),
        constant!("AMDGPU_INFO_FW_GFX_PFP", firmware::GFX_PFP).ifdef(),
        constant!("AMDGPU_INFO_FW_GFX_CE", firmware::GFX_CE).ifdef(),
        constant!("AMDGPU_INFO_FW_GFX_RLC", firmware::GFX_RLC).ifdef(),
        constant!("AMDGPU_INFO_FW_GFX_MEC", firmware::GFX_MEC).ifdef(),
        constant!("AMDGPU_INFO_FW_SDMA", firmware::SDMA).ifdef(),
        constant!("AMDGPU_IDS_FLAGS_FUSION", AMDGPU_IDS_FLAGS_FUSION).ifdef(),
    ];
    for r in request::ALL {
        c.push(constant!(r.name, r.opcode.raw()).ifdef());
    }
    c
}

/// Items pinned to the kernel's current uapi header.
pub fn uapi_checks() -> Vec<Check> {
    vec![layout!("struct drm_amdgpu_info_device" => DeviceInfo {
        device_id, chip_rev, external_rev, pci_rev, family, num_shader_engines, num_shader_arrays_per_engine,
        gpu_counter_freq, max_engine_clock, max_memory_clock, cu_active_number, cu_ao_mask, cu_bitmap,
        enabled_rb_pipes_mask, num_rb_pipes, num_hw_gfx_contexts, pcie_gen, ids_flags, virtual_address_offset,
        virtual_address_max, virtual_address_alignment, pte_fragment_size, gart_page_size, ce_ram_size, vram_type,
        vram_bit_width, vce_harvest_config, gc_double_offchip_lds_buf, prim_buf_gpu_addr, pos_buf_gpu_addr,
        cntl_sb_buf_gpu_addr, param_buf_gpu_addr, prim_buf_size, pos_buf_size, cntl_sb_buf_size, param_buf_size,
        wave_front_size, num_shader_visible_vgprs, num_cu_per_sh, num_tcc_blocks, gs_vgt_table_depth,
        gs_prim_buffer_depth, max_gs_waves_per_vgt, pcie_num_lanes, cu_ao_bitmap, high_va_offset, high_va_max,
        pa_sc_tile_steering_override, pad, tcc_disabled_mask, min_engine_clock, min_memory_clock, tcp_cache_size,
        num_sqc_per_wgp, sqc_data_cache_size, sqc_inst_cache_size, gl1c_cache_size, gl2c_cache_size, mall_size,
        enabled_rb_pipes_mask_hi, shadow_size, shadow_alignment, csa_size, csa_alignment, userq_ip_mask,
    })
    .extensible()]
}
