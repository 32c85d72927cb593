//! The `rx7900xtx` preset (Radeon RX 7900 XTX, Navi 31, gfx1100) as a process sees it
//! through raw sysfs reads and ioctls: the topology a real board prints, `AMDGPU_INFO`
//! agreeing with it, CREATE_QUEUE demanding GFX11's CWSR sizes, the BAR, and gfx1100 code
//! going to the GFX11 shader core, never to the GFX9 one.

mod common;

use std::path::Path;

use amdgpu_sim::dispatch::{DispatchError, DispatchRequest, ScratchSetup, ShaderCore};
use amdgpu_sim::host_vm::HostVm;
use amdgpu_sim::shader::Gfx9ShaderCore;
use amdgpu_sim::shader_cores::shader_core_for;
use amdgpu_sim::target::GfxTarget;
use amdgpu_sim::{Machine, MachineConfig, preset};
use common::Session;
use drm_amdgpu::abi::firmware;
use kfd::Errno;
use kfd::abi::AllocFlags;
use kfd::abi::sysfs::{Capability, TOPOLOGY_ROOT};
use kfd::sys::Sys;

const PAGE: u64 = 4096;

fn text(m: &Machine, path: &str) -> String {
    String::from_utf8(
        m.read_file(Path::new(&format!("{TOPOLOGY_ROOT}/{path}")))
            .unwrap(),
    )
    .unwrap()
}

fn prop(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no {name} in {text}"))
        .parse()
        .unwrap()
}

/// The lines of a real RX 7900 XTX's `properties` (the board whose file tinygrad's KFD mock
/// carries) that are properties of the card, not of the host or the board instance.
const REAL_BOARD: &[(&str, u64)] = &[
    ("simd_count", 192),
    ("mem_banks_count", 1),
    ("caches_count", 206),
    ("max_waves_per_simd", 16),
    ("lds_size_in_kb", 64),
    ("gds_size_in_kb", 0),
    ("wave_front_size", 32),
    ("array_count", 12),
    ("simd_arrays_per_engine", 2),
    ("cu_per_simd_array", 8),
    ("simd_per_cu", 2),
    ("max_slots_scratch_cu", 32),
    ("gfx_target_version", 110000),
    ("vendor_id", 4098),
    ("device_id", 29772),
    ("hive_id", 0),
    ("num_sdma_engines", 2),
    ("num_sdma_xgmi_engines", 0),
    ("num_sdma_queues_per_engine", 6),
    ("num_cp_queues", 8),
    ("max_engine_clk_fcompute", 2482),
    ("local_mem_size", 0),
    ("fw_version", 2140),
    ("debug_prop", 1495),
    ("sdma_fw_version", 20),
    ("num_xcc", 1),
];

