//! The KFD topology in sysfs, in the kernel's exact text format (`kfd_topology.c`: every
//! property printed as `"%s %u\n"` or `"%s %llu\n"`, in the kernel's order; the cache
//! `sibling_map` as a comma list of bits). Node 0 is the CPU, nodes 1.. are the GPUs.
//!
//! The tree is built once per machine; only `mem_banks/0/used_memory` of GPU nodes changes, and
//! is computed when read.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Component, Path};

use kfd::Errno;
use kfd::abi::sysfs::{self, cache, io_link, mem_bank, node};

use crate::config::{CacheConfig, MachineConfig};
use crate::driver::device::Device;
use crate::driver::ip_discovery::{self, DiscoveryNode};

/// The topology root libhsakmt uses.
pub const TOPOLOGY_ROOT: &str = sysfs::TOPOLOGY_ROOT;
/// The same object through `/sys/class`.
pub const CLASS_TOPOLOGY_ROOT: &str = "/sys/class/kfd/kfd/topology";

/// XGMI link bandwidth the topology reports, MB/s (a plausible per-link figure).
const XGMI_BANDWIDTH_MBPS: u32 = 64_000;
/// PCIe 4.0 x16 bandwidth, MB/s.
const PCIE_BANDWIDTH_MBPS: u32 = 32_000;
/// KFD's io_link weights: PCIe hop to the CPU, one XGMI hop.
const PCIE_WEIGHT: u32 = 20;
const XGMI_WEIGHT: u32 = 15;

/// What a topology path names.
#[derive(Clone, Debug)]
pub(crate) enum Entry {
    Dir(Vec<String>),
    File(String),
    /// `nodes/N/mem_banks/0/used_memory` of the GPU with this index.
    UsedMemory(usize),
}

/// Whether a path belongs to the simulated sysfs, and where in it.
pub(crate) enum SysfsPath {
    /// Not simulated: served by the host.
    Host,
    /// Under the simulated KFD directories or a render node's `ip_discovery` tree (which may
    /// or may not exist): the key of its entry.
    Simulated(String),
}

/// Classify `path`.
pub(crate) fn classify(path: &Path) -> SysfsPath {
    let mut parts: Vec<&str> = Vec::new();
    for component in path.components() {
        match component {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(part) => match part.to_str() {
                Some(p) => parts.push(p),
                None => return SysfsPath::Host,
            },
            Component::ParentDir => {
                parts.pop();
            }
            Component::Prefix(_) => return SysfsPath::Host,
        }
    }
    if let [
        "sys",
        "class",
        "drm",
        render,
        "device",
        "ip_discovery",
        rest @ ..,
    ] = parts.as_slice()
    {
        return SysfsPath::Simulated(ip_discovery_key(render, &rest.join("/")));
    }
    let (["sys", "devices", "virtual", "kfd", rest @ ..] | ["sys", "class", "kfd", rest @ ..]) =
        parts.as_slice()
    else {
        return SysfsPath::Host;
    };
    SysfsPath::Simulated(match rest {
        [] => CLASS_DIR_KEY.to_owned(),
        ["kfd", inner @ ..] => inner.join("/"),
        _ => MISSING_KEY.to_owned(),
    })
}

/// Key of `/sys/class/drm/<render>/device/ip_discovery/<rest>` (`rest` empty for the root).
fn ip_discovery_key(render: &str, rest: &str) -> String {
    if rest.is_empty() {
        format!("drm/{render}/ip_discovery")
    } else {
        format!("drm/{render}/ip_discovery/{rest}")
    }
}

/// Key of the class directory (`/sys/class/kfd`, `/sys/devices/virtual/kfd`).
const CLASS_DIR_KEY: &str = "..";
/// A key no entry has.
const MISSING_KEY: &str = "\0";

/// The simulated tree below `.../kfd` (so `kfd/topology/nodes/0/properties`).
#[derive(Debug)]
pub(crate) struct Topology {
    entries: BTreeMap<String, Entry>,
}

