//! Memory: allocation from pools and regions, access for other agents, synchronous copies and
//! fills, locking the program's memory, and pointer info. `hsa_memory_copy` and
//! `hsa_amd_memory_fill` run on the CPU over host-visible memory (or through the safe API's
//! buffer reads and writes where the CPU cannot map it); the asynchronous copies are in
//! `async_copy`, on the copy engines.

use std::ffi::c_void;

use aqueduct::{Buffer, GpuAgent};

use crate::error::{Error, Result, entry};
use crate::model::{handle_of, index_of};
use crate::objects::memory::Allocation;
use crate::runtime::{Runtime, runtime};
use crate::status::Status;

/// Allocate `size` bytes from the pool of `handle`.
fn allocate(runtime: &Runtime, pool: u64, size: usize) -> Result<u64> {
    let machine = &runtime.machine;
    let index = index_of(pool)
        .filter(|&i| i < machine.pools.len())
        .ok_or_else(|| Error::invalid_argument("unknown memory pool"))?;
    let info = &machine.pools[index];
    let location = info.location.ok_or_else(|| {
        Error::new(
            Status::INVALID_ALLOCATION,
            "group memory is not allocatable",
        )
    })?;
    if size == 0 {
        return Err(Error::invalid_argument("an allocation of 0 bytes"));
    }
    if size as u64 > info.size {
        return Err(Error::new(
            Status::INVALID_ALLOCATION,
            "larger than the pool",
        ));
    }
    // System memory is mapped on every GPU; a GPU's own memory on that GPU.
    let owner = &machine.agents[info.owner];
    let gpu = match &owner.gpu {
        Some(gpu) => gpu.clone(),
        None => machine
            .agents
            .iter()
            .find_map(|a| a.gpu.clone())
            .ok_or_else(|| Error::new(Status::INVALID_ALLOCATION, "no GPU to map memory on"))?,
    };
    let buffer = runtime.device.alloc(&gpu, location, size)?;
    let address = buffer.gpu_address();
    runtime.objects.memory.lock().insert(
        address,
        Allocation {
            buffer,
            pool: Some(index),
            locks: 0,
        },
    );
    Ok(address)
}

/// Free the allocation at `ptr`; freeing null does nothing, as in ROCr (HIP frees null).
fn free(runtime: &Runtime, ptr: *mut c_void) -> Result<Status> {
    if ptr.is_null() {
        return Ok(Status::SUCCESS);
    }
    runtime
        .objects
        .memory
        .lock()
        .remove(&(ptr as u64))
        .ok_or_else(|| Error::invalid_argument(format!("{ptr:p} was not allocated here")))?;
    Ok(Status::SUCCESS)
}

