//! The amdgpu DRM render node: `DRM_IOCTL_VERSION`, the `AMDGPU_INFO` queries a KFD user
//! makes (DEV_INFO, VRAM_GTT, MEMORY, FW_VERSION) answered consistently with the topology, and
//! the mmap of BOs at their GEM offsets (`drm_gem_mmap`, `amdgpu_gem_object_mmap`).

use kfd::Errno;
use kfd::ioctl::{Direction, Opcode};
use zerocopy::{FromBytes, IntoBytes};

use drm_amdgpu::abi::{
    DRM_AMDGPU_INFO, DRM_COMMAND_BASE, DRM_IOCTL_BASE, DeviceInfo, FirmwareInfo, HeapInfo,
    InfoArgs, MemoryInfo, VersionArgs, VramGttInfo, firmware, query,
};

use crate::driver::accounting::{AMDGPU_VM_RESERVED_VRAM, SystemPool};
use crate::driver::device::Device;
use crate::driver::user_memory;

/// amdgpu's KMS driver version (`KMS_DRIVER_MAJOR/MINOR/PATCHLEVEL`, Linux 6.17-era).
const DRIVER_VERSION: (i32, i32, i32) = (3, 63, 0);
const DRIVER_NAME: &str = "amdgpu";
const DRIVER_DATE: &str = "20150101";
const DRIVER_DESC: &str = "AMD GPU";

/// `AMDGPU_GMC_HOLE_START`/`END` and the lowest VA user mode may use (`AMDGPU_VA_RESERVED_BOTTOM`,
/// 2 MiB on recent kernels; unconfirmed).
const GMC_HOLE_START: u64 = 0x0000_8000_0000_0000;
const GMC_HOLE_END: u64 = 0xFFFF_8000_0000_0000;
const VA_RESERVED_BOTTOM: u64 = 2 << 20;
const VA_RESERVED_TOP: u64 = 2 << 20;

/// `AMDGPU_INFO_*` queries answered here beyond [`query`]'s (libdrm's
/// `amdgpu_device_initialize` and heap queries ask them).
mod more_query {
    /// `AMDGPU_INFO_ACCEL_WORKING`: a `u32`, 1 while acceleration works.
    pub(super) const ACCEL_WORKING: u32 = 0x00;
    /// `AMDGPU_INFO_VRAM_USAGE`: a `u64`.
    pub(super) const VRAM_USAGE: u32 = 0x10;
    /// `AMDGPU_INFO_GTT_USAGE`: a `u64`.
    pub(super) const GTT_USAGE: u32 = 0x11;
    /// `AMDGPU_INFO_READ_MMR_REG`: `count` registers from `dword_offset` (the union holds
    /// `dword_offset, count, instance, flags`, which [`super::InfoArgs::query_fw`] overlays).
    pub(super) const READ_MMR_REG: u32 = 0x15;
    /// `AMDGPU_INFO_VIS_VRAM_USAGE`: a `u64`.
    pub(super) const VIS_VRAM_USAGE: u32 = 0x17;
}

/// `mmGB_ADDR_CONFIG` (GC 9.x), the one register a KFD stack reads (libdrm reads it at device
/// initialisation). `soc15_allowed_read_registers` lists more; the others are not modelled.
const MM_GB_ADDR_CONFIG: u32 = 0x263e;
/// Its value: amdgpu programs a golden value per ASIC (`gfx_v9_0_gpu_early_init`); this is
/// the one remembered for Aldebaran and used for GC 9.4.3 too (unsure: not checked against the
/// kernel source; libdrm only stores it).
const GB_ADDR_CONFIG: u32 = 0x2A11_4042;
/// The same register on GC 11 (same absolute offset: GC segment 0 at 0x1260 plus 0x13de).
/// amdgpu reads the value the firmware set (`GB_ADDR_CONFIG_READ`); this one, 32 pipes and
/// 256-byte interleave, is a plausible Navi 31 value (unsure; libdrm only stores it).
const GB_ADDR_CONFIG_GFX11: u32 = 0x0000_0545;
/// `amdgpu_info_ioctl`: at most this many registers per READ_MMR_REG.
const MAX_MMR_REGISTERS: u32 = 128;