fn line32(out: &mut String, name: &str, value: u32) {
    let _ = writeln!(out, "{name} {value}");
}

fn line64(out: &mut String, name: &str, value: u64) {
    let _ = writeln!(out, "{name} {value}");
}

struct LinkText {
    kind: u32,
    from: u32,
    to: u32,
    weight: u32,
    bandwidth: u32,
}

fn io_link_text(link: &LinkText) -> String {
    let mut s = String::new();
    line32(&mut s, io_link::TYPE, link.kind);
    line32(&mut s, io_link::VERSION_MAJOR, 0);
    line32(&mut s, io_link::VERSION_MINOR, 0);
    line32(&mut s, io_link::NODE_FROM, link.from);
    line32(&mut s, io_link::NODE_TO, link.to);
    line32(&mut s, io_link::WEIGHT, link.weight);
    line32(&mut s, io_link::MIN_LATENCY, 0);
    line32(&mut s, io_link::MAX_LATENCY, 0);
    line32(&mut s, io_link::MIN_BANDWIDTH, link.bandwidth);
    line32(&mut s, io_link::MAX_BANDWIDTH, link.bandwidth);
    line32(&mut s, io_link::RECOMMENDED_TRANSFER_SIZE, 0);
    line32(&mut s, io_link::RECOMMENDED_SDMA_ENGINE_ID_MASK, 0);
    line32(&mut s, io_link::FLAGS, io_link::FLAGS_ENABLED);
    s
}

fn mem_bank_text(heap_type: u32, size: u64, width: u32, clock: u32) -> String {
    let mut s = String::new();
    line32(&mut s, mem_bank::HEAP_TYPE, heap_type);
    line64(&mut s, mem_bank::SIZE_IN_BYTES, size);
    line32(&mut s, mem_bank::FLAGS, 0);
    line32(&mut s, mem_bank::WIDTH, width);
    line32(&mut s, mem_bank::MEM_CLK_MAX, clock);
    s
}

fn cache_text(
    level: u32,
    config: &CacheConfig,
    processor_id_low: u32,
    siblings: &[bool],
) -> String {
    typed_cache_text(level, config, cache::TYPE_DATA, processor_id_low, siblings)
}

fn typed_cache_text(
    level: u32,
    config: &CacheConfig,
    kind: u32,
    processor_id_low: u32,
    siblings: &[bool],
) -> String {
    let mut s = String::new();
    line32(&mut s, cache::PROCESSOR_ID_LOW, processor_id_low);
    line32(&mut s, cache::LEVEL, level);
    line32(&mut s, cache::SIZE, config.size_kib);
    line32(&mut s, cache::CACHE_LINE_SIZE, config.line_bytes);
    line32(&mut s, cache::CACHE_LINES_PER_TAG, 1);
    line32(&mut s, cache::ASSOCIATION, config.associativity);
    line32(&mut s, cache::LATENCY, 0);
    line32(&mut s, cache::TYPE, kind | cache::TYPE_HSACU);
    let bits: Vec<&str> = siblings
        .iter()
        .map(|&b| if b { "1" } else { "0" })
        .collect();
    let _ = writeln!(s, "{} {}", cache::SIBLING_MAP, bits.join(","));
    s
}

/// One node's property lines, in `node_show` order.
struct NodeProps {
    cpu_cores_count: u32,
    simd_count: u32,
    mem_banks_count: u32,
    caches_count: u32,
    io_links_count: u32,
    gpu: Option<GpuProps>,
    max_engine_clk_ccompute: u32,
}

struct GpuProps {
    simd_id_base: u32,
    max_waves_per_simd: u32,
    lds_size_in_kb: u32,
    wave_front_size: u32,
    array_count: u32,
    simd_arrays_per_engine: u32,
    cu_per_simd_array: u32,
    simd_per_cu: u32,
    max_slots_scratch_cu: u32,
    gfx_target_version: u32,
    device_id: u32,
    location_id: u32,
    drm_render_minor: u32,
    hive_id: u64,
    num_sdma_engines: u32,
    num_sdma_xgmi_engines: u32,
    num_sdma_queues_per_engine: u32,
    num_cp_queues: u32,
    cwsr_size: u32,
    ctl_stack_size: u32,
    max_engine_clk_fcompute: u32,
    fw_version: u32,
    capability: u32,
    debug_prop: u64,
    sdma_fw_version: u32,
    unique_id: u64,
    num_xcc: u32,
}

