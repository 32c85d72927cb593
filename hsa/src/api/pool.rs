//! Memory pools and regions: their info attributes (ROCr's values) and how agents reach them.
//! In ROCr a region and a memory pool are the same object; here they share handles too.

use std::ffi::c_void;

use crate::error::{Error, Result, entry};
use crate::model::{AgentKind, Machine, Pool, Segment, index_of};
use crate::runtime::runtime;
use crate::status::Status;
use crate::value::{Value, answer};

/// The allocation granule and alignment ROCr reports for every allocatable pool: a page.
pub const GRANULE: u64 = 4096;

/// `HSA_AMD_MEMORY_POOL_INFO_*`.
mod pool_attribute {
    pub const SEGMENT: u32 = 0;
    pub const GLOBAL_FLAGS: u32 = 1;
    pub const SIZE: u32 = 2;
    pub const RUNTIME_ALLOC_ALLOWED: u32 = 5;
    pub const RUNTIME_ALLOC_GRANULE: u32 = 6;
    pub const RUNTIME_ALLOC_ALIGNMENT: u32 = 7;
    pub const ACCESSIBLE_BY_ALL: u32 = 15;
    pub const ALLOC_MAX_SIZE: u32 = 16;
    pub const LOCATION: u32 = 17;
    pub const RUNTIME_ALLOC_REC_GRANULE: u32 = 18;
}

/// `HSA_REGION_INFO_*` and `HSA_AMD_REGION_INFO_*`.
mod region_attribute {
    pub const SEGMENT: u32 = 0;
    pub const GLOBAL_FLAGS: u32 = 1;
    pub const SIZE: u32 = 2;
    pub const ALLOC_MAX_SIZE: u32 = 4;
    pub const RUNTIME_ALLOC_ALLOWED: u32 = 5;
    pub const RUNTIME_ALLOC_GRANULE: u32 = 6;
    pub const RUNTIME_ALLOC_ALIGNMENT: u32 = 7;
    pub const ALLOC_MAX_PRIVATE_WORKGROUP_SIZE: u32 = 8;
    pub const AMD_HOST_ACCESSIBLE: u32 = 0xA000;
    pub const AMD_BASE: u32 = 0xA001;
    pub const AMD_BUS_WIDTH: u32 = 0xA002;
    pub const AMD_MAX_CLOCK_FREQUENCY: u32 = 0xA003;
}

/// `HSA_AMD_SEGMENT_*` / `HSA_REGION_SEGMENT_*` of a pool.
fn segment_number(pool: &Pool) -> u32 {
    match pool.segment {
        Segment::Global => 0,
        Segment::Group => 3,
    }
}

/// The value of one memory-pool attribute.
pub fn pool_info(machine: &Machine, pool: &Pool, attribute: u32) -> Result<Value> {
    use pool_attribute as a;
    let allocatable = pool.allocatable();
    let granule = if allocatable { GRANULE } else { 0 };
    Ok(match attribute {
        a::SEGMENT => Value::U32(segment_number(pool)),
        a::GLOBAL_FLAGS => Value::U32(pool.global_flags()),
        a::SIZE => Value::U64(pool.size),
        a::RUNTIME_ALLOC_ALLOWED => Value::Bool(allocatable),
        a::RUNTIME_ALLOC_GRANULE | a::RUNTIME_ALLOC_ALIGNMENT | a::RUNTIME_ALLOC_REC_GRANULE => {
            Value::U64(granule)
        }
        // System memory is reachable by every agent; a GPU's memory only by its own.
        a::ACCESSIBLE_BY_ALL => Value::Bool(pool.is_host()),
        a::ALLOC_MAX_SIZE => Value::U64(if allocatable { pool.size } else { 0 }),
        // HSA_AMD_MEMORY_POOL_LOCATION_CPU = 0, _GPU = 1.
        a::LOCATION => Value::U32(u32::from(
            machine.agents.get(pool.owner).map(|a| a.kind) == Some(AgentKind::Gpu),
        )),
        _ => {
            return Err(Error::invalid_argument(format!(
                "unknown memory pool attribute {attribute:#x}"
            )));
        }
    })
}

/// The value of one region attribute.
pub fn region_info(machine: &Machine, pool: &Pool, attribute: u32) -> Result<Value> {
    use region_attribute as a;
    let owner = machine.agents.get(pool.owner);
    Ok(match attribute {
        a::SEGMENT => Value::U32(segment_number(pool)),
        a::GLOBAL_FLAGS => Value::U32(pool.global_flags()),
        a::SIZE => Value::U64(pool.size),
        a::ALLOC_MAX_SIZE => Value::U64(if pool.allocatable() { pool.size } else { 0 }),
        a::RUNTIME_ALLOC_ALLOWED => Value::Bool(pool.allocatable()),
        a::RUNTIME_ALLOC_GRANULE | a::RUNTIME_ALLOC_ALIGNMENT => {
            Value::U64(if pool.allocatable() { GRANULE } else { 0 })
        }
        a::ALLOC_MAX_PRIVATE_WORKGROUP_SIZE => Value::U32(0),
        a::AMD_HOST_ACCESSIBLE => Value::Bool(
            pool.is_host()
                || owner
                    .and_then(|a| a.gpu.as_ref())
                    .is_some_and(|g| g.large_bar),
        ),
        a::AMD_BASE => Value::U64(0),
        a::AMD_BUS_WIDTH => Value::U32(owner.map_or(0, |a| a.memory_width)),
        a::AMD_MAX_CLOCK_FREQUENCY => Value::U32(owner.map_or(0, |a| a.memory_max_mhz)),
        _ => {
            return Err(Error::invalid_argument(format!(
                "unknown region attribute {attribute:#x}"
            )));
        }
    })
}

