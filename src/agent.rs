//! Agents: the GPUs and CPUs of a device, with their properties as typed values.

use std::fmt;

use aql::builder::DispatchLimits;
use kfd::Kfd;
use kfd::topology::{HeapType, NodeKind, TargetId, Topology};
use tracing::warn;

/// Smallest AQL ring, in packets: one 4 KiB page (the kernel wants whole pages).
pub const MIN_QUEUE_PACKETS: u32 = 64;
/// Largest AQL ring, in packets (ROCr's limit, 0x20000).
pub const MAX_QUEUE_PACKETS: u32 = 0x2_0000;

/// Where a buffer lives, and how it is shared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemoryLocation {
    /// The GPU's own memory (VRAM). On a large-BAR GPU the CPU maps it too, so host reads
    /// and writes go straight to it.
    Device,
    /// Host memory, fine grained: coherent with the GPU while kernels run (atomics and
    /// signals work across both sides).
    HostFine,
    /// Host memory, coarse grained: coherent with the GPU only at dispatch boundaries.
    HostCoarse,
    /// Host memory for kernel arguments (fine grained; readable by every GPU).
    Kernarg,
}

impl MemoryLocation {
    /// Every location.
    pub const ALL: [Self; 4] = [
        Self::Device,
        Self::HostFine,
        Self::HostCoarse,
        Self::Kernarg,
    ];

    /// Whether the location is host memory.
    pub const fn is_host(self) -> bool {
        !matches!(self, Self::Device)
    }
}

impl fmt::Display for MemoryLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Device => "device memory",
            Self::HostFine => "fine-grained host memory",
            Self::HostCoarse => "coarse-grained host memory",
            Self::Kernarg => "kernarg memory",
        })
    }
}

/// A memory pool an agent can allocate from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryPool {
    /// What memory.
    pub location: MemoryLocation,
    /// Its size in bytes (the memory bank's; free space is what the kernel says at the time).
    pub size: u64,
    /// Whether the CPU can read and write it directly.
    pub host_accessible: bool,
}

/// Limits of the AQL queues of a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueLimits {
    /// Compute queues the kernel driver can schedule for the process (`num_cp_queues`).
    pub max_queues: u32,
    /// Smallest ring, in packets.
    pub min_packets: u32,
    /// Largest ring, in packets.
    pub max_packets: u32,
}

/// A GPU agent.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GpuAgent {
    /// The kernel's gpu_id.
    pub gpu_id: u32,
    /// Its topology node.
    pub node: u32,
    /// The ASIC name the topology gives (e.g. `aldebaran`), if any.
    pub name: Option<String>,
    /// PCI device id.
    pub device_id: u32,
    /// The product name, for the PCI device ids aqueduct knows ([`marketing_name`]).
    pub marketing_name: Option<&'static str>,
    /// The target id, e.g. `gfx90a:sramecc+:xnack-`.
    pub target_id: TargetId,
    /// Compute units (all XCCs).
    pub compute_units: u32,
    /// SIMDs (all XCCs).
    pub simds: u32,
    /// XCCs (compute dies) in the node.
    pub xccs: u32,
    /// Wavefront size: 64 or 32.
    pub wavefront_size: u32,
    /// Wave slots per SIMD.
    pub max_waves_per_simd: u32,
    /// Local data share of one work-group, in bytes.
    pub lds_bytes: u32,
    /// Largest work-group, in work-items.
    pub max_workgroup_size: u32,
    /// Highest shader clock, in MHz.
    pub max_clock_mhz: u32,
    /// Frequency of the timestamp counter the command processor writes into profiled
    /// signals, in Hz.
    pub timestamp_frequency_hz: u64,
    /// Whether the CPU maps all of the GPU's memory (large BAR).
    pub large_bar: bool,
    /// XGMI hive id (0: none). GPUs of one hive reach each other's memory directly.
    pub hive_id: u64,
    /// Pools this GPU allocates from: its VRAM, then host memory.
    pub pools: Vec<MemoryPool>,
    /// Queue limits.
    pub queues: QueueLimits,
}

impl GpuAgent {
    /// What one dispatch on this GPU may ask for: the limits `aql`'s packet builder checks a
    /// dispatch against, from this agent's properties. The topology reports the work-group
    /// and LDS limits; it reports no private-segment limit, so that one is derived from the
    /// width and unit of this ISA's scratch wave size over 64 lanes
    /// ([`DispatchLimits::for_gfx_major`]: 131,056 bytes before GFX11, 131,068 from GFX11).
    pub fn dispatch_limits(&self) -> DispatchLimits {
        let major = u32::from(self.target_id.processor.version.0);
        DispatchLimits {
            max_workgroup_size: self.max_workgroup_size,
            max_group_segment_size: self.lds_bytes,
            max_private_segment_size: DispatchLimits::for_gfx_major(major).max_private_segment_size,
        }
    }
}