fn properties_text(p: &NodeProps) -> String {
    let g = p.gpu.as_ref();
    let v = |f: fn(&GpuProps) -> u32| g.map_or(0, f);
    let mut s = String::new();
    line32(&mut s, node::CPU_CORES_COUNT, p.cpu_cores_count);
    line32(&mut s, node::SIMD_COUNT, p.simd_count);
    line32(&mut s, node::MEM_BANKS_COUNT, p.mem_banks_count);
    line32(&mut s, node::CACHES_COUNT, p.caches_count);
    line32(&mut s, node::IO_LINKS_COUNT, p.io_links_count);
    line32(&mut s, node::P2P_LINKS_COUNT, 0);
    line32(&mut s, node::CPU_CORE_ID_BASE, 0);
    line32(&mut s, node::SIMD_ID_BASE, v(|g| g.simd_id_base));
    line32(
        &mut s,
        node::MAX_WAVES_PER_SIMD,
        v(|g| g.max_waves_per_simd),
    );
    line32(&mut s, node::LDS_SIZE_IN_KB, v(|g| g.lds_size_in_kb));
    line32(&mut s, node::GDS_SIZE_IN_KB, 0);
    // GWS are not modelled (ALLOC_QUEUE_GWS answers ENODEV), so none are reported.
    line32(&mut s, node::NUM_GWS, 0);
    line32(&mut s, node::WAVE_FRONT_SIZE, v(|g| g.wave_front_size));
    line32(&mut s, node::ARRAY_COUNT, v(|g| g.array_count));
    line32(
        &mut s,
        node::SIMD_ARRAYS_PER_ENGINE,
        v(|g| g.simd_arrays_per_engine),
    );
    line32(&mut s, node::CU_PER_SIMD_ARRAY, v(|g| g.cu_per_simd_array));
    line32(&mut s, node::SIMD_PER_CU, v(|g| g.simd_per_cu));
    line32(
        &mut s,
        node::MAX_SLOTS_SCRATCH_CU,
        v(|g| g.max_slots_scratch_cu),
    );
    line32(
        &mut s,
        node::GFX_TARGET_VERSION,
        v(|g| g.gfx_target_version),
    );
    line32(
        &mut s,
        node::VENDOR_ID,
        if g.is_some() { 0x1002 } else { 0 },
    );
    line32(&mut s, node::DEVICE_ID, v(|g| g.device_id));
    line32(&mut s, node::LOCATION_ID, v(|g| g.location_id));
    line32(&mut s, node::DOMAIN, 0);
    line32(&mut s, node::DRM_RENDER_MINOR, v(|g| g.drm_render_minor));
    line64(&mut s, node::HIVE_ID, g.map_or(0, |g| g.hive_id));
    line32(&mut s, node::NUM_SDMA_ENGINES, v(|g| g.num_sdma_engines));
    line32(
        &mut s,
        node::NUM_SDMA_XGMI_ENGINES,
        v(|g| g.num_sdma_xgmi_engines),
    );
    line32(
        &mut s,
        node::NUM_SDMA_QUEUES_PER_ENGINE,
        v(|g| g.num_sdma_queues_per_engine),
    );
    line32(&mut s, node::NUM_CP_QUEUES, v(|g| g.num_cp_queues));
    // Printed for every node since Linux 6.18 (and stable backports).
    line32(&mut s, node::CWSR_SIZE, v(|g| g.cwsr_size));
    line32(&mut s, node::CTL_STACK_SIZE, v(|g| g.ctl_stack_size));
    if let Some(g) = g {
        line32(
            &mut s,
            node::MAX_ENGINE_CLK_FCOMPUTE,
            g.max_engine_clk_fcompute,
        );
        line64(&mut s, node::LOCAL_MEM_SIZE, 0);
        line32(&mut s, node::FW_VERSION, g.fw_version);
        line32(&mut s, node::CAPABILITY, g.capability);
        line64(&mut s, node::DEBUG_PROP, g.debug_prop);
        line32(&mut s, node::SDMA_FW_VERSION, g.sdma_fw_version);
        line64(&mut s, node::UNIQUE_ID, g.unique_id);
        line32(&mut s, node::NUM_XCC, g.num_xcc);
    }
    line32(
        &mut s,
        node::MAX_ENGINE_CLK_CCOMPUTE,
        p.max_engine_clk_ccompute,
    );
    s
}

