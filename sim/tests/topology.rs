//! The sysfs topology: layout, exact text format, values of the presets, and consistency with
//! AMDGPU_INFO and the queue buffer sizes CREATE_QUEUE demands.

mod common;

use std::path::Path;

use amdgpu_sim::{Machine, MachineConfig};
use common::{Session, small_config};
use kfd::Errno;
use kfd::abi::AllocFlags;
use kfd::abi::sysfs::{Capability, TOPOLOGY_ROOT};
use kfd::sys::Sys;

fn read(m: &Machine, path: &str) -> Result<String, Errno> {
    m.read_file(Path::new(path))
        .map(|b| String::from_utf8(b).expect("topology text is UTF-8"))
}

fn node(m: &Machine, n: u32, file: &str) -> String {
    read(m, &format!("{TOPOLOGY_ROOT}/nodes/{n}/{file}")).unwrap()
}

/// The `name value` lines of a properties file, checking the format on the way.
fn properties(text: &str) -> Vec<(String, u64)> {
    assert!(text.ends_with('\n'));
    text.lines()
        .map(|line| {
            let (name, value) = line.split_once(' ').expect("name value");
            assert!(!name.is_empty() && !value.contains(' '), "{line:?}");
            (name.to_owned(), value.parse().expect("decimal value"))
        })
        .collect()
}

fn prop(text: &str, name: &str) -> u64 {
    properties(text)
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .1
}

fn names(m: &Machine, path: &str) -> Vec<String> {
    let mut names: Vec<String> = m
        .read_dir(Path::new(path))
        .unwrap()
        .into_iter()
        .map(|n| n.into_string().unwrap())
        .collect();
    names.sort();
    names
}

const GPU_ORDER: &[&str] = &[
    "cpu_cores_count",
    "simd_count",
    "mem_banks_count",
    "caches_count",
    "io_links_count",
    "p2p_links_count",
    "cpu_core_id_base",
    "simd_id_base",
    "max_waves_per_simd",
    "lds_size_in_kb",
    "gds_size_in_kb",
    "num_gws",
    "wave_front_size",
    "array_count",
    "simd_arrays_per_engine",
    "cu_per_simd_array",
    "simd_per_cu",
    "max_slots_scratch_cu",
    "gfx_target_version",
    "vendor_id",
    "device_id",
    "location_id",
    "domain",
    "drm_render_minor",
    "hive_id",
    "num_sdma_engines",
    "num_sdma_xgmi_engines",
    "num_sdma_queues_per_engine",
    "num_cp_queues",
    "cwsr_size",
    "ctl_stack_size",
    "max_engine_clk_fcompute",
    "local_mem_size",
    "fw_version",
    "capability",
    "debug_prop",
    "sdma_fw_version",
    "unique_id",
    "num_xcc",
    "max_engine_clk_ccompute",
];

