//! The render node: DRM_IOCTL_VERSION and the AMDGPU_INFO queries, consistent with the topology
//! and the memory budget.

mod common;

use std::path::Path;

use amdgpu_sim::{Machine, MachineConfig};
use common::{Session, small_config};
use drm_amdgpu::abi::{InfoArgs, QueryFw, VersionArgs, firmware, query};
use drm_amdgpu::request::{AmdgpuInfo, Version};
use kfd::Errno;
use kfd::abi::AllocFlags;
use kfd::abi::sysfs::TOPOLOGY_ROOT;
use kfd::ioctl::{Direction, Opcode};
use kfd::sys::Sys;

fn info(m: &Machine, fd: i32, query: u32, out: &mut [u8], fw: QueryFw) -> Result<(), Errno> {
    let mut args = InfoArgs {
        return_pointer: out.as_mut_ptr() as u64,
        return_size: out.len() as u32,
        query,
        query_fw: fw,
    };
    common::ioctl::<AmdgpuInfo>(m, fd, &mut args)
}

#[test]
fn the_driver_is_amdgpu() {
    let m = Machine::new(small_config()).unwrap();
    let fd = common::open_render(&m, 128);
    let version = drm_amdgpu::driver_version(&m, fd).unwrap();
    assert_eq!(version.name, "amdgpu");
    assert_eq!(version.version.0, 3);
    assert!(!version.date.is_empty() && !version.desc.is_empty());
    // drm_copy_field: a short buffer gets a prefix, the length is the full one.
    let mut name = [0u8; 3];
    let mut args = VersionArgs {
        name_len: 3,
        name: name.as_mut_ptr() as u64,
        ..VersionArgs::default()
    };
    common::ioctl::<Version>(&m, fd, &mut args).unwrap();
    assert_eq!(&name, b"amd");
    assert_eq!(args.name_len, 6);
    // A bad buffer: EFAULT.
    let mut args = VersionArgs {
        name_len: 8,
        name: 16,
        ..VersionArgs::default()
    };
    assert_eq!(
        common::ioctl::<Version>(&m, fd, &mut args),
        Err(Errno::EFAULT)
    );
    // The drm_amdgpu opener accepts the node.
    let checked = drm_amdgpu::open_render_node(&m, 128).unwrap();
    m.close(checked).unwrap();
    // KFD requests on a render node: wrong ioctl type.
    assert_eq!(
        kfd::ioctl::calls::get_version(&m, fd).unwrap_err().errno,
        Errno::ENOTTY
    );
    // DRM ioctls that are not modelled: EINVAL.
    let mut buf = [0u8; 64];
    let gem_create = Opcode::new(Direction::ReadWrite, b'd', 0x40, 32);
    // SAFETY: a 64-byte buffer for a 32-byte request.
    let r = unsafe { m.ioctl(fd, gem_create, buf.as_mut_ptr().cast()) };
    assert_eq!(r, Err(Errno::EINVAL));
}

#[test]
fn info_queries_agree_with_the_topology_and_the_budget() {
    let s = Session::new(
        MachineConfig::mi210()
            .with_compute_units(16)
            .with_vram(512 << 20),
    );
    let m = &s.machine;
    let props = String::from_utf8(
        m.read_file(Path::new(&format!("{TOPOLOGY_ROOT}/nodes/1/properties")))
            .unwrap(),
    )
    .unwrap();
    let prop = |name: &str| -> u64 {
        props
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .unwrap()
            .parse()
            .unwrap()
    };
    let dev = drm_amdgpu::device_info(m, s.render).unwrap();
    assert_eq!(u64::from(dev.device_id), prop("device_id"));
    assert_eq!(
        u64::from(dev.cu_active_number),
        prop("simd_count") / prop("simd_per_cu")
    );
    assert_eq!(u64::from(dev.num_shader_engines), prop("array_count"));
    assert_eq!(dev.family, 141);
    assert_eq!(dev.gpu_counter_freq, 100_000);
    assert_eq!(dev.max_engine_clock, prop("max_engine_clk_fcompute") * 1000);
    assert_eq!(dev.wave_front_size, 64);

    let vram_gtt = drm_amdgpu::vram_gtt(m, s.render).unwrap();
    assert_eq!(vram_gtt.vram_size, (512 - 8) << 20);
    assert_eq!(vram_gtt.vram_cpu_accessible_size, vram_gtt.vram_size);
    assert_eq!(vram_gtt.gtt_size, 32 << 30);

    let before = drm_amdgpu::memory(m, s.render).unwrap();
    assert_eq!(before.vram.total_heap_size, 512 << 20);
    assert_eq!(before.vram.heap_usage, 0);
    let bo = s.alloc(AllocFlags::VRAM, 64 << 20).unwrap();
    let gtt = s.alloc(AllocFlags::GTT, 16 << 20).unwrap();
    let after = drm_amdgpu::memory(m, s.render).unwrap();
    assert_eq!(after.vram.heap_usage, 64 << 20);
    assert_eq!(after.gtt.heap_usage, 16 << 20);
    s.free(&bo).unwrap();
    s.free(&gtt).unwrap();

    let mec = drm_amdgpu::firmware_version(m, s.render, firmware::GFX_MEC, 0, 0).unwrap();
    assert_eq!(u64::from(mec.ver), prop("fw_version"));
    let sdma = drm_amdgpu::firmware_version(m, s.render, firmware::SDMA, 0, 1).unwrap();
    assert_eq!(u64::from(sdma.ver), prop("sdma_fw_version"));
    for (fw_type, instance, index) in [
        (firmware::SDMA, 0, 2),
        (firmware::GFX_MEC, 1, 0),
        (firmware::GFX_MEC, 0, 2),
        (0x7777, 0, 0),
    ] {
        assert!(matches!(
            drm_amdgpu::firmware_version(m, s.render, fw_type, instance, index),
            Err(drm_amdgpu::Error::Ioctl(e)) if e.errno == Errno::EINVAL
        ));
    }
}

#[test]
fn info_checks_its_return_buffer() {
    let m = Machine::new(small_config()).unwrap();
    let fd = common::open_render(&m, 128);
    let mut out = [0u8; 24];
    assert_eq!(
        info(&m, fd, 0x7F, &mut out, QueryFw::default()),
        Err(Errno::EINVAL)
    );
    assert_eq!(
        info(&m, fd, query::VRAM_GTT, &mut [], QueryFw::default()),
        Err(Errno::EINVAL)
    );
    let mut args = InfoArgs {
        return_pointer: 32,
        return_size: 24,
        query: query::VRAM_GTT,
        query_fw: QueryFw::default(),
    };
    assert_eq!(
        common::ioctl::<AmdgpuInfo>(&m, fd, &mut args),
        Err(Errno::EFAULT)
    );
    // A short buffer gets the first bytes only.
    let mut short = [0xFFu8; 12];
    info(&m, fd, query::VRAM_GTT, &mut short[..8], QueryFw::default()).unwrap();
    assert_eq!(
        u64::from_ne_bytes(short[..8].try_into().unwrap()),
        (1024 - 8) << 20
    );
    assert_eq!(short[8..], [0xFF; 4]);
}