impl Topology {
    pub(crate) fn build(config: &MachineConfig, devices: &[Device]) -> Self {
        let mut t = Self {
            entries: BTreeMap::new(),
        };
        let node_count = devices.len() + 1;
        t.dir(CLASS_DIR_KEY, &["kfd"]);
        t.dir("", &["topology"]);
        t.dir("topology", &["generation_id", "nodes", "system_properties"]);
        t.file("topology/generation_id", "1\n".to_owned());
        // The virtual CRAT KFD builds without an ACPI CRAT carries no OEM ids: zeros.
        t.file(
            "topology/system_properties",
            "platform_oem 0\nplatform_id 0\nplatform_rev 0\n".to_owned(),
        );
        let names: Vec<String> = (0..node_count).map(|n| n.to_string()).collect();
        let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
        t.dir("topology/nodes", &name_refs);

        // Node 0: the CPU, linked to every GPU over PCIe.
        let cpu_links: Vec<LinkText> = devices
            .iter()
            .map(|d| LinkText {
                kind: io_link::TYPE_PCIEXPRESS,
                from: 0,
                to: d.node,
                weight: PCIE_WEIGHT,
                bandwidth: PCIE_BANDWIDTH_MBPS,
            })
            .collect();
        t.node(
            0,
            "0",
            "",
            &NodeProps {
                cpu_cores_count: config.cpu_cores,
                simd_count: 0,
                mem_banks_count: 1,
                caches_count: 0,
                io_links_count: cpu_links.len() as u32,
                gpu: None,
                max_engine_clk_ccompute: config.cpu_clock_mhz,
            },
            &[mem_bank_text(
                mem_bank::HEAP_TYPE_SYSTEM,
                config.system_memory_bytes,
                64,
                3200,
            )],
            None,
            &[],
            &cpu_links,
        );

        for device in devices {
            let gpu = &device.config;
            let mut links = vec![LinkText {
                kind: io_link::TYPE_PCIEXPRESS,
                from: device.node,
                to: 0,
                weight: PCIE_WEIGHT,
                bandwidth: PCIE_BANDWIDTH_MBPS,
            }];
            if config.xgmi_hive {
                links.extend(
                    devices
                        .iter()
                        .filter(|p| p.index != device.index)
                        .map(|peer| LinkText {
                            kind: io_link::TYPE_XGMI,
                            from: device.node,
                            to: peer.node,
                            weight: XGMI_WEIGHT,
                            bandwidth: XGMI_BANDWIDTH_MBPS,
                        }),
                );
            }
            let caches = gpu_caches(device);
            let heap = if gpu.large_bar {
                mem_bank::HEAP_TYPE_FB_PUBLIC
            } else {
                mem_bank::HEAP_TYPE_FB_PRIVATE
            };
            let props = NodeProps {
                cpu_cores_count: 0,
                simd_count: device.simd_count(),
                mem_banks_count: 1,
                caches_count: caches.len() as u32,
                io_links_count: links.len() as u32,
                gpu: Some(GpuProps {
                    simd_id_base: device.simd_id_base,
                    max_waves_per_simd: gpu.max_waves_per_simd,
                    lds_size_in_kb: gpu.lds_size_kib,
                    wave_front_size: gpu.target.wavefront_size(),
                    array_count: device.layout.arrays_per_xcc() * device.layout.xccs,
                    simd_arrays_per_engine: device.layout.shader_arrays_per_engine,
                    cu_per_simd_array: device.layout.cu_per_shader_array,
                    simd_per_cu: gpu.simd_per_cu,
                    max_slots_scratch_cu: gpu.max_slots_scratch_cu,
                    gfx_target_version: gpu.target.gfx_target_version(),
                    device_id: gpu.device_id,
                    location_id: device.location_id,
                    drm_render_minor: device.render_minor,
                    hive_id: device.hive_id,
                    num_sdma_engines: gpu.sdma_engines,
                    num_sdma_xgmi_engines: gpu.sdma_xgmi_engines,
                    num_sdma_queues_per_engine: gpu.sdma_queues_per_engine,
                    num_cp_queues: gpu.cp_queues,
                    cwsr_size: device.sizes.cwsr_size,
                    ctl_stack_size: device.sizes.ctl_stack_size,
                    max_engine_clk_fcompute: gpu.engine_clock_mhz,
                    fw_version: gpu.mec_fw_version,
                    capability: device.capability,
                    debug_prop: device.debug_prop,
                    sdma_fw_version: gpu.sdma_fw_version,
                    unique_id: device.unique_id,
                    num_xcc: device.layout.xccs,
                }),
                max_engine_clk_ccompute: config.cpu_clock_mhz,
            };
            t.node(
                device.node,
                &device.gpu_id.to_string(),
                &gpu.asic_name,
                &props,
                &[mem_bank_text(
                    heap,
                    gpu.vram_bytes,
                    gpu.memory_width_bits,
                    gpu.memory_clock_mhz,
                )],
                Some(device.index),
                &caches,
                &links,
            );
            t.ip_discovery(device);
        }
        t
    }