#[test]
fn mi210_tree_has_a_cpu_node_and_a_gfx90a_node_in_kernel_format() {
    let m = Machine::new(MachineConfig::mi210()).unwrap();
    assert_eq!(
        read(&m, &format!("{TOPOLOGY_ROOT}/generation_id")).unwrap(),
        "1\n"
    );
    let sys = properties(&read(&m, &format!("{TOPOLOGY_ROOT}/system_properties")).unwrap());
    assert_eq!(
        sys.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        ["platform_oem", "platform_id", "platform_rev"]
    );
    assert_eq!(names(&m, &format!("{TOPOLOGY_ROOT}/nodes")), ["0", "1"]);

    // Node 0: the CPU.
    assert_eq!(node(&m, 0, "gpu_id"), "0\n");
    let cpu = node(&m, 0, "properties");
    assert_eq!(prop(&cpu, "simd_count"), 0);
    assert!(prop(&cpu, "cpu_cores_count") > 0);
    assert_eq!(prop(&cpu, "io_links_count"), 1);
    assert!(!cpu.contains("fw_version"), "GPU-only lines on a CPU node");
    assert_eq!(
        properties(&cpu).last().unwrap().0,
        "max_engine_clk_ccompute"
    );

    // Node 1: the MI210, every line in the kernel's order.
    let gpu_id: u32 = node(&m, 1, "gpu_id").trim().parse().unwrap();
    assert!(gpu_id != 0 && gpu_id <= 0xFFFF);
    assert_eq!(node(&m, 1, "name"), "aldebaran\n");
    let gpu = node(&m, 1, "properties");
    let order: Vec<String> = properties(&gpu).into_iter().map(|(n, _)| n).collect();
    assert_eq!(order, GPU_ORDER);
    assert_eq!(prop(&gpu, "simd_count"), 416);
    assert_eq!(prop(&gpu, "simd_per_cu"), 4);
    assert_eq!(prop(&gpu, "array_count"), 8);
    assert_eq!(prop(&gpu, "simd_arrays_per_engine"), 1);
    assert_eq!(prop(&gpu, "cu_per_simd_array"), 14);
    assert_eq!(prop(&gpu, "max_waves_per_simd"), 8);
    assert_eq!(prop(&gpu, "wave_front_size"), 64);
    assert_eq!(prop(&gpu, "lds_size_in_kb"), 64);
    assert_eq!(prop(&gpu, "gfx_target_version"), 90010);
    assert_eq!(prop(&gpu, "vendor_id"), 4098);
    assert_eq!(prop(&gpu, "device_id"), 0x740F);
    assert_eq!(prop(&gpu, "drm_render_minor"), 128);
    assert_eq!(prop(&gpu, "num_xcc"), 1);
    assert_eq!(prop(&gpu, "num_cp_queues"), 24);
    assert_eq!(prop(&gpu, "max_engine_clk_fcompute"), 1700);
    assert_eq!(prop(&gpu, "local_mem_size"), 0);
    assert_eq!(prop(&gpu, "hive_id"), 0);
    let caps = Capability::from_bits_retain(prop(&gpu, "capability") as u32);
    assert_eq!(caps.doorbell_type(), Capability::DOORBELL_TYPE_2_0);
    assert!(!caps.contains(Capability::RESERVED_WAS_SRAM_EDCSUPPORTED));

    // The queue buffer sizes printed are the ones CREATE_QUEUE demands (kfd.md §5.4).
    let info = &m.gpus()[0];
    assert_eq!(info.gpu_id, gpu_id);
    assert_eq!(prop(&gpu, "ctl_stack_size"), 0x9000);
    assert_eq!(
        prop(&gpu, "cwsr_size"),
        u64::from(info.queue_buffers.cwsr_size)
    );
    assert_eq!(info.queue_buffers.cwsr_size, 0x9000 + 104 * 0x95000);
    assert_eq!(info.max_queues_per_process, 127);

    // One VRAM bank, host-visible (large BAR), 64 GiB.
    assert_eq!(
        names(&m, &format!("{TOPOLOGY_ROOT}/nodes/1/mem_banks")),
        ["0"]
    );
    let bank = node(&m, 1, "mem_banks/0/properties");
    assert_eq!(
        properties(&bank)
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>(),
        [
            "heap_type",
            "size_in_bytes",
            "flags",
            "width",
            "mem_clk_max"
        ]
    );
    assert_eq!(prop(&bank, "heap_type"), 1);
    assert_eq!(prop(&bank, "size_in_bytes"), 64 << 30);
    assert_eq!(prop(&bank, "width"), 4096);

    // Caches: as many as caches_count says, each ending with a sibling_map line.
    let caches = names(&m, &format!("{TOPOLOGY_ROOT}/nodes/1/caches"));
    assert_eq!(caches.len() as u64, prop(&gpu, "caches_count"));
    let l1 = node(&m, 1, "caches/0/properties");
    let last = l1.lines().last().unwrap();
    assert!(last.starts_with("sibling_map 1,0,"), "{last}");
    assert!(l1.lines().any(|l| l == "size 16"));

    // The one io_link: PCIe to the CPU.
    let link = node(&m, 1, "io_links/0/properties");
    assert_eq!(prop(&link, "type"), 2);
    assert_eq!((prop(&link, "node_from"), prop(&link, "node_to")), (1, 0));
    assert_eq!(prop(&node(&m, 0, "io_links/0/properties"), "node_to"), 1);
}