/// Handle one ioctl on a render node of `device`.
pub(crate) fn drm_ioctl(
    device: &Device,
    system: &SystemPool,
    request: Opcode,
    arg: u64,
) -> Result<i32, Errno> {
    if request.group() != DRM_IOCTL_BASE {
        return Err(Errno::ENOTTY);
    }
    let (table_direction, table_size) = match request.number() {
        0x00 => (Direction::ReadWrite, size_of::<VersionArgs>()),
        n if n == DRM_COMMAND_BASE + DRM_AMDGPU_INFO => (Direction::Write, size_of::<InfoArgs>()),
        // Every other DRM/amdgpu ioctl (GEM, CS, contexts, ...) is not modelled: KFD users
        // need none. The kernel would run them; EINVAL is drm_ioctl's "no function" answer.
        _ => return Err(Errno::EINVAL),
    };
    // drm_ioctl copies in only what both the caller and the table read, and out only what
    // both write; the buffer is the largest of the sizes, zero-extended.
    let has = |d: Direction, read: bool| match d {
        Direction::None => false,
        Direction::Write => !read,
        Direction::Read => read,
        Direction::ReadWrite => true,
    };
    let user_size = request.size();
    let in_size = if has(request.direction(), false) && has(table_direction, false) {
        user_size
    } else {
        0
    };
    let out_size = if has(request.direction(), true) && has(table_direction, true) {
        user_size
    } else {
        0
    };
    let mut data = vec![0u8; in_size.max(out_size).max(table_size)];
    user_memory::read_into(arg, &mut data[..in_size])?;
    let result = if request.number() == 0 {
        version(&mut data)
    } else {
        let args = InfoArgs::read_from_prefix(&data)
            .map_err(|_| Errno::EFAULT)?
            .0;
        info(device, system, &args)
    };
    user_memory::write_bytes(arg, &data[..out_size])?;
    result.map(|()| 0)
}

/// `drm_copy_field`: copy at most the buffer's length, report the full length.
fn copy_field(buffer: u64, len: &mut u64, value: &str) -> Result<(), Errno> {
    let n = (value.len() as u64).min(*len) as usize;
    *len = value.len() as u64;
    if n > 0 && buffer != 0 {
        user_memory::write_bytes(buffer, &value.as_bytes()[..n])?;
    }
    Ok(())
}

fn version(data: &mut [u8]) -> Result<(), Errno> {
    let mut v = VersionArgs::read_from_prefix(data)
        .map_err(|_| Errno::EFAULT)?
        .0;
    (v.version_major, v.version_minor, v.version_patchlevel) = DRIVER_VERSION;
    let result = copy_field(v.name, &mut v.name_len, DRIVER_NAME)
        .and_then(|()| copy_field(v.date, &mut v.date_len, DRIVER_DATE))
        .and_then(|()| copy_field(v.desc, &mut v.desc_len, DRIVER_DESC));
    data[..size_of::<VersionArgs>()].copy_from_slice(v.as_bytes());
    result
}

/// Write `answer` to the caller's buffer, at most `return_size` bytes.
fn answer(args: &InfoArgs, answer: &[u8]) -> Result<(), Errno> {
    let n = (args.return_size as usize).min(answer.len());
    user_memory::write_bytes(args.return_pointer, &answer[..n])
}

fn info(device: &Device, system: &SystemPool, args: &InfoArgs) -> Result<(), Errno> {
    if args.return_size == 0 || args.return_pointer == 0 {
        return Err(Errno::EINVAL);
    }
    let vram = device.config.vram_bytes;
    let usable_vram = vram - AMDGPU_VM_RESERVED_VRAM;
    let visible_vram = if device.config.large_bar {
        vram
    } else {
        256 << 20
    };
    match args.query {
        query::DEV_INFO => answer(args, device_info(device).as_bytes()),
        query::VRAM_GTT => answer(
            args,
            VramGttInfo {
                vram_size: usable_vram,
                vram_cpu_accessible_size: visible_vram.min(usable_vram),
                gtt_size: system.gtt_size(),
            }
            .as_bytes(),
        ),
        query::MEMORY => {
            let heap = |total: u64, usable: u64, usage: u64| HeapInfo {
                total_heap_size: total,
                usable_heap_size: usable,
                heap_usage: usage,
                max_allocation: usable / 4 * 3,
            };
            let used = device.vram.used();
            answer(
                args,
                MemoryInfo {
                    vram: heap(vram, usable_vram, used),
                    cpu_accessible_vram: heap(
                        visible_vram,
                        visible_vram.min(usable_vram),
                        if device.config.large_bar { used } else { 0 },
                    ),
                    gtt: heap(system.gtt_size(), system.gtt_size(), system.gtt_used()),
                }
                .as_bytes(),
            )
        }
        query::FW_VERSION => {
            let fw = args.query_fw;
            // "We only support one instance of each IP block right now."
            if fw.ip_instance != 0 {
                return Err(Errno::EINVAL);
            }
            let cfg = &device.config;
            let ver = match fw.fw_type {
                firmware::GFX_MEC if fw.index <= 1 => cfg.mec_fw_version,
                firmware::SDMA if fw.index < cfg.sdma_engines => cfg.sdma_fw_version,
                // ME, PFP, CE and RLC firmware exist on every GFX9 part; plausible levels.
                firmware::GFX_ME | firmware::GFX_PFP | firmware::GFX_CE => 0xA2,
                firmware::GFX_RLC => 0x3B,
                _ => return Err(Errno::EINVAL),
            };
            answer(args, FirmwareInfo { ver, feature: 0 }.as_bytes())
        }
        more_query::ACCEL_WORKING => answer(args, 1u32.as_bytes()),
        more_query::VRAM_USAGE => answer(args, device.vram.used().as_bytes()),
        more_query::VIS_VRAM_USAGE => {
            let used = if device.config.large_bar {
                device.vram.used()
            } else {
                0
            };
            answer(args, used.as_bytes())
        }
        more_query::GTT_USAGE => answer(args, system.gtt_used().as_bytes()),
        more_query::READ_MMR_REG => {
            let (offset, count) = (args.query_fw.fw_type, args.query_fw.ip_instance);
            if count == 0 || count > MAX_MMR_REGISTERS {
                return Err(Errno::EINVAL);
            }
            let mut values = Vec::with_capacity(count as usize);
            for register in offset..offset.saturating_add(count) {
                // Registers outside the allowed list are refused (EINVAL), as the kernel does.
                if register != MM_GB_ADDR_CONFIG {
                    return Err(Errno::EINVAL);
                }
                values.push(if device.target().is_gfx9() {
                    GB_ADDR_CONFIG
                } else {
                    GB_ADDR_CONFIG_GFX11
                });
            }
            answer(args, values.as_bytes())
        }
        // Other queries exist in the kernel but are not modelled.
        _ => Err(Errno::EINVAL),
    }
}