/// A CPU agent (a NUMA node).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CpuAgent {
    /// Its topology node.
    pub node: u32,
    /// Cores.
    pub cores: u32,
    /// Highest clock, in MHz.
    pub max_clock_mhz: u32,
    /// System memory of the node, in bytes.
    pub memory_bytes: u64,
}

/// The timestamp frequency when the render node does not say: 100 MHz, what MI200 and MI300
/// report (AMDGPU_INFO `gpu_counter_freq`).
const DEFAULT_TIMESTAMP_HZ: u64 = 100_000_000;

/// The GPU agents of an open driver.
pub(crate) fn gpus(kfd: &Kfd) -> Vec<GpuAgent> {
    let host_memory = system_memory(kfd.topology());
    kfd.gpus()
        .iter()
        .map(|gpu| {
            let node = gpu.node();
            let props = &node.properties;
            let vram = node.vram_bytes();
            let large_bar = gpu.has_public_vram();
            let timestamp_frequency_hz =
                match drm_amdgpu::info::device_info(kfd.sys().as_ref(), gpu.render_fd()) {
                    Ok(info) if info.gpu_counter_freq != 0 => {
                        u64::from(info.gpu_counter_freq) * 1000
                    }
                    Ok(_) => DEFAULT_TIMESTAMP_HZ,
                    Err(error) => {
                        warn!(%error, gpu_id = gpu.gpu_id(), "AMDGPU_INFO_DEV_INFO failed; assuming a 100 MHz timestamp counter");
                        DEFAULT_TIMESTAMP_HZ
                    }
                };
            let host = |location| MemoryPool {
                location,
                size: host_memory,
                host_accessible: true,
            };
            GpuAgent {
                gpu_id: gpu.gpu_id(),
                node: node.index,
                name: node.name.clone(),
                device_id: props.device_id,
                marketing_name: marketing_name(props.device_id),
                target_id: gpu.target_id(kfd.xnack_enabled()),
                compute_units: props.compute_units().unwrap_or(0),
                simds: props.simd_count,
                xccs: props.xcc_count(),
                wavefront_size: props.wave_front_size,
                max_waves_per_simd: props.max_waves_per_simd,
                lds_bytes: props.lds_size_in_kb * 1024,
                // Every GFX9+ part takes work-groups of up to 1024 work-items.
                max_workgroup_size: 1024,
                max_clock_mhz: props.max_engine_clk_fcompute,
                timestamp_frequency_hz,
                large_bar,
                hive_id: props.hive_id,
                pools: vec![
                    MemoryPool {
                        location: MemoryLocation::Device,
                        size: vram,
                        host_accessible: large_bar,
                    },
                    host(MemoryLocation::HostFine),
                    host(MemoryLocation::HostCoarse),
                    host(MemoryLocation::Kernarg),
                ],
                queues: QueueLimits {
                    max_queues: props.num_cp_queues,
                    min_packets: MIN_QUEUE_PACKETS,
                    max_packets: MAX_QUEUE_PACKETS,
                },
            }
        })
        .collect()
}

/// The product name of an AMD GPU by PCI device id, for the data-centre parts aqueduct targets
/// and the RDNA3 desktop cards the simulator models.
/// The ids are those of the amdgpu driver's PCI table (`amdgpu_drv.c`) as ROCm's marketing
/// names label them; parts not listed get `None` rather than a guess.
pub fn marketing_name(device_id: u32) -> Option<&'static str> {
    Some(match device_id {
        0x738C => "AMD Instinct MI100",
        0x740C => "AMD Instinct MI250X / MI250",
        0x740F => "AMD Instinct MI210",
        0x74A0 => "AMD Instinct MI300A",
        0x74A1 => "AMD Instinct MI300X",
        // Navi 31: the PCI revision tells the three apart (amdgpu.ids: C8 XTX, CC XT, CE GRE).
        0x744C => "AMD Radeon RX 7900 XTX / 7900 XT / 7900 GRE",
        _ => return None,
    })
}

/// The CPU agents of the topology.
pub(crate) fn cpus(topology: &Topology) -> Vec<CpuAgent> {
    topology
        .nodes
        .iter()
        .filter(|node| node.kind == NodeKind::Cpu)
        .map(|node| CpuAgent {
            node: node.index,
            cores: node.properties.cpu_cores_count,
            max_clock_mhz: node.properties.max_engine_clk_ccompute,
            memory_bytes: node
                .mem_banks
                .iter()
                .filter(|bank| bank.heap_type() == HeapType::System)
                .map(|bank| bank.properties.size_in_bytes)
                .sum(),
        })
        .collect()
}

fn system_memory(topology: &Topology) -> u64 {
    cpus(topology).iter().map(|cpu| cpu.memory_bytes).sum()
}