#[test]
fn mi300x_reports_eight_xccs_and_its_queue_limit() {
    let m = Machine::new(MachineConfig::mi300x()).unwrap();
    let gpu = node(&m, 1, "properties");
    assert_eq!(node(&m, 1, "name"), "ip discovery\n");
    assert_eq!(prop(&gpu, "gfx_target_version"), 90402);
    assert_eq!(prop(&gpu, "device_id"), 0x74A1);
    assert_eq!(prop(&gpu, "simd_count"), 1216);
    assert_eq!(prop(&gpu, "array_count"), 32);
    assert_eq!(prop(&gpu, "num_xcc"), 8);
    assert_eq!(prop(&gpu, "num_cp_queues"), 128);
    assert_eq!(
        prop(&node(&m, 1, "mem_banks/0/properties"), "size_in_bytes"),
        192 << 30
    );
    let info = &m.gpus()[0];
    assert_eq!(info.max_queues_per_process, 255);
    assert_eq!(prop(&gpu, "ctl_stack_size"), 0x3000);
    assert_eq!(info.queue_buffers.xccs, 8);
}

#[test]
fn a_hive_links_every_gpu_to_every_other_over_xgmi() {
    let m = Machine::new(MachineConfig::mi210_hive(4)).unwrap();
    assert_eq!(
        names(&m, &format!("{TOPOLOGY_ROOT}/nodes")),
        ["0", "1", "2", "3", "4"]
    );
    let cpu = node(&m, 0, "properties");
    assert_eq!(prop(&cpu, "io_links_count"), 4);
    let mut hive = None;
    let mut ids = Vec::new();
    for n in 1..=4 {
        let props = node(&m, n, "properties");
        assert_eq!(prop(&props, "io_links_count"), 4);
        assert_eq!(prop(&props, "drm_render_minor"), 127 + u64::from(n));
        let h = prop(&props, "hive_id");
        assert_ne!(h, 0);
        assert_eq!(*hive.get_or_insert(h), h);
        let mut peers: Vec<u64> = (1..4)
            .map(|l| {
                let link = node(&m, n, &format!("io_links/{l}/properties"));
                assert_eq!(prop(&link, "type"), 11, "XGMI");
                assert_eq!(prop(&link, "node_from"), u64::from(n));
                prop(&link, "node_to")
            })
            .collect();
        peers.sort_unstable();
        assert_eq!(
            peers,
            (1..=4).filter(|&p| p != u64::from(n)).collect::<Vec<_>>()
        );
        ids.push(node(&m, n, "gpu_id"));
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 4, "gpu_ids are distinct");
}

#[test]
fn scaled_down_gpus_report_the_same_shape_everywhere() {
    let m = Machine::new(small_config()).unwrap();
    let gpu = node(&m, 1, "properties");
    assert_eq!(prop(&gpu, "simd_count"), 32);
    assert_eq!(prop(&gpu, "mem_banks_count"), 1);
    assert_eq!(
        prop(&node(&m, 1, "mem_banks/0/properties"), "size_in_bytes"),
        1 << 30
    );
    let info = &m.gpus()[0];
    assert_eq!(info.compute_units, 8);
    // CWSR sizes follow the 8 CUs: min(8*40, 8*512) = 320 waves.
    assert_eq!(prop(&gpu, "ctl_stack_size"), 4096);
    assert_eq!(prop(&gpu, "cwsr_size"), 4096 + 8 * 0x95000);
    assert_eq!(
        u64::from(info.queue_buffers.cwsr_size),
        prop(&gpu, "cwsr_size")
    );
    // AMDGPU_INFO agrees.
    let render = common::open_render(&m, 128);
    let dev = drm_amdgpu::device_info(&m, render).unwrap();
    assert_eq!(dev.cu_active_number, 8);
    assert_eq!(
        dev.cu_bitmap
            .iter()
            .flatten()
            .map(|w| w.count_ones())
            .sum::<u32>(),
        8
    );
    assert_eq!(dev.device_id, 0x740F);
    assert_eq!(dev.num_cu_per_sh as u64, prop(&gpu, "cu_per_simd_array"));
    m.close(render).unwrap();
}

