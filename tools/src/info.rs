//! `aqueduct info`: the backend, the KFD interface version and the parsed topology.

use std::sync::Arc;

use aqueduct::backend;
use aqueduct::kfd::sys::Backend;
use aqueduct::kfd::topology::{
    HeapType, LinkDirectory, LinkType, Node, NodeKind, TargetId, Topology,
};
use aqueduct::kfd::{ProcessBinding, Sys};

type Error = Box<dyn std::error::Error>;

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
        print_node(node);
    }
    Ok(())
}

fn print_node(node: &Node) {
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
                |v| TargetId::new(v, Some(props.sram_ecc()), None).to_string(),
            );
            let cus = props
                .compute_units()
                .map_or_else(|| "?".to_owned(), |n| n.to_string());
            println!(
                "node {}: GPU gpu_id {gpu_id:#x} ({}), {target}, {cus} CUs in {} XCC(s), \
                 wave{}, {} MHz, device {:#06x}, renderD{}",
                node.index,
                node.name.as_deref().unwrap_or("unnamed"),
                props.xcc_count(),
                props.wave_front_size,
                props.max_engine_clk_fcompute,
                props.device_id,
                props.drm_render_minor,
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
    if !node.caches.is_empty() {
        println!("  {} caches", node.caches.len());
    }
    for (name, value) in &props.unknown {
        println!("  unknown property {name} = {value}");
    }
}
