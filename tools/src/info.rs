//! `aqueduct info`: the backend, the KFD interface version and the parsed topology.

use std::sync::Arc;

use aqueduct::backend::{self, BackendChoice};
use aqueduct::kfd::topology::{HeapType, LinkType, Node, NodeKind, Topology};
use aqueduct::kfd::{Linux, ProcessBinding, Sys};

type Error = Box<dyn std::error::Error>;

pub fn run() -> Result<(), Error> {
    match backend::choose()? {
        BackendChoice::Hardware => {
            let sys: Arc<dyn Sys> = Arc::new(Linux);
            show(&sys)
        }
        BackendChoice::Simulator => {
            println!("backend: simulator (no /dev/kfd here)");
            println!("the simulated machine is not built yet; see README.md, \"Status\"");
            Ok(())
        }
    }
}

fn show(sys: &Arc<dyn Sys>) -> Result<(), Error> {
    let binding = ProcessBinding::for_sys(sys)?;
    let (major, minor) = binding.interface_version();
    println!("backend: {:?}", sys.backend());
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
            let target = props
                .gfx_version()
                .map_or_else(|e| format!("unknown ({e})"), |v| v.to_string());
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
        println!(
            "  {:?} link {}: {kind} to node {}, weight {}",
            link.directory, link.index, link.properties.node_to, link.properties.weight
        );
    }
    if !node.caches.is_empty() {
        println!("  {} caches", node.caches.len());
    }
    for (name, value) in &props.unknown {
        println!("  unknown property {name} = {value}");
    }
}