#[test]
fn the_class_path_is_the_same_tree_and_errors_are_the_filesystem_ones() {
    let m = Machine::new(MachineConfig::mi210()).unwrap();
    let class = "/sys/class/kfd/kfd/topology/nodes/1/properties";
    assert_eq!(read(&m, class).unwrap(), node(&m, 1, "properties"));
    assert_eq!(names(&m, "/sys/devices/virtual/kfd/kfd"), ["topology"]);
    assert_eq!(
        names(&m, TOPOLOGY_ROOT),
        ["generation_id", "nodes", "system_properties"]
    );
    assert_eq!(
        read(&m, &format!("{TOPOLOGY_ROOT}/nodes/7/gpu_id")),
        Err(Errno::ENOENT)
    );
    assert_eq!(
        read(&m, &format!("{TOPOLOGY_ROOT}/nodes")),
        Err(Errno::EISDIR)
    );
    assert_eq!(
        m.read_dir(Path::new(&format!("{TOPOLOGY_ROOT}/generation_id"))),
        Err(Errno::ENOTDIR)
    );
    assert_eq!(
        read(&m, "/sys/devices/virtual/kfd/other"),
        Err(Errno::ENOENT)
    );
    // Outside the simulated directories the host answers.
    assert!(read(&m, "/proc/self/status").unwrap().contains("Pid:"));
    assert_eq!(
        m.read_dir(Path::new("/dev/dri")).unwrap(),
        vec![std::ffi::OsString::from("renderD128")]
    );
}

#[test]
fn used_memory_follows_vram_allocations() {
    let s = Session::small();
    let used = || -> u64 {
        node(&s.machine, 1, "mem_banks/0/used_memory")
            .trim()
            .parse()
            .unwrap()
    };
    assert_eq!(used(), 0);
    let bo = s.alloc(AllocFlags::VRAM, 3 << 20).unwrap();
    assert_eq!(used(), 3 << 20);
    s.free(&bo).unwrap();
    assert_eq!(used(), 0);
}

/// The CWSR sizes of the two presets, worked by hand from the kernel's
/// `kfd_queue_ctx_save_restore_size` (drivers/gpu/drm/amd/amdkfd/kfd_queue.c), not from the
/// simulator's formula:
///
/// ```text
/// cu_num     = simd_count / simd_per_cu / NUM_XCC
/// wave_num   = min(cu_num * 40, array_count / simd_arrays_per_engine * 512)   (gfxv < 100100)
/// per CU     = vgpr 0x80000 (gfxv 90010, 90402) + SGPR 0x4000 + LDS 0x10000 + HWREG 0x1000
///            = 0x95000
/// wg_data    = ALIGN(cu_num * 0x95000, PAGE)
/// ctl_stack  = ALIGN(40 + wave_num * 8 + 8, PAGE)
/// cwsr_size  = ctl_stack + wg_data
/// debug      = ALIGN(wave_num * 32, 64)
/// allocation = PAGE_ALIGN((cwsr_size + debug) * NUM_XCC)   (what CREATE_QUEUE requires mapped)
/// ```
///
/// MI210 (gfx90a, 416 SIMDs, 4 per CU, 1 XCC, 8 arrays, 1 per engine): cu_num 104, wave_num
/// min(4160, 4096) = 4096; wg_data 104 × 0x95000 = 0x3C88000; ctl_stack ALIGN(32816) =
/// 0x9000; cwsr 0x3C91000; debug 131072 = 0x20000; allocation 0x3CB1000.
///
/// MI300X (gfx942, 1216 SIMDs, 4 per CU, 8 XCCs, 4 arrays per XCC, 1 per engine): cu_num 38,
/// wave_num min(1520, ≥ 2048) = 1520; wg_data 38 × 0x95000 = 0x161E000; ctl_stack
/// ALIGN(12208) = 0x3000; cwsr 0x1621000; debug 48640 = 0xBE00; allocation
/// PAGE_ALIGN(8 × 0x162CE00) = 0xB167000.
#[test]
fn preset_cwsr_sizes_match_the_kernel_formula_worked_by_hand() {
    for (config, ctl, cwsr, debug, allocation) in [
        (
            MachineConfig::mi210(),
            0x9000,
            0x3C9_1000,
            0x2_0000,
            0x3CB_1000,
        ),
        (
            MachineConfig::mi300x(),
            0x3000,
            0x162_1000,
            0xBE00,
            0xB16_7000,
        ),
    ] {
        let machine = Machine::new(config).unwrap();
        let sizes = machine.gpus()[0].queue_buffers;
        assert_eq!(
            (
                sizes.ctl_stack_size,
                sizes.cwsr_size,
                sizes.debug_memory_size,
                sizes.cwsr_allocation()
            ),
            (ctl, cwsr, debug, allocation),
            "{:?}",
            machine.gpus()[0].target
        );
    }
}

