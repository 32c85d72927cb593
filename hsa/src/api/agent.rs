//! Agents: iteration and `hsa_agent_get_info`, with ROCr's attribute values.

use std::ffi::c_void;

use crate::error::{Error, Result, entry};
use crate::model::{Agent, AgentKind, Machine, WORKGROUP_MAX, handle_of};
use crate::runtime::runtime;
use crate::status::Status;
use crate::value::{Value, answer};

/// A callback over handles (`hsa_agent_t`, `hsa_isa_t`, `hsa_region_t`, ... are one `uint64_t`).
pub type HandleCallback = Option<unsafe extern "C" fn(u64, *mut c_void) -> Status>;

/// Call `callback` with each handle until it returns something other than success.
///
/// # Safety
///
/// `callback` is null or a function that may be called with each handle and `data`.
pub unsafe fn iterate(
    handles: impl IntoIterator<Item = u64>,
    callback: HandleCallback,
    data: *mut c_void,
) -> Result<Status> {
    let callback = callback.ok_or_else(|| Error::invalid_argument("null callback"))?;
    for handle in handles {
        // SAFETY: the program gave us this callback for exactly this use.
        let status = unsafe { callback(handle, data) };
        if status != Status::SUCCESS {
            return Ok(status);
        }
    }
    Ok(Status::SUCCESS)
}

/// `HSA_AGENT_INFO_*` and `HSA_AMD_AGENT_INFO_*`.
mod attr {
    pub const NAME: u32 = 0;
    pub const VENDOR_NAME: u32 = 1;
    pub const FEATURE: u32 = 2;
    pub const MACHINE_MODEL: u32 = 3;
    pub const PROFILE: u32 = 4;
    pub const DEFAULT_FLOAT_ROUNDING_MODE: u32 = 5;
    pub const WAVEFRONT_SIZE: u32 = 6;
    pub const WORKGROUP_MAX_DIM: u32 = 7;
    pub const WORKGROUP_MAX_SIZE: u32 = 8;
    pub const GRID_MAX_DIM: u32 = 9;
    pub const GRID_MAX_SIZE: u32 = 10;
    pub const FBARRIER_MAX_SIZE: u32 = 11;
    pub const QUEUES_MAX: u32 = 12;
    pub const QUEUE_MIN_SIZE: u32 = 13;
    pub const QUEUE_MAX_SIZE: u32 = 14;
    pub const QUEUE_TYPE: u32 = 15;
    pub const NODE: u32 = 16;
    pub const DEVICE: u32 = 17;
    pub const CACHE_SIZE: u32 = 18;
    pub const ISA: u32 = 19;
    pub const EXTENSIONS: u32 = 20;
    pub const VERSION_MAJOR: u32 = 21;
    pub const VERSION_MINOR: u32 = 22;
    pub const BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: u32 = 23;
    pub const FAST_F16_OPERATION: u32 = 24;
    pub const AMD_CHIP_ID: u32 = 0xA000;
    pub const AMD_CACHELINE_SIZE: u32 = 0xA001;
    pub const AMD_COMPUTE_UNIT_COUNT: u32 = 0xA002;
    pub const AMD_MAX_CLOCK_FREQUENCY: u32 = 0xA003;
    pub const AMD_DRIVER_NODE_ID: u32 = 0xA004;
    pub const AMD_MAX_ADDRESS_WATCH_POINTS: u32 = 0xA005;
    pub const AMD_BDFID: u32 = 0xA006;
    pub const AMD_MEMORY_WIDTH: u32 = 0xA007;
    pub const AMD_MEMORY_MAX_FREQUENCY: u32 = 0xA008;
    pub const AMD_PRODUCT_NAME: u32 = 0xA009;
    pub const AMD_MAX_WAVES_PER_CU: u32 = 0xA00A;
    pub const AMD_NUM_SIMDS_PER_CU: u32 = 0xA00B;
    pub const AMD_NUM_SHADER_ENGINES: u32 = 0xA00C;
    pub const AMD_NUM_SHADER_ARRAYS_PER_SE: u32 = 0xA00D;
    pub const AMD_HDP_FLUSH: u32 = 0xA00E;
    pub const AMD_DOMAIN: u32 = 0xA00F;
    pub const AMD_COOPERATIVE_QUEUES: u32 = 0xA010;
    pub const AMD_UUID: u32 = 0xA011;
    pub const AMD_ASIC_REVISION: u32 = 0xA012;
    pub const AMD_SVM_DIRECT_HOST_ACCESS: u32 = 0xA013;
    pub const AMD_COOPERATIVE_COMPUTE_UNIT_COUNT: u32 = 0xA014;
    // Newer ROCr (hsa_ext_amd.h after 5.2); liboffload and newer rocminfo ask for them.
    pub const AMD_MEMORY_AVAIL: u32 = 0xA015;
    pub const AMD_TIMESTAMP_FREQUENCY: u32 = 0xA016;
    pub const AMD_ASIC_FAMILY_ID: u32 = 0xA107;
    pub const AMD_UCODE_VERSION: u32 = 0xA108;
    pub const AMD_SDMA_UCODE_VERSION: u32 = 0xA109;
    pub const AMD_NUM_SDMA_ENG: u32 = 0xA10A;
    pub const AMD_NUM_SDMA_XGMI_ENG: u32 = 0xA10B;
    pub const AMD_IOMMU_SUPPORT: u32 = 0xA110;
    pub const AMD_NUM_XCC: u32 = 0xA111;
    pub const AMD_DRIVER_UID: u32 = 0xA112;
    pub const AMD_NEAREST_CPU: u32 = 0xA113;
    pub const AMD_MEMORY_PROPERTIES: u32 = 0xA114;
    pub const AMD_AQL_EXTENSIONS: u32 = 0xA115;
}

