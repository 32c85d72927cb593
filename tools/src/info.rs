//! `aqueduct info`: the backend, the KFD interface version and the parsed topology.

use std::sync::Arc;

use aqueduct::backend;
use aqueduct::kfd::sys::Backend;
use aqueduct::kfd::topology::{
    Cache, HeapType, LinkDirectory, LinkType, Node, NodeKind, Processor, TargetId, Topology,
};
use aqueduct::kfd::{ProcessBinding, Sys};

type Error = Box<dyn std::error::Error>;

/// `info --json`: the device's agents as the safe API describes them, with the topology's
/// caches, memory banks and links.
pub fn run_json() -> Result<(), Error> {
    let device = aqueduct::Device::open()?;
    let kfd = device.kfd()?;
    let topology = kfd.topology();
    let node = |index: u32| topology.nodes.iter().find(|n| n.index == index);
    let cpus: Vec<serde_json::Value> = device
        .cpus()?
        .iter()
        .map(|cpu| {
            let mut value = serde_json::json!({
                "kind": "cpu",
                "node": cpu.node,
                "cores": cpu.cores,
                "max_clock_mhz": cpu.max_clock_mhz,
                "memory_bytes": cpu.memory_bytes,
            });
            if let Some(node) = node(cpu.node) {
                add_topology(&mut value, node, kfd.sys().as_ref());
            }
            value
        })
        .collect();
    let gpus: Vec<serde_json::Value> = device
        .gpus()?
        .iter()
        .map(|gpu| {
            let mut value = serde_json::json!({
                "kind": "gpu",
                "node": gpu.node,
                "gpu_id": gpu.gpu_id,
                "name": gpu.name,
                "marketing_name": gpu.marketing_name,
                "device_id": gpu.device_id,
                "target": gpu.target_id.to_string(),
                "compute_units": gpu.compute_units,
                "simds": gpu.simds,
                "xccs": gpu.xccs,
                "wavefront_size": gpu.wavefront_size,
                "max_waves_per_simd": gpu.max_waves_per_simd,
                "lds_bytes": gpu.lds_bytes,
                "max_workgroup_size": gpu.max_workgroup_size,
                "max_clock_mhz": gpu.max_clock_mhz,
                "timestamp_frequency_hz": gpu.timestamp_frequency_hz,
                "large_bar": gpu.large_bar,
                "hive_id": gpu.hive_id,
                "pools": gpu.pools.iter().map(|p| serde_json::json!({
                    "location": p.location.to_string(),
                    "size": p.size,
                    "host_accessible": p.host_accessible,
                })).collect::<Vec<_>>(),
                "queues": {
                    "max_queues": gpu.queues.max_queues,
                    "min_packets": gpu.queues.min_packets,
                    "max_packets": gpu.queues.max_packets,
                },
            });
            if let Some(node) = node(gpu.node) {
                add_topology(&mut value, node, kfd.sys().as_ref());
            }
            value
        })
        .collect();
    let (major, minor) = device.kfd_interface_version()?;
    let report = serde_json::json!({
        "schema": 1,
        "simulated": device.is_simulated(),
        "description": device.description(),
        "kfd_interface": [major, minor],
        "agents": cpus.into_iter().chain(gpus).collect::<Vec<_>>(),
    });
    println!("{}", serde_json::to_string_pretty(&report)?);
    device.shutdown()?;
    Ok(())
}

/// Memory banks, caches (read from `sys` now: they are not in the snapshot) and links of a
/// topology node.
fn add_topology(value: &mut serde_json::Value, node: &Node, sys: &dyn Sys) {
    value["memory_banks"] = node
        .mem_banks
        .iter()
        .map(|bank| {
            serde_json::json!({
                "heap": format!("{:?}", bank.heap_type()),
                "size": bank.properties.size_in_bytes,
                "width": bank.properties.width,
            })
        })
        .collect();
    let caches = match Topology::read_caches(sys, node.index) {
        Ok(caches) => caches,
        Err(error) => {
            value["caches_error"] = error.to_string().into();
            Vec::new()
        }
    };
    value["caches"] = caches
        .iter()
        .map(|cache| {
            serde_json::json!({
                "level": cache.properties.level,
                "size_kib": cache.properties.size,
                "line_bytes": cache.properties.cache_line_size,
                "type": cache.properties.cache_type,
            })
        })
        .collect();
    value["io_links"] = node
        .io_links
        .iter()
        .map(|link| {
            serde_json::json!({
                "type": match link.link_type() {
                    LinkType::PciExpress => "pcie".to_owned(),
                    LinkType::Xgmi => "xgmi".to_owned(),
                    LinkType::Other(n) => format!("type {n}"),
                },
                "to_node": link.properties.node_to,
                "weight": link.properties.weight,
            })
        })
        .collect();
}

