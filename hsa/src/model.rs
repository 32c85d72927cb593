//! What the runtime shows of the machine, computed once at `hsa_init` from the safe API: the
//! agents (CPUs, then GPUs, in topology node order, as ROCr lists them), their memory pools
//! (which are also the regions) and the GPUs' ISAs. Handles are indices into these tables.

use std::sync::OnceLock;

use aqueduct::kfd::topology::{Cache, Node, Topology};
use aqueduct::{Device, GpuAgent, MemoryLocation};

use crate::error::Result;

/// Whether an agent is a CPU or a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentKind {
    /// `HSA_DEVICE_TYPE_CPU`.
    Cpu,
    /// `HSA_DEVICE_TYPE_GPU`.
    Gpu,
}

/// One agent and the values of its info attributes.
#[derive(Clone, Debug)]
pub struct Agent {
    /// CPU or GPU.
    pub kind: AgentKind,
    /// Its topology node (`HSA_AGENT_INFO_NODE`).
    pub node: u32,
    /// `HSA_AGENT_INFO_NAME`.
    pub name: String,
    /// `HSA_AMD_AGENT_INFO_PRODUCT_NAME`.
    pub product_name: String,
    /// `HSA_AMD_AGENT_INFO_UUID`.
    pub uuid: String,
    /// Cache sizes in bytes by level (L1..L4), read at the first ask ([`Agent::cache_bytes`]).
    pub caches: OnceLock<[u32; 4]>,
    /// PCI device id.
    pub chip_id: u32,
    /// Highest clock in MHz.
    pub max_clock_mhz: u32,
    /// PCI bus/device/function.
    pub bdfid: u32,
    /// PCI domain.
    pub domain: u32,
    /// CPU cores or GPU compute units.
    pub compute_units: u32,
    /// SIMDs per CU (0 on a CPU).
    pub simds_per_cu: u32,
    /// Shader engines (0 on a CPU).
    pub shader_engines: u32,
    /// Shader arrays per engine (0 on a CPU).
    pub arrays_per_engine: u32,
    /// Address watch points.
    pub watch_points: u32,
    /// Wave slots per CU.
    pub max_waves_per_cu: u32,
    /// Memory bus width in bits and highest memory clock in MHz (the node's first memory bank).
    pub memory_width: u32,
    /// Highest memory clock in MHz.
    pub memory_max_mhz: u32,
    /// MEC and SDMA firmware versions.
    pub ucode_version: u32,
    /// SDMA firmware version.
    pub sdma_ucode_version: u32,
    /// Global wave sync resources (cooperative queues need them).
    pub num_gws: u32,
    /// The GPU in the safe API, for a GPU agent.
    pub gpu: Option<GpuAgent>,
    /// Index of its ISA in [`Machine::isas`], for a GPU agent.
    pub isa: Option<usize>,
    /// Indices of its memory pools in [`Machine::pools`] (`hsa_amd_agent_iterate_memory_pools`).
    pub pools: Vec<usize>,
    /// Indices of its regions (`hsa_agent_iterate_regions`): a GPU's own pools, then the
    /// system's (ROCr shows a kernel agent the host memory it can allocate kernargs from).
    pub regions: Vec<usize>,
}

/// The segment of a pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Segment {
    /// Global memory.
    Global,
    /// Group (LDS) memory: shown, never allocatable.
    Group,
}

/// A memory pool (and region).
#[derive(Clone, Debug)]
pub struct Pool {
    /// The agent it belongs to (index in [`Machine::agents`]).
    pub owner: usize,
    /// Global or group.
    pub segment: Segment,
    /// The safe API's location for allocations, for a global pool.
    pub location: Option<MemoryLocation>,
    /// Size in bytes.
    pub size: u64,
}

impl Pool {
    /// `HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_*` (equal to the region's `HSA_REGION_GLOBAL_FLAG_*`).
    pub fn global_flags(&self) -> u32 {
        const KERNARG: u32 = 1;
        const FINE: u32 = 2;
        const COARSE: u32 = 4;
        match self.location {
            Some(MemoryLocation::HostFine) => FINE,
            Some(MemoryLocation::Kernarg) => KERNARG | FINE,
            Some(MemoryLocation::HostCoarse | MemoryLocation::Device) => COARSE,
            None => 0,
        }
    }

    /// Whether the runtime allocates from it.
    pub fn allocatable(&self) -> bool {
        self.segment == Segment::Global
    }

    /// Whether it is host memory.
    pub fn is_host(&self) -> bool {
        self.location.is_some_and(MemoryLocation::is_host)
    }
}