/// ROCr's queue count per GPU agent (its `max_queues` default, not the kernel's limit).
const QUEUES_MAX: u32 = 128;

/// `HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR`.
const ROUND_NEAR: u32 = 2;

/// The value of one agent attribute.
#[allow(
    clippy::match_same_arms,
    reason = "one attribute per arm, as the header lists them"
)]
pub fn agent_info(
    machine: &Machine,
    agent: &Agent,
    attribute: u32,
    device: &aqueduct::Device,
) -> Result<Value> {
    use attr as a;
    let gpu = agent.kind == AgentKind::Gpu;
    let gpu_only = |value: Value| {
        if gpu {
            Ok(value)
        } else {
            Err(Error::invalid_argument(format!(
                "attribute {attribute:#x} of a CPU agent"
            )))
        }
    };
    let wavefront = agent.gpu.as_ref().map_or(0, |g| g.wavefront_size);
    let limits = agent.gpu.as_ref().map(|g| g.queues);
    Ok(match attribute {
        a::NAME => Value::chars(&agent.name, 64),
        a::VENDOR_NAME => Value::chars(if gpu { "AMD" } else { "CPU" }, 64),
        // HSA_AGENT_FEATURE_KERNEL_DISPATCH for a GPU; a CPU agent dispatches nothing.
        a::FEATURE => Value::U32(u32::from(gpu)),
        a::MACHINE_MODEL => Value::U32(1),
        // HSA_PROFILE_BASE for a dGPU, FULL for the CPU.
        a::PROFILE => Value::U32(u32::from(!gpu)),
        a::DEFAULT_FLOAT_ROUNDING_MODE | a::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
            Value::U32(ROUND_NEAR)
        }
        a::FAST_F16_OPERATION => Value::Bool(gpu),
        a::WAVEFRONT_SIZE => Value::U32(wavefront),
        a::WORKGROUP_MAX_DIM => {
            let max = if gpu { WORKGROUP_MAX } else { 0 };
            Value::u16s(&[max; 3])
        }
        a::WORKGROUP_MAX_SIZE => Value::U32(if gpu { u32::from(WORKGROUP_MAX) } else { 0 }),
        a::GRID_MAX_DIM => Value::u32s(&[if gpu { u32::MAX } else { 0 }; 3]),
        a::GRID_MAX_SIZE => Value::U32(if gpu { u32::MAX } else { 0 }),
        a::FBARRIER_MAX_SIZE => Value::U32(if gpu { 32 } else { 0 }),
        a::QUEUES_MAX => Value::U32(if gpu { QUEUES_MAX } else { 0 }),
        a::QUEUE_MIN_SIZE => Value::U32(limits.map_or(0, |l| l.min_packets)),
        a::QUEUE_MAX_SIZE => Value::U32(limits.map_or(0, |l| l.max_packets)),
        // HSA_QUEUE_TYPE_MULTI.
        a::QUEUE_TYPE => Value::U32(0),
        a::NODE => Value::U32(agent.node),
        a::DEVICE => Value::U32(u32::from(gpu)),
        a::CACHE_SIZE => Value::u32s(&agent.cache_bytes(device)),
        a::ISA => {
            let isa = agent
                .isa
                .ok_or_else(|| Error::invalid_argument("a CPU agent has no ISA"))?;
            Value::U64(handle_of(isa))
        }
        a::EXTENSIONS => Value::Bytes(crate::api::extension::supported_mask().to_vec()),
        a::VERSION_MAJOR | a::VERSION_MINOR => Value::U16(1),
        a::AMD_CHIP_ID => Value::U32(agent.chip_id),
        a::AMD_CACHELINE_SIZE => Value::U32(64),
        a::AMD_COMPUTE_UNIT_COUNT | a::AMD_COOPERATIVE_COMPUTE_UNIT_COUNT => {
            Value::U32(agent.compute_units)
        }
        a::AMD_MAX_CLOCK_FREQUENCY => Value::U32(agent.max_clock_mhz),
        a::AMD_DRIVER_NODE_ID => Value::U32(agent.node),
        a::AMD_MAX_ADDRESS_WATCH_POINTS => Value::U32(agent.watch_points),
        a::AMD_BDFID => Value::U32(agent.bdfid),
        a::AMD_MEMORY_WIDTH => Value::U32(agent.memory_width),
        a::AMD_MEMORY_MAX_FREQUENCY => Value::U32(agent.memory_max_mhz),
        a::AMD_PRODUCT_NAME => Value::chars(&agent.product_name, 64),
        a::AMD_MAX_WAVES_PER_CU => Value::U32(agent.max_waves_per_cu),
        a::AMD_NUM_SIMDS_PER_CU => Value::U32(agent.simds_per_cu),
        a::AMD_NUM_SHADER_ENGINES => Value::U32(agent.shader_engines),
        a::AMD_NUM_SHADER_ARRAYS_PER_SE => Value::U32(agent.arrays_per_engine),
        // hsa_amd_hdp_flush_t: two register pointers ROCr maps from the render node. aqueduct
        // does not map the HDP registers: null pointers (a client must not flush through them).
        a::AMD_HDP_FLUSH => gpu_only(Value::Bytes(vec![0; 16]))?,
        a::AMD_DOMAIN => Value::U32(agent.domain),
        // Cooperative queues need GWS, which aqueduct does not allocate.
        a::AMD_COOPERATIVE_QUEUES => Value::Bool(false),
        // ROCr writes the text with its NUL; "GPU-" and 16 hex digits, or "CPU-XX".
        a::AMD_UUID => Value::chars(&agent.uuid, agent.uuid.len() + 1),
        a::AMD_ASIC_REVISION => Value::U32(0),
        a::AMD_SVM_DIRECT_HOST_ACCESS => Value::Bool(!gpu),
        a::AMD_MEMORY_AVAIL => gpu_only(Value::U64(
            machine
                .pools
                .iter()
                .filter(|p| p.owner == agent_index(machine, agent) && p.allocatable())
                .map(|p| p.size)
                .sum(),
        ))?,
        a::AMD_TIMESTAMP_FREQUENCY => gpu_only(Value::U64(
            agent.gpu.as_ref().map_or(0, |g| g.timestamp_frequency_hz),
        ))?,
        a::AMD_ASIC_FAMILY_ID => gpu_only(Value::U32(0))?,
        a::AMD_UCODE_VERSION => Value::U32(agent.ucode_version),
        a::AMD_SDMA_UCODE_VERSION => Value::U32(agent.sdma_ucode_version),
        a::AMD_NUM_SDMA_ENG | a::AMD_NUM_SDMA_XGMI_ENG => Value::U32(0),
        // HSA_IOMMU_SUPPORT_NONE.
        a::AMD_IOMMU_SUPPORT => Value::U32(0),
        a::AMD_NUM_XCC => Value::U32(agent.gpu.as_ref().map_or(0, |g| g.xccs)),
        a::AMD_DRIVER_UID => Value::U32(agent.gpu.as_ref().map_or(0, |g| g.gpu_id)),
        a::AMD_NEAREST_CPU => Value::U64(handle_of(0)),
        a::AMD_MEMORY_PROPERTIES => Value::Bytes(vec![0; 8]),
        a::AMD_AQL_EXTENSIONS => Value::Bytes(vec![0; 8]),
        _ => {
            return Err(Error::invalid_argument(format!(
                "unknown agent attribute {attribute:#x}"
            )));
        }
    })
}