pub fn run() -> Result<(), Error> {
    show(&backend::system()?)
}

fn show(sys: &Arc<dyn Sys>) -> Result<(), Error> {
    let binding = ProcessBinding::for_sys(sys)?;
    let (major, minor) = binding.interface_version();
    match sys.backend() {
        Backend::Linux => println!("backend: {}", aqueduct::kfd::abi::sysfs::KFD_DEVICE_PATH),
        Backend::Simulator(machine) => println!("backend: simulator, {machine}"),
    }
    println!("kfd interface: {major}.{minor}");
    let topology = Topology::read(sys.as_ref())?;
    println!("topology generation {}", topology.generation_id);
    for node in &topology.nodes {
        print_node(node, &Topology::read_caches(sys.as_ref(), node.index)?);
    }
    Ok(())
}

fn print_node(node: &Node, caches: &[Cache]) {
    let props = &node.properties;
    match node.kind {
        NodeKind::Cpu => println!(
            "node {}: CPU, {} cores, {} MHz",
            node.index, props.cpu_cores_count, props.max_engine_clk_ccompute
        ),
        NodeKind::Hidden(errno) => {
            println!(
                "node {}: GPU hidden (gpu_id unreadable: {errno})",
                node.index
            );
        }
        NodeKind::Gpu(gpu_id) => {
            // XNACK is a per-process mode, known once the driver is open: left out here.
            let target = props.gfx_version().map_or_else(
                |e| format!("unknown target ({e})"),
                |v| {
                    Processor::from_gfx_version(v).map_or_else(
                        || format!("{v} (no processor this driver knows)"),
                        |p| TargetId::of_agent(p, None, Some(props.sram_ecc())).to_string(),
                    )
                },
            );
            let cus = props
                .compute_units()
                .map_or_else(|| "?".to_owned(), |n| n.to_string());
            // The product name where the device id is one aqueduct knows (KFD has none).
            let product = aqueduct::agent::marketing_name(props.device_id)
                .map_or_else(String::new, |name| format!(" {name}"));
            println!(
                "node {}: GPU gpu_id {gpu_id:#x}{product} ({}), {target}, {cus} CUs in {} \
                 XCC(s), wave{}, {} MHz, device {:#06x}, renderD{}",
                node.index,
                node.name.as_deref().unwrap_or("unnamed"),
                props.xcc_count(),
                props.wave_front_size,
                props.max_engine_clk_fcompute,
                props.device_id,
                props.drm_render_minor,
            );
            // The shape rocminfo shows (SIMDs per CU, shader engines, arrays per engine,
            // waves per CU), from the same properties.
            println!(
                "  {} SIMDs per CU, {} shader engines x {} arrays, {} waves per CU, \
                 {} KiB LDS, {} scratch slots per CU",
                props.simd_per_cu,
                props.shader_engines().unwrap_or(0),
                props.simd_arrays_per_engine,
                props.simd_per_cu * props.max_waves_per_simd,
                props.lds_size_in_kb,
                props.max_slots_scratch_cu,
            );
        }
    }
    for bank in &node.mem_banks {
        let kind = match bank.heap_type() {
            HeapType::System => "system".to_owned(),
            HeapType::FrameBufferPublic => "VRAM (host-visible)".to_owned(),
            HeapType::FrameBufferPrivate => "VRAM".to_owned(),
            other => format!("{other:?}"),
        };
        println!(
            "  memory bank {}: {kind}, {} MiB, {}-bit",
            bank.index,
            bank.properties.size_in_bytes >> 20,
            bank.properties.width
        );
    }
    for link in &node.io_links {
        let kind = match link.link_type() {
            LinkType::PciExpress => "PCIe".to_owned(),
            LinkType::Xgmi => "XGMI".to_owned(),
            LinkType::Other(n) => format!("type {n}"),
        };
        let directory = match link.directory {
            LinkDirectory::Io => "io",
            LinkDirectory::PeerToPeer => "p2p",
        };
        println!(
            "  {directory} link {}: {kind} to node {}, weight {}",
            link.index, link.properties.node_to, link.properties.weight
        );
    }
    if !caches.is_empty() {
        println!("  {} caches", caches.len());
    }
    for (name, value) in &props.unknown {
        println!("  unknown property {name} = {value}");
    }
}