/// An ISA of one of the GPUs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Isa {
    /// `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`.
    pub name: String,
    /// Wavefront size.
    pub wavefront_size: u32,
}

/// Everything the info functions answer from.
#[derive(Clone, Debug, Default)]
pub struct Machine {
    /// CPUs then GPUs.
    pub agents: Vec<Agent>,
    /// Every pool.
    pub pools: Vec<Pool>,
    /// Every distinct ISA.
    pub isas: Vec<Isa>,
}

/// Sizes the runtime uses for a work-group and a grid (every GFX9+ GPU).
pub const WORKGROUP_MAX: u16 = 1024;

impl Machine {
    /// Read the machine of an open device.
    pub fn read(device: &Device) -> Result<Self> {
        let kfd = device.kfd()?;
        let topology = kfd.topology();
        let mut machine = Self::default();
        let mut nodes: Vec<&Node> = topology.nodes.iter().collect();
        nodes.sort_by_key(|node| node.index);
        for cpu in device.cpus()? {
            let Some(node) = nodes.iter().find(|n| n.index == cpu.node) else {
                continue;
            };
            let index = machine.agents.len();
            let model = cpu_model_name().unwrap_or_default();
            let props = &node.properties;
            machine.agents.push(Agent {
                kind: AgentKind::Cpu,
                node: cpu.node,
                name: model.clone(),
                product_name: model,
                // ROCr's CPU agents have no unique id: "CPU-XX".
                uuid: "CPU-XX".to_owned(),
                caches: OnceLock::new(),
                chip_id: 0,
                max_clock_mhz: cpu.max_clock_mhz,
                bdfid: 0,
                domain: 0,
                compute_units: cpu.cores,
                simds_per_cu: 0,
                shader_engines: 0,
                arrays_per_engine: 0,
                watch_points: watch_points(props.capability),
                max_waves_per_cu: 0,
                memory_width: node.mem_banks.first().map_or(0, |b| b.properties.width),
                memory_max_mhz: node
                    .mem_banks
                    .first()
                    .map_or(0, |b| b.properties.mem_clk_max),
                ucode_version: 0,
                sdma_ucode_version: 0,
                num_gws: 0,
                gpu: None,
                isa: None,
                pools: Vec::new(),
                regions: Vec::new(),
            });
            // ROCr's order for a CPU node's system memory: fine grained, kernarg, coarse.
            for location in [
                MemoryLocation::HostFine,
                MemoryLocation::Kernarg,
                MemoryLocation::HostCoarse,
            ] {
                let pool = machine.pools.len();
                machine.pools.push(Pool {
                    owner: index,
                    segment: Segment::Global,
                    location: Some(location),
                    size: cpu.memory_bytes,
                });
                machine.agents[index].pools.push(pool);
                machine.agents[index].regions.push(pool);
            }
        }
        let system_pools: Vec<usize> = machine
            .agents
            .first()
            .map(|cpu| cpu.pools.clone())
            .unwrap_or_default();
        for gpu in device.gpus()? {
            let Some(node) = nodes.iter().find(|n| n.index == gpu.node) else {
                continue;
            };
            machine.push_gpu(gpu, node, topology, &system_pools);
        }
        Ok(machine)
    }

    fn push_gpu(&mut self, gpu: &GpuAgent, node: &Node, _topology: &Topology, system: &[usize]) {
        let props = &node.properties;
        let isa_name = format!("amdgcn-amd-amdhsa--{}", gpu.target_id);
        let isa = if let Some(i) = self.isas.iter().position(|i| i.name == isa_name) {
            i
        } else {
            self.isas.push(Isa {
                name: isa_name,
                wavefront_size: gpu.wavefront_size,
            });
            self.isas.len() - 1
        };
        let index = self.agents.len();
        let simds_per_cu = gpu.simds.checked_div(gpu.compute_units).unwrap_or(0);
        let vram = Pool {
            owner: index,
            segment: Segment::Global,
            location: Some(MemoryLocation::Device),
            size: gpu
                .pools
                .iter()
                .find(|p| p.location == MemoryLocation::Device)
                .map_or(0, |p| p.size),
        };
        let group = Pool {
            owner: index,
            segment: Segment::Group,
            location: None,
            size: u64::from(gpu.lds_bytes),
        };
        let own = [self.pools.len(), self.pools.len() + 1];
        self.pools.push(vram);
        self.pools.push(group);
        self.agents.push(Agent {
            kind: AgentKind::Gpu,
            node: gpu.node,
            name: gpu.target_id.processor.name.to_owned(),
            product_name: gpu
                .marketing_name
                .map_or_else(|| gpu.name.clone().unwrap_or_default(), str::to_owned),
            uuid: format!("GPU-{:016x}", props.unique_id),
            caches: OnceLock::new(),
            chip_id: gpu.device_id,
            max_clock_mhz: gpu.max_clock_mhz,
            bdfid: props.location_id,
            domain: props.domain,
            compute_units: gpu.compute_units,
            simds_per_cu,
            shader_engines: props
                .array_count
                .checked_div(props.simd_arrays_per_engine)
                .unwrap_or(0),
            arrays_per_engine: props.simd_arrays_per_engine,
            watch_points: watch_points(props.capability),
            max_waves_per_cu: gpu.max_waves_per_simd * simds_per_cu,
            memory_width: node.mem_banks.first().map_or(0, |b| b.properties.width),
            memory_max_mhz: node
                .mem_banks
                .first()
                .map_or(0, |b| b.properties.mem_clk_max),
            ucode_version: props.fw_version,
            sdma_ucode_version: props.sdma_fw_version,
            num_gws: props.num_gws,
            gpu: Some(gpu.clone()),
            isa: Some(isa),
            pools: own.to_vec(),
            regions: own.iter().chain(system).copied().collect(),
        });
    }