fn agent_index(machine: &Machine, agent: &Agent) -> usize {
    machine
        .agents
        .iter()
        .position(|a| a.node == agent.node)
        .unwrap_or(usize::MAX)
}

/// `hsa_iterate_agents`.
///
/// # Safety
///
/// `callback` is null or a function that may be called with `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_iterate_agents(callback: HandleCallback, data: *mut c_void) -> Status {
    entry("hsa_iterate_agents", || {
        let runtime = runtime()?;
        // SAFETY: the exported function's contract.
        unsafe {
            iterate(
                (0..runtime.machine.agents.len()).map(handle_of),
                callback,
                data,
            )
        }
    })
}

/// `hsa_agent_get_info`.
///
/// # Safety
///
/// `value` is null or valid for writes of the attribute's C type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_agent_get_info(
    agent: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    entry("hsa_agent_get_info", || {
        let runtime = runtime()?;
        let machine = &runtime.machine;
        let agent = machine
            .agent(agent)
            .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
        let v = agent_info(machine, agent, attribute, &runtime.device)?;
        // SAFETY: the caller's contract.
        unsafe { answer(&v, value) }
    })
}

/// `hsa_agent_iterate_isas`.
///
/// # Safety
///
/// `callback` is null or a function that may be called with `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_agent_iterate_isas(
    agent: u64,
    callback: HandleCallback,
    data: *mut c_void,
) -> Status {
    entry("hsa_agent_iterate_isas", || {
        let runtime = runtime()?;
        let agent = runtime
            .machine
            .agent(agent)
            .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
        // SAFETY: the exported function's contract.
        unsafe { iterate(agent.isa.map(handle_of), callback, data) }
    })
}

/// `hsa_agent_iterate_regions`.
///
/// # Safety
///
/// `callback` is null or a function that may be called with `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_agent_iterate_regions(
    agent: u64,
    callback: HandleCallback,
    data: *mut c_void,
) -> Status {
    entry("hsa_agent_iterate_regions", || {
        let runtime = runtime()?;
        let agent = runtime
            .machine
            .agent(agent)
            .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
        // SAFETY: the exported function's contract.
        unsafe { iterate(agent.regions.iter().copied().map(handle_of), callback, data) }
    })
}

/// `hsa_amd_agent_iterate_memory_pools`.
///
/// # Safety
///
/// `callback` is null or a function that may be called with `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_agent_iterate_memory_pools(
    agent: u64,
    callback: HandleCallback,
    data: *mut c_void,
) -> Status {
    entry("hsa_amd_agent_iterate_memory_pools", || {
        let runtime = runtime()?;
        let agent = runtime
            .machine
            .agent(agent)
            .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
        // SAFETY: the exported function's contract.
        unsafe { iterate(agent.pools.iter().copied().map(handle_of), callback, data) }
    })
}