/// `HSA_AMD_AGENT_MEMORY_POOL_INFO_*`.
mod agent_pool_attribute {
    pub const ACCESS: u32 = 0;
    pub const NUM_LINK_HOPS: u32 = 1;
    pub const LINK_INFO: u32 = 2;
}

/// `hsa_amd_memory_pool_access_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Access {
    /// `HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED`.
    Never = 0,
    /// `HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT`.
    ByDefault = 1,
    /// `HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT`: `hsa_amd_agents_allow_access` first.
    AfterAllow = 2,
}

/// How `agent` may reach `pool`, as ROCr answers: its own pools and system memory by default,
/// another GPU's memory after `hsa_amd_agents_allow_access`, group memory only its owner's.
/// The CPU never reaches the VRAM of a GPU whose BAR does not cover it (small BAR): HIP reads
/// exactly this answer to decide whether it may copy to and from VRAM with the CPU.
pub fn access(machine: &Machine, agent: usize, pool: &Pool) -> Access {
    if pool.owner == agent {
        return Access::ByDefault;
    }
    match pool.segment {
        Segment::Group => Access::Never,
        Segment::Global if pool.is_host() => Access::ByDefault,
        Segment::Global => match machine.agents.get(agent).map(|a| a.kind) {
            Some(AgentKind::Cpu)
                if !machine
                    .agents
                    .get(pool.owner)
                    .and_then(|owner| owner.gpu.as_ref())
                    .is_some_and(|gpu| gpu.large_bar) =>
            {
                Access::Never
            }
            Some(_) => Access::AfterAllow,
            None => Access::Never,
        },
    }
}

/// `hsa_amd_memory_pool_link_info_t`, one hop (32 bytes: four uint32_t, a link type, then
/// three bools padded to 4 bytes... laid out as ROCr's header: min/max latency, min/max
/// bandwidth, atomic support 32/64, coherent, link type, numa distance).
fn link_info(machine: &Machine, agent: usize, pool: &Pool) -> Vec<u8> {
    let same = pool.owner == agent;
    let host = pool.is_host() || machine.agents.get(agent).map(|a| a.kind) == Some(AgentKind::Cpu);
    let mut bytes = Vec::with_capacity(32);
    for v in [0u32; 4] {
        bytes.extend_from_slice(&v.to_ne_bytes());
    }
    // HSA_AMD_LINK_INFO_TYPE_PCIE = 1 between host and GPU (XGMI = 4 between hive GPUs).
    let link_type: u32 = if same {
        0
    } else if host {
        1
    } else {
        4
    };
    bytes.extend_from_slice(&link_type.to_ne_bytes());
    bytes.extend_from_slice(&[1, 1, 0, 0]);
    let numa_distance: u32 = if same { 0 } else { 20 };
    bytes.extend_from_slice(&numa_distance.to_ne_bytes());
    bytes.resize(32, 0);
    bytes
}

/// The value of one agent-pool attribute.
pub fn agent_pool_info(
    machine: &Machine,
    agent: usize,
    pool: &Pool,
    attribute: u32,
) -> Result<Value> {
    use agent_pool_attribute as a;
    let reach = access(machine, agent, pool);
    Ok(match attribute {
        a::ACCESS => Value::U32(reach as u32),
        a::NUM_LINK_HOPS => Value::U32(u32::from(pool.owner != agent && reach != Access::Never)),
        a::LINK_INFO => {
            if pool.owner == agent || reach == Access::Never {
                Value::Bytes(Vec::new())
            } else {
                Value::Bytes(link_info(machine, agent, pool))
            }
        }
        _ => {
            return Err(Error::invalid_argument(format!(
                "unknown agent-pool attribute {attribute:#x}"
            )));
        }
    })
}

fn pool_of(machine: &Machine, handle: u64, status: Status) -> Result<&Pool> {
    machine
        .pool(handle)
        .ok_or_else(|| Error::new(status, "unknown memory pool"))
}

/// `hsa_amd_memory_pool_get_info`.
///
/// # Safety
///
/// `value` is null or valid for writes of the attribute's C type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_memory_pool_get_info(
    memory_pool: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    entry("hsa_amd_memory_pool_get_info", || {
        let runtime = runtime()?;
        let machine = &runtime.machine;
        let pool = pool_of(machine, memory_pool, Status::INVALID_ARGUMENT)?;
        let v = pool_info(machine, pool, attribute)?;
        // SAFETY: the caller's contract.
        unsafe { answer(&v, value) }
    })
}

/// `hsa_region_get_info`.
///
/// # Safety
///
/// `value` is null or valid for writes of the attribute's C type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_region_get_info(
    region: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    entry("hsa_region_get_info", || {
        let runtime = runtime()?;
        let machine = &runtime.machine;
        let pool = pool_of(machine, region, Status::INVALID_REGION)?;
        let v = region_info(machine, pool, attribute)?;
        // SAFETY: the caller's contract.
        unsafe { answer(&v, value) }
    })
}

/// `hsa_amd_agent_memory_pool_get_info`.
///
/// # Safety
///
/// `value` is null or valid for writes of the attribute's C type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_agent_memory_pool_get_info(
    agent: u64,
    memory_pool: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    entry("hsa_amd_agent_memory_pool_get_info", || {
        let runtime = runtime()?;
        let machine = &runtime.machine;
        let index = index_of(agent)
            .filter(|&i| i < machine.agents.len())
            .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
        let pool = pool_of(machine, memory_pool, Status::INVALID_ARGUMENT)?;
        let v = agent_pool_info(machine, index, pool, attribute)?;
        if let Value::Bytes(bytes) = &v
            && bytes.is_empty()
        {
            return Ok(Status::SUCCESS);
        }
        // SAFETY: the caller's contract.
        unsafe { answer(&v, value) }
    })
}