    /// The render node's `device/ip_discovery` tree (see [`ip_discovery`]).
    fn ip_discovery(&mut self, device: &Device) {
        let table = ip_discovery::discovery_table(
            device.target(),
            device.layout.xccs,
            device.config.sdma_engines + device.config.sdma_xgmi_engines,
        );
        let render = format!("renderD{}", device.render_minor);
        for node in ip_discovery::sysfs_tree(&table) {
            match node {
                DiscoveryNode::Dir(path, names) => {
                    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                    self.dir(&ip_discovery_key(&render, &path), &refs);
                }
                DiscoveryNode::File(path, text) => {
                    self.file(&ip_discovery_key(&render, &path), text);
                }
            }
        }
    }

    fn dir(&mut self, path: &str, names: &[&str]) {
        self.entries.insert(
            path.to_owned(),
            Entry::Dir(names.iter().map(|&n| n.to_owned()).collect()),
        );
    }

    fn file(&mut self, path: &str, text: String) {
        self.entries.insert(path.to_owned(), Entry::File(text));
    }

    #[allow(clippy::too_many_arguments)]
    fn node(
        &mut self,
        node: u32,
        gpu_id: &str,
        name: &str,
        props: &NodeProps,
        banks: &[String],
        device: Option<usize>,
        caches: &[String],
        links: &[LinkText],
    ) {
        let base = format!("topology/nodes/{node}");
        self.dir(
            &base,
            &[
                "caches",
                "gpu_id",
                "io_links",
                "mem_banks",
                "name",
                "p2p_links",
                "perf",
                "properties",
            ],
        );
        self.file(&format!("{base}/gpu_id"), format!("{gpu_id}\n"));
        self.file(&format!("{base}/name"), format!("{name}\n"));
        self.file(&format!("{base}/properties"), properties_text(props));
        let indexed = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>();
        for (dir, count) in [
            ("mem_banks", banks.len()),
            ("caches", caches.len()),
            ("io_links", links.len()),
            ("p2p_links", 0),
        ] {
            let names = indexed(count);
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            self.dir(&format!("{base}/{dir}"), &refs);
        }
        self.dir(&format!("{base}/perf"), &[]);
        for (i, text) in banks.iter().enumerate() {
            let bank = format!("{base}/mem_banks/{i}");
            if let Some(index) = device {
                self.dir(&bank, &["properties", "used_memory"]);
                self.entries
                    .insert(format!("{bank}/used_memory"), Entry::UsedMemory(index));
            } else {
                self.dir(&bank, &["properties"]);
            }
            self.file(&format!("{bank}/properties"), text.clone());
        }
        for (i, text) in caches.iter().enumerate() {
            self.dir(&format!("{base}/caches/{i}"), &["properties"]);
            self.file(&format!("{base}/caches/{i}/properties"), text.clone());
        }
        for (i, link) in links.iter().enumerate() {
            self.dir(&format!("{base}/io_links/{i}"), &["properties"]);
            self.file(
                &format!("{base}/io_links/{i}/properties"),
                io_link_text(link),
            );
        }
    }