/// `hsa_amd_memory_pool_allocate`.
///
/// # Safety
///
/// `ptr` is null or valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_memory_pool_allocate(
    memory_pool: u64,
    size: usize,
    _flags: u32,
    ptr: *mut *mut c_void,
) -> Status {
    entry("hsa_amd_memory_pool_allocate", || {
        let runtime = runtime()?;
        if ptr.is_null() {
            return Err(Error::invalid_argument("null ptr"));
        }
        let address = allocate(&runtime, memory_pool, size)?;
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { ptr.write(address as *mut c_void) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_memory_pool_free`.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_amd_memory_pool_free(ptr: *mut c_void) -> Status {
    entry("hsa_amd_memory_pool_free", || free(&*runtime()?, ptr))
}

/// `hsa_memory_allocate`.
///
/// # Safety
///
/// `ptr` is null or valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_memory_allocate(
    region: u64,
    size: usize,
    ptr: *mut *mut c_void,
) -> Status {
    entry("hsa_memory_allocate", || {
        let runtime = runtime()?;
        if ptr.is_null() {
            return Err(Error::invalid_argument("null ptr"));
        }
        if runtime.machine.pool(region).is_none() {
            return Err(Error::new(Status::INVALID_REGION, "unknown region"));
        }
        let address = allocate(&runtime, region, size)?;
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { ptr.write(address as *mut c_void) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_memory_free`.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_memory_free(ptr: *mut c_void) -> Status {
    entry("hsa_memory_free", || free(&*runtime()?, ptr))
}

/// `hsa_amd_agents_allow_access`: map an allocation on the GPUs among `agents` (CPU agents
/// reach system memory already).
///
/// # Safety
///
/// `agents` is null or points to `num_agents` handles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_agents_allow_access(
    num_agents: u32,
    agents: *const u64,
    _flags: *const u32,
    ptr: *const c_void,
) -> Status {
    entry("hsa_amd_agents_allow_access", || {
        let runtime = runtime()?;
        if agents.is_null() || num_agents == 0 || ptr.is_null() {
            return Err(Error::invalid_argument("no agents or a null pointer"));
        }
        // SAFETY: `agents` points to `num_agents` handles by the caller's contract.
        let handles = unsafe { std::slice::from_raw_parts(agents, num_agents as usize) };
        let mut gpus: Vec<&GpuAgent> = Vec::new();
        for &handle in handles {
            let agent = runtime
                .machine
                .agent(handle)
                .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
            if let Some(gpu) = &agent.gpu {
                gpus.push(gpu);
            }
        }
        let (allocation, _) = runtime
            .objects
            .memory
            .containing(ptr as u64)
            .ok_or_else(|| Error::invalid_argument(format!("{ptr:p} was not allocated here")))?;
        if !gpus.is_empty() {
            allocation.buffer.allow_access(&gpus)?;
        }
        Ok(Status::SUCCESS)
    })
}

/// Where one end of a copy is: inside an allocation, or plain host memory of the program.
enum Place {
    Buffer(Buffer, usize),
    Host(*mut u8),
}

fn place(runtime: &Runtime, address: u64) -> Place {
    match runtime.objects.memory.containing(address) {
        Some((allocation, offset)) => Place::Buffer(allocation.buffer, offset),
        None => Place::Host(address as *mut u8),
    }
}

/// The CPU address of a place, where the CPU maps it.
fn host_address(place: &Place) -> Result<Option<*mut u8>> {
    Ok(match place {
        Place::Host(p) => Some(*p),
        Place::Buffer(buffer, offset) => {
            // SAFETY: the address is used only for this copy, while the allocation is held.
            unsafe { buffer.host_ptr() }?.map(|p| p.as_ptr().wrapping_add(*offset))
        }
    })
}

/// Copy `size` bytes from `src` to `dst` on the CPU.
///
/// # Safety
///
/// Each of `dst` and `src` is inside one allocation of this runtime with `size` bytes after
/// it, or host memory of the program valid for `size` bytes.
pub(crate) unsafe fn copy(runtime: &Runtime, dst: u64, src: u64, size: usize) -> Result<()> {
    if size == 0 {
        return Ok(());
    }
    let (to, from) = (place(runtime, dst), place(runtime, src));
    for p in [&to, &from] {
        if let Place::Buffer(buffer, offset) = p
            && offset + size > buffer.len()
        {
            return Err(Error::invalid_argument("the copy runs past the allocation"));
        }
    }
    if let (Some(d), Some(s)) = (host_address(&to)?, host_address(&from)?) {
        {
            // SAFETY: both ranges are valid for `size` bytes (checked for allocations, the
            // caller's contract for host memory); `copy` allows overlap.
            unsafe { std::ptr::copy(s, d, size) };
        }
    } else {
        {
            // Memory the CPU does not map: through the safe API's reads and writes.
            let mut bytes = vec![0u8; size];
            match &from {
                Place::Buffer(buffer, offset) => buffer.read(*offset, &mut bytes)?,
                // SAFETY: host memory valid for `size` bytes by the caller's contract.
                Place::Host(p) => unsafe {
                    std::ptr::copy_nonoverlapping(*p, bytes.as_mut_ptr(), size);
                },
            }
            match &to {
                Place::Buffer(buffer, offset) => buffer.write(*offset, &bytes)?,
                // SAFETY: as above.
                Place::Host(p) => unsafe {
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), *p, size);
                },
            }
        }
    }
    Ok(())
}

/// `hsa_memory_copy`.
///
/// # Safety
///
/// As ROCr's: `dst` and `src` are valid for `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_memory_copy(
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
) -> Status {
    entry("hsa_memory_copy", || {
        let runtime = runtime()?;
        if dst.is_null() || src.is_null() {
            return Err(Error::invalid_argument("null pointer"));
        }
        // SAFETY: the caller's contract.
        unsafe { copy(&runtime, dst as u64, src as u64, size) }?;
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_memory_fill`: `count` 32-bit words of `value` from `ptr` (4-byte aligned).
#[unsafe(no_mangle)]
pub extern "C" fn hsa_amd_memory_fill(ptr: *mut c_void, value: u32, count: usize) -> Status {
    entry("hsa_amd_memory_fill", || {
        let runtime = runtime()?;
        if ptr.is_null() || (ptr as usize) % 4 != 0 {
            return Err(Error::invalid_argument("a null or unaligned pointer"));
        }
        let bytes = count
            .checked_mul(4)
            .ok_or_else(|| Error::invalid_argument("count overflows"))?;
        let target = place(&runtime, ptr as u64);
        if let Place::Buffer(buffer, offset) = &target
            && offset + bytes > buffer.len()
        {
            return Err(Error::invalid_argument("the fill runs past the allocation"));
        }
        match (host_address(&target)?, &target) {
            (Some(p), _) => {
                for i in 0..count {
                    // SAFETY: inside the allocation (checked) or the program's host memory of
                    // `count` words (ROCr's contract); 4-byte aligned.
                    #[allow(clippy::cast_ptr_alignment, reason = "checked 4-byte aligned above")]
                    unsafe {
                        p.cast::<u32>().add(i).write_volatile(value);
                    }
                }
            }
            (None, Place::Buffer(buffer, offset)) => {
                buffer.write(*offset, &vec![value; count])?;
            }
            (None, Place::Host(_)) => unreachable!("host memory always has an address"),
        }
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_pointer_info_t` (ROCr 5.2 layout: size, type, agent and host base addresses, size
/// in bytes, user data, owning agent, the pool's global flags).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PointerInfo {
    /// Bytes of the struct the caller knows (in), of ours (out).
    pub size: u32,
    /// `hsa_amd_pointer_type_t`: 0 unknown, 1 HSA, 2 locked.
    pub kind: u32,
    /// The allocation's start as agents see it.
    pub agent_base_address: *mut c_void,
    /// The allocation's start as the host sees it.
    pub host_base_address: *mut c_void,
    /// The allocation's size.
    pub size_in_bytes: usize,
    /// What the program attached (nothing here).
    pub user_data: *mut c_void,
    /// The agent that owns the memory.
    pub agent_owner: u64,
    /// The `HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_*` of the pool it came from.
    pub global_flags: u32,
}

/// `hsa_amd_pointer_info`: what the runtime knows of the allocation holding `ptr`; the list of
/// agents that can reach it is all GPUs it is mapped on (every GPU for system memory).
///
/// # Safety
///
/// `info` is null or points to an `hsa_amd_pointer_info_t` whose `size` says how much of it
/// may be written; `num_agents_accessible` and `accessible` are null or valid for one write,
/// and `alloc` (when `accessible` is not null) returns memory for the list or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_pointer_info(
    ptr: *const c_void,
    info: *mut PointerInfo,
    alloc: Option<unsafe extern "C" fn(usize) -> *mut c_void>,
    num_agents_accessible: *mut u32,
    accessible: *mut *mut u64,
) -> Status {
    entry("hsa_amd_pointer_info", || {
        let runtime = runtime()?;
        if info.is_null() {
            return Err(Error::invalid_argument("null info"));
        }
        // SAFETY: `info` points to a struct with at least its `size` field.
        let caller_size = unsafe { (*info).size } as usize;
        let mut out = PointerInfo {
            size: std::mem::size_of::<PointerInfo>() as u32,
            kind: 0,
            agent_base_address: std::ptr::null_mut(),
            host_base_address: std::ptr::null_mut(),
            size_in_bytes: 0,
            user_data: std::ptr::null_mut(),
            agent_owner: 0,
            global_flags: 0,
        };
        let mut reach: Vec<u64> = Vec::new();
        if let Some((allocation, offset)) = runtime.objects.memory.containing(ptr as u64) {
            let base = (ptr as u64 - offset as u64) as *mut c_void;
            out.agent_base_address = base;
            out.host_base_address = base;
            out.size_in_bytes = allocation.buffer.len();
            let machine = &runtime.machine;
            if let Some(pool) = allocation.pool.map(|p| &machine.pools[p]) {
                out.kind = 1;
                out.agent_owner = handle_of(pool.owner);
                out.global_flags = pool.global_flags();
                reach = (0..machine.agents.len())
                    .filter(|&i| pool.is_host() || i == pool.owner)
                    .map(handle_of)
                    .collect();
            } else {
                // HSA_EXT_POINTER_TYPE_LOCKED: the program's memory, owned by the CPU, reached
                // by every agent (aqueduct maps it on the GPUs the lock named).
                out.kind = 2;
                out.agent_owner = handle_of(0);
                reach = (0..machine.agents.len()).map(handle_of).collect();
            }
        }
        let n = caller_size.min(std::mem::size_of::<PointerInfo>());
        // SAFETY: the caller's struct has `caller_size` bytes; we write at most that many.
        unsafe {
            std::ptr::copy_nonoverlapping((&raw const out).cast::<u8>(), info.cast::<u8>(), n);
        }
        if !num_agents_accessible.is_null() {
            // SAFETY: valid for one write by the caller's contract.
            unsafe { num_agents_accessible.write(reach.len() as u32) };
        }
        if !accessible.is_null() {
            let alloc =
                alloc.ok_or_else(|| Error::invalid_argument("no allocator for the list"))?;
            // SAFETY: the caller's allocator, asked for the list's bytes.
            let list = unsafe { alloc(reach.len() * 8) }.cast::<u64>();
            if list.is_null() && !reach.is_empty() {
                return Err(Error::new(
                    Status::OUT_OF_RESOURCES,
                    "the allocator returned null",
                ));
            }
            // SAFETY: `list` holds `reach.len()` handles (just allocated).
            unsafe {
                std::ptr::copy_nonoverlapping(reach.as_ptr(), list, reach.len());
                accessible.write(list);
            }
        }
        Ok(Status::SUCCESS)
    })
}

/// Lock `size` bytes of the program's memory at `host_ptr` for the GPUs among `agents` (all
/// GPUs when there are none): the GPUs reach it at its own address.
///
/// # Safety
///
/// `agents` is null or points to `num_agents` handles; the memory stays mapped until unlocked.
unsafe fn lock(
    host_ptr: *mut c_void,
    size: usize,
    agents: *const u64,
    num_agents: i32,
    agent_ptr: *mut *mut c_void,
) -> Result<Status> {
    let runtime = runtime()?;
    let Some(address) = std::ptr::NonNull::new(host_ptr.cast::<u8>()) else {
        return Err(Error::invalid_argument("a null host pointer"));
    };
    if size == 0 || agent_ptr.is_null() {
        return Err(Error::invalid_argument("0 bytes or a null agent pointer"));
    }
    let handles: Vec<u64> = if agents.is_null() || num_agents <= 0 {
        Vec::new()
    } else {
        // SAFETY: `num_agents` handles by the caller's contract.
        unsafe { std::slice::from_raw_parts(agents, num_agents as usize) }.to_vec()
    };
    let mut gpus: Vec<&GpuAgent> = Vec::new();
    for handle in &handles {
        let agent = runtime
            .machine
            .agent(*handle)
            .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
        gpus.extend(agent.gpu.as_ref());
    }
    if gpus.is_empty() {
        gpus = runtime
            .machine
            .agents
            .iter()
            .filter_map(|a| a.gpu.as_ref())
            .collect();
    }
    // A range inside one already locked is counted, not registered again: ROCr (libhsakmt)
    // counts registrations of a range it has, and HIP locks a pageable range a second time
    // when its first try at a copy fails (a rectangle ROCr refuses). Registering again would
    // map the same pages at the same GPU address twice, which the kernel refuses (EINVAL,
    // an overlapping mapping). The table stays locked across the registration so that two
    // threads locking one range do not both register it.
    let mut map = runtime.objects.memory.lock();
    let page_start = (host_ptr as u64) & !0xFFF;
    let held = map
        .range_mut(..=page_start)
        .next_back()
        .filter(|(start, a)| {
            a.pool.is_none() && host_ptr as u64 + size as u64 <= **start + a.buffer.len() as u64
        });
    if let Some((_, allocation)) = held {
        allocation.locks += 1;
    } else {
        // SAFETY: the program keeps the memory mapped until it unlocks it (HSA's contract).
        let buffer = unsafe { runtime.device.register_host_memory(&gpus, address, size) }?;
        map.insert(
            buffer.gpu_address(),
            Allocation {
                buffer,
                pool: None,
                locks: 1,
            },
        );
    }
    drop(map);
    // SAFETY: non-null, valid for one write by the caller's contract.
    unsafe { agent_ptr.write(host_ptr) };
    Ok(Status::SUCCESS)
}

/// `hsa_amd_memory_lock`.
///
/// # Safety
///
/// As ROCr's: `agents` points to `num_agent` handles or is null; `agent_ptr` is valid for one
/// write; the memory stays mapped until unlocked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_memory_lock(
    host_ptr: *mut c_void,
    size: usize,
    agents: *const u64,
    num_agent: i32,
    agent_ptr: *mut *mut c_void,
) -> Status {
    // SAFETY: the caller's contract.
    entry("hsa_amd_memory_lock", || unsafe {
        lock(host_ptr, size, agents, num_agent, agent_ptr)
    })
}

/// `hsa_amd_memory_lock_to_pool`: the pool does not change where the pages are (they are the
/// program's).
///
/// # Safety
///
/// As [`hsa_amd_memory_lock`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_memory_lock_to_pool(
    host_ptr: *mut c_void,
    size: usize,
    agents: *const u64,
    num_agent: i32,
    _pool: u64,
    _flags: u32,
    agent_ptr: *mut *mut c_void,
) -> Status {
    // SAFETY: the caller's contract.
    entry("hsa_amd_memory_lock_to_pool", || unsafe {
        lock(host_ptr, size, agents, num_agent, agent_ptr)
    })
}

/// `hsa_amd_memory_unlock`: one lock less on the range holding `host_ptr`; the last one
/// unregisters it.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_amd_memory_unlock(host_ptr: *mut c_void) -> Status {
    entry("hsa_amd_memory_unlock", || {
        let runtime = runtime()?;
        let mut map = runtime.objects.memory.lock();
        let address = host_ptr as u64;
        let (&start, allocation) = map
            .range_mut(..=address)
            .next_back()
            .filter(|(start, a)| a.pool.is_none() && address < **start + a.buffer.len() as u64)
            .ok_or_else(|| Error::invalid_argument(format!("{host_ptr:p} is not locked")))?;
        allocation.locks -= 1;
        if allocation.locks == 0 {
            map.remove(&start);
        }
        Ok(Status::SUCCESS)
    })
}