#[test]
fn topology_is_the_one_a_real_7900_xtx_prints() {
    let m = Machine::new(preset("rx7900xtx").unwrap()).unwrap();
    let gpu = text(&m, "nodes/1/properties");
    for &(name, value) in REAL_BOARD {
        assert_eq!(prop(&gpu, name), value, "{name}");
    }
    // The real board's capability is 0x2807A280; the simulator claims no SVM API.
    let caps = prop(&gpu, "capability") as u32;
    assert_eq!(caps, 0x2807_A280 & !Capability::SVMAPI_SUPPORTED.bits());
    // CWSR sizes of GFX11 (kfd_queue_ctx_save_restore_size: 96 CUs x 32 waves, 0x60000
    // VGPR bytes per CU, 12-byte control-stack entries).
    assert_eq!(prop(&gpu, "ctl_stack_size"), 0xA000);
    assert_eq!(prop(&gpu, "cwsr_size"), 0x2BE_A000);
    assert_eq!(text(&m, "nodes/1/name"), "ip discovery\n");

    // VRAM: 24 GiB GDDR6 on a 384-bit bus, all of it host-visible (resizable BAR).
    let bank = text(&m, "nodes/1/mem_banks/0/properties");
    assert_eq!(prop(&bank, "heap_type"), 1);
    assert_eq!(prop(&bank, "size_in_bytes"), 24 << 30);
    assert_eq!(prop(&bank, "width"), 384);

    // Caches in the kernel's order: 96 vector L0s (one CU each), 48 instruction and 48
    // scalar caches (one WGP each), 12 GL1s (one shader array each), the L2, the MALL.
    let caches: Vec<(u64, u64, u64, usize)> = (0..206)
        .map(|i| {
            let c = text(&m, &format!("nodes/1/caches/{i}/properties"));
            let siblings = c
                .lines()
                .last()
                .unwrap()
                .strip_prefix("sibling_map ")
                .unwrap()
                .split(',')
                .filter(|b| *b == "1")
                .count();
            (
                prop(&c, "level"),
                prop(&c, "size"),
                prop(&c, "type"),
                siblings,
            )
        })
        .collect();
    let count = |want: (u64, u64, u64, usize)| caches.iter().filter(|&&c| c == want).count();
    assert_eq!(count((1, 32, 1 | 8, 1)), 96, "vector L0 per CU");
    assert_eq!(count((1, 32, 2 | 8, 2)), 48, "instruction cache per WGP");
    assert_eq!(count((1, 16, 1 | 8, 2)), 48, "scalar cache per WGP");
    assert_eq!(count((1, 256, 1 | 8, 8)), 12, "GL1 per shader array");
    assert_eq!(caches[204], (2, 6 * 1024, 1 | 8, 96));
    assert_eq!(caches[205], (3, 96 * 1024, 1 | 8, 96));
    assert!(
        m.read_file(Path::new(&format!("{TOPOLOGY_ROOT}/nodes/1/caches/206")))
            .is_err()
    );
}

#[test]
fn amdgpu_info_agrees_with_the_topology() {
    let s = Session::new(MachineConfig::rx7900xtx());
    let m = &s.machine;
    let gpu = text(m, "nodes/1/properties");
    let dev = drm_amdgpu::device_info(m, s.render).unwrap();
    assert_eq!(dev.device_id, 0x744C);
    assert_eq!(dev.pci_rev, 0xC8);
    // AMDGPU_FAMILY_GC_11_0_0.
    assert_eq!(dev.family, 145);
    assert_eq!(dev.num_shader_engines, 6);
    assert_eq!(dev.num_shader_arrays_per_engine, 2);
    assert_eq!(
        u64::from(dev.cu_active_number),
        prop(&gpu, "simd_count") / 2
    );
    assert_eq!(dev.num_cu_per_sh, 8);
    assert_eq!(dev.wave_front_size, 32);
    assert_eq!(dev.max_engine_clock, 2482 * 1000);
    // AMDGPU_VRAM_TYPE_GDDR6, 384 bits.
    assert_eq!((dev.vram_type, dev.vram_bit_width), (9, 384));
    assert_eq!(
        (
            dev.tcp_cache_size,
            dev.num_sqc_per_wgp,
            dev.sqc_inst_cache_size,
            dev.sqc_data_cache_size,
            dev.gl1c_cache_size,
            dev.gl2c_cache_size
        ),
        (32, 1, 32, 16, 256, 6 * 1024)
    );
    assert_eq!(dev.mall_size, 96 << 20);
    // Every active CU is in the bitmap, 8 per shader array.
    let bits: u32 = dev.cu_bitmap.iter().flatten().map(|w| w.count_ones()).sum();
    assert_eq!(bits, 96);
    assert_eq!(dev.cu_bitmap[0][0], 0xFF);

    let vis = drm_amdgpu::vram_gtt(m, s.render).unwrap();
    assert_eq!(vis.vram_cpu_accessible_size, vis.vram_size);
    let mec = drm_amdgpu::firmware_version(m, s.render, firmware::GFX_MEC, 0, 0).unwrap();
    assert_eq!(u64::from(mec.ver), prop(&gpu, "fw_version"));
    // Two SDMA engines: a third does not exist.
    assert!(drm_amdgpu::firmware_version(m, s.render, firmware::SDMA, 0, 1).is_ok());
    assert!(drm_amdgpu::firmware_version(m, s.render, firmware::SDMA, 0, 2).is_err());
}