/// The render node's IP-discovery tree (`amdgpu_discovery.c`): a die with one numbered
/// directory per hardware block, its name beside it, and per instance the version and base
/// addresses, for each preset's ASIC.
#[test]
fn ip_discovery_tree_reports_each_asics_ip_versions() {
    for (machine, gc, sdma, nbio, gc_instances) in [
        (Machine::mi210().unwrap(), "9 4 2", "4 4 0", "7 4 4", 1),
        (
            Machine::new(MachineConfig::mi300x()).unwrap(),
            "9 4 3",
            "4 4 2",
            "7 9 0",
            8,
        ),
    ] {
        let minor = machine.gpus()[0].render_minor;
        let die = format!("/sys/class/drm/renderD{minor}/device/ip_discovery/die/0");
        let version = |dir: &str, instance: u32| {
            ["major", "minor", "revision"]
                .iter()
                .map(|f| read(&machine, &format!("{die}/{dir}/{instance}/{f}")).unwrap())
                .map(|t| t.strip_suffix('\n').unwrap().to_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(version("11", 0), gc);
        assert_eq!(version("GC", 0), gc, "the name leads to the same block");
        assert_eq!(version("42", 0), sdma);
        assert_eq!(version("108", 0), nbio);
        assert_eq!(names(&machine, &format!("{die}/11")).len(), gc_instances);
        let entries = names(&machine, &die);
        for expected in ["11", "42", "108", "GC", "SDMA0", "NBIF", "num_ips"] {
            assert!(
                entries.iter().any(|e| e == expected),
                "{expected} in {entries:?}"
            );
        }
        let num_ips: usize = read(&machine, &format!("{die}/num_ips"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let listed: usize = entries
            .iter()
            .filter(|e| e.parse::<u32>().is_ok())
            .map(|id| names(&machine, &format!("{die}/{id}")).len())
            .sum();
        assert_eq!(num_ips, listed, "num_ips counts every instance");
        assert_eq!(
            names(&machine, &format!("{die}/11/0")),
            [
                "base_addr",
                "harvest",
                "hw_id",
                "major",
                "minor",
                "num_base_addresses",
                "num_instance",
                "revision"
            ]
        );
        assert_eq!(
            read(&machine, &format!("{die}/11/0/hw_id")).unwrap(),
            "11\n"
        );
        let bases = read(&machine, &format!("{die}/11/0/base_addr")).unwrap();
        let count: usize = read(&machine, &format!("{die}/11/0/num_base_addresses"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(bases.lines().count(), count);
        assert!(bases.lines().all(|l| l.len() == 10 && l.starts_with("0x")));
        assert_eq!(
            read(&machine, &format!("{die}/11/9/major")),
            Err(Errno::ENOENT)
        );
        assert_eq!(
            machine.read_file(Path::new(&format!("{die}/11/0"))),
            Err(Errno::EISDIR)
        );
    }
}