    /// The agent of a handle.
    pub fn agent(&self, handle: u64) -> Option<&Agent> {
        index_of(handle).and_then(|i| self.agents.get(i))
    }

    /// The pool of a handle.
    pub fn pool(&self, handle: u64) -> Option<&Pool> {
        index_of(handle).and_then(|i| self.pools.get(i))
    }

    /// The ISA of a handle.
    pub fn isa(&self, handle: u64) -> Option<&Isa> {
        index_of(handle).and_then(|i| self.isas.get(i))
    }

    /// The agent index of the GPU with `gpu_id`.
    pub fn gpu_agent(&self, gpu_id: u32) -> Option<usize> {
        self.agents
            .iter()
            .position(|a| a.gpu.as_ref().is_some_and(|g| g.gpu_id == gpu_id))
    }
}

/// Handles are indices plus one, so that 0 is never a valid handle.
pub fn handle_of(index: usize) -> u64 {
    index as u64 + 1
}

/// The index of a handle.
pub fn index_of(handle: u64) -> Option<usize> {
    usize::try_from(handle.checked_sub(1)?).ok()
}

/// Address watch points: 2^(`HSA_CAP_WATCH_POINTS_TOTALBITS`), as ROCr computes them.
fn watch_points(capability: u32) -> u32 {
    1 << ((capability & 0xf00) >> 8)
}

impl Agent {
    /// Cache sizes in bytes by level (L1..L4), read from the node's topology caches at the
    /// first ask. Not at `hsa_init`: a GPU lists about 150 caches, and reading them was most
    /// of `hsa_init`'s time (`aqueduct bench --rocr --rocr-library`); few programs ask. A read
    /// that fails gives no sizes (and is tried again at the next ask).
    pub fn cache_bytes(&self, device: &Device) -> [u32; 4] {
        if let Some(sizes) = self.caches.get() {
            return *sizes;
        }
        let caches = device.kfd().map_err(|e| e.to_string()).and_then(|kfd| {
            Topology::read_caches(kfd.sys().as_ref(), self.node).map_err(|e| e.to_string())
        });
        match caches {
            Ok(caches) => *self.caches.get_or_init(|| cache_bytes(&caches)),
            Err(error) => {
                tracing::warn!(node = self.node, %error, "cannot read the node's caches");
                [0; 4]
            }
        }
    }
}

/// Cache sizes by level from a node's caches (the first cache of each level, in bytes).
/// The kernel lists a CPU node's caches only on some systems; ROCr's libhsakmt reads the
/// host's `/sys/devices/system/cpu` instead, which aqueduct does not (it reads what the
/// driver's topology says), so a CPU agent may show none.
fn cache_bytes(caches: &[Cache]) -> [u32; 4] {
    let mut sizes = [0u32; 4];
    for cache in caches {
        let level = cache.properties.level as usize;
        if (1..=4).contains(&level) && sizes[level - 1] == 0 {
            sizes[level - 1] = cache.properties.size.saturating_mul(1024);
        }
    }
    sizes
}

/// The CPU's model name, as libhsakmt gives ROCr (`model name` in `/proc/cpuinfo`).
fn cpu_model_name() -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines()
        .find(|line| line.starts_with("model name"))
        .and_then(|line| line.split_once(':'))
        .map(|(_, name)| name.trim().to_owned())
}