#[test]
fn create_queue_demands_the_gfx11_cwsr_sizes() {
    let s = Session::new(MachineConfig::rx7900xtx());
    let buffers = s.queue_buffers(PAGE);
    assert_eq!(buffers.cwsr_size, 0x2BE_A000);
    assert_eq!(buffers.ctl_stack_size, 0xA000);
    // The GFX9 control stack (MI210's 0x9000) is refused on this node.
    let mut wrong = s.queue_args(&buffers);
    wrong.ctl_stack_size = 0x9000;
    assert_eq!(s.create_queue(&mut wrong), Err(Errno::EINVAL));
    let mut args = s.queue_args(&buffers);
    s.create_queue(&mut args).unwrap();
    assert_eq!(s.machine.gpus()[0].max_queues_per_process, 127);
}

#[test]
fn without_resizable_bar_the_cpu_sees_256_mib() {
    let s = Session::new(preset("rx7900xtx-small-bar").unwrap());
    assert_eq!(
        prop(
            &text(&s.machine, "nodes/1/mem_banks/0/properties"),
            "heap_type"
        ),
        2
    );
    assert_eq!(
        s.alloc(
            AllocFlags::VRAM | AllocFlags::PUBLIC | AllocFlags::WRITABLE,
            PAGE
        )
        .unwrap_err(),
        Errno::EINVAL
    );
    let vis = drm_amdgpu::vram_gtt(&s.machine, s.render).unwrap();
    assert_eq!(vis.vram_cpu_accessible_size, 256 << 20);
}

/// A gfx1100 dispatch request (nothing behind the kernel object is read).
fn gfx1100_request() -> DispatchRequest {
    DispatchRequest {
        packet: aql::KernelDispatchPacket {
            kernel_object: 0x7000_0000,
            ..aql::KernelDispatchPacket::default()
        },
        packet_va: 0,
        queue_va: 0,
        dispatch_id: 0,
        scratch: ScratchSetup::default(),
        target: GfxTarget::Gfx1100,
        lds_bytes_per_workgroup: 64 * 1024,
    }
}

struct NoInterrupts;

impl amdgpu_sim::dispatch::InterruptSink for NoInterrupts {
    fn end_of_pipe(&self, _: u32) {}
    fn shader_message(&self, _: u32) {}
    fn vm_fault(&self, _: amdgpu_sim::vm::MemoryFault) {}
}

#[test]
fn gfx1100_code_never_runs_on_the_gfx9_core() {
    let vm = HostVm::new();
    let abort = std::sync::atomic::AtomicBool::new(false);
    let request = gfx1100_request();
    match Gfx9ShaderCore::new(1).dispatch(&request, &vm, &NoInterrupts, &abort) {
        Err(DispatchError::IllegalInstruction { pc, mnemonic, .. }) => {
            assert_eq!(pc, 0x7000_0000);
            assert!(mnemonic.contains("gfx1100"), "{mnemonic}");
        }
        other => panic!("{other:?}"),
    }
    // The preset's core is the GFX11 one: it reads the kernel descriptor, which is not
    // mapped here, so the dispatch ends as a memory fault at the descriptor.
    match shader_core_for(GfxTarget::Gfx1100).dispatch(&request, &vm, &NoInterrupts, &abort) {
        Err(DispatchError::MemoryFault(fault)) => assert_eq!(fault.va, 0x7000_0000),
        other => panic!("{other:?}"),
    }
}