    /// The entry at `path` (relative to `.../kfd`).
    pub(crate) fn entry(&self, path: &str) -> Result<&Entry, Errno> {
        self.entries.get(path).ok_or(Errno::ENOENT)
    }
}

/// The GPU's caches in the kernel's order (`kfd_fill_cache_non_crat_info`: one kind after
/// the other): a vector L1 per active CU; on RDNA an instruction and a scalar data cache per
/// SQC (two CUs) and a GL1 per shader array; an L2 per XCC; the last-level cache.
fn gpu_caches(device: &Device) -> Vec<String> {
    let gpu = &device.config;
    let layout = &device.layout;
    let per_xcc = layout.active_cus_per_xcc as usize;
    let map_bits = per_xcc.next_multiple_of(8);
    let mut caches = Vec::new();
    for xcc in 0..layout.xccs as usize {
        for cu in 0..per_xcc {
            let mut siblings = vec![false; map_bits];
            siblings[cu] = true;
            let id = device.simd_id_base + (xcc * per_xcc + cu) as u32;
            caches.push(cache_text(1, &gpu.l1, id, &siblings));
        }
    }
    // Groups of consecutive CUs of one XCC sharing a cache: (first CU, count).
    let mut grouped = |config: &CacheConfig, kind: u32, groups: &[(usize, usize)]| {
        for xcc in 0..layout.xccs as usize {
            for &(first, count) in groups {
                let mut siblings = vec![false; map_bits];
                siblings[first..first + count].fill(true);
                let id = device.simd_id_base + (xcc * per_xcc + first) as u32;
                caches.push(typed_cache_text(1, config, kind, id, &siblings));
            }
        }
    };
    if let Some(sqc) = &gpu.sqc {
        let size = sqc.cus_per_sqc.max(1) as usize;
        let groups: Vec<(usize, usize)> = (0..per_xcc)
            .step_by(size)
            .map(|first| (first, size.min(per_xcc - first)))
            .collect();
        grouped(&sqc.instruction, cache::TYPE_INSTRUCTION, &groups);
        grouped(&sqc.scalar_data, cache::TYPE_DATA, &groups);
    }
    if let Some(gl1) = &gpu.gl1 {
        let mut groups = Vec::new();
        let mut first = 0;
        for array in 0..layout.arrays_per_xcc() {
            let count = layout.active_cus_in_array(array) as usize;
            if count > 0 {
                groups.push((first, count));
            }
            first += count;
        }
        grouped(gl1, cache::TYPE_DATA, &groups);
    }
    for xcc in 0..layout.xccs as usize {
        let mut siblings = vec![false; map_bits];
        siblings[..per_xcc].fill(true);
        let id = device.simd_id_base + (xcc * per_xcc) as u32;
        caches.push(cache_text(2, &gpu.l2, id, &siblings));
    }
    if let Some(l3) = &gpu.l3 {
        caches.push(cache_text(
            3,
            l3,
            device.simd_id_base,
            &vec![true; map_bits],
        ));
    }
    caches
}