/// `AMDGPU_INFO_DEV_INFO`, consistent with the topology.
pub(crate) fn device_info(device: &Device) -> DeviceInfo {
    let cfg = &device.config;
    let layout = &device.layout;
    let mut info = DeviceInfo {
        device_id: cfg.device_id,
        chip_rev: 1,
        external_rev: 1,
        pci_rev: cfg.pci_revision,
        family: cfg.family,
        num_shader_engines: layout.shader_engines_per_xcc * layout.xccs,
        num_shader_arrays_per_engine: layout.shader_arrays_per_engine,
        gpu_counter_freq: (crate::gpu::clock::GPU_COUNTER_FREQUENCY_HZ / 1000) as u32,
        max_engine_clock: u64::from(cfg.engine_clock_mhz) * 1000,
        max_memory_clock: u64::from(cfg.memory_clock_mhz) * 1000,
        min_engine_clock: 500_000,
        min_memory_clock: 500_000,
        cu_active_number: layout.total_cus(),
        num_rb_pipes: layout.shader_engines_per_xcc * 4,
        enabled_rb_pipes_mask: (1u32 << (layout.shader_engines_per_xcc * 4).min(31)) - 1,
        num_hw_gfx_contexts: 8,
        pcie_gen: cfg.pcie_gen,
        pcie_num_lanes: 16,
        virtual_address_offset: VA_RESERVED_BOTTOM,
        virtual_address_max: GMC_HOLE_START - VA_RESERVED_TOP,
        virtual_address_alignment: 4096,
        pte_fragment_size: 2 << 20,
        gart_page_size: 4096,
        vram_type: cfg.vram_type,
        vram_bit_width: cfg.memory_width_bits,
        wave_front_size: cfg.target.wavefront_size(),
        num_shader_visible_vgprs: cfg.shader_visible_vgprs,
        num_cu_per_sh: layout.cu_per_shader_array,
        num_tcc_blocks: cfg.tcc_blocks,
        high_va_offset: GMC_HOLE_END,
        high_va_max: GMC_HOLE_END | (GMC_HOLE_START - VA_RESERVED_TOP),
        tcp_cache_size: cfg.l1.size_kib,
        // One SQC per WGP on RDNA (`gc_num_sqc_per_wgp`); GFX9 reports none of these.
        num_sqc_per_wgp: u32::from(cfg.sqc.is_some()),
        sqc_data_cache_size: cfg.sqc.map_or(0, |sqc| sqc.scalar_data.size_kib),
        sqc_inst_cache_size: cfg.sqc.map_or(0, |sqc| sqc.instruction.size_kib),
        gl1c_cache_size: cfg.gl1.map_or(0, |gl1| gl1.size_kib),
        gl2c_cache_size: cfg.l2.size_kib * layout.xccs,
        mall_size: cfg.l3.map_or(0, |l3| u64::from(l3.size_kib) * 1024),
        ..DeviceInfo::default()
    };
    // One XCC's bitmap (amdgpu copies bitmap[0]); GFX9 and GFX11 (gfx_v11_0_get_cu_info)
    // pack SE i, array j at [i % 4][j + (i / 4) * 2].
    for se in 0..layout.shader_engines_per_xcc {
        for sa in 0..layout.shader_arrays_per_engine {
            let array = se * layout.shader_arrays_per_engine + sa;
            let active = layout.active_cus_in_array(array);
            let bits = if active >= 32 {
                u32::MAX
            } else {
                (1u32 << active) - 1
            };
            let row = (se % 4) as usize;
            let col = (sa + (se / 4) * 2) as usize;
            if let Some(slot) = info.cu_bitmap.get_mut(row).and_then(|r| r.get_mut(col)) {
                *slot = bits;
            }
        }
    }
    info
}
