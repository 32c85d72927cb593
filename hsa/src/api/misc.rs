//! The small functions around the core: caches, exception policies, rounding, extension
//! names, no-op memory registration, coherency, queue CU masks and priority, and waiting on
//! any of several signals.

use std::ffi::{CStr, c_char, c_void};
use std::time::{Duration, Instant};

use aqueduct::{Condition, MemoryOrder};

use crate::api::agent::{HandleCallback, iterate};
use crate::error::{Error, entry};
use crate::model::index_of;
use crate::runtime::runtime;
use crate::status::Status;
use crate::value::{Value, answer};

/// A cache handle: the agent's index and the level (1..=4).
fn cache_handle(agent: usize, level: usize) -> u64 {
    ((agent as u64) << 8 | level as u64) + 1
}

/// `hsa_agent_iterate_caches`: one cache per level the topology lists.
///
/// # Safety
///
/// `callback` is null or a function that may be called with `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_agent_iterate_caches(
    agent: u64,
    callback: HandleCallback,
    data: *mut c_void,
) -> Status {
    entry("hsa_agent_iterate_caches", || {
        let runtime = runtime()?;
        let index = index_of(agent)
            .filter(|&i| i < runtime.machine.agents.len())
            .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
        let sizes = runtime.machine.agents[index].cache_bytes(&runtime.device);
        let handles: Vec<u64> = (1..=4)
            .filter(|&level| sizes[level - 1] != 0)
            .map(|level| cache_handle(index, level))
            .collect();
        // SAFETY: the caller's contract.
        unsafe { iterate(handles, callback, data) }
    })
}

/// `hsa_cache_get_info`: `HSA_CACHE_INFO_NAME_LENGTH`, `_NAME`, `_LEVEL` (`uint8_t`), `_SIZE`.
///
/// # Safety
///
/// `value` is null or valid for writes of the attribute's C type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_cache_get_info(
    cache: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    entry("hsa_cache_get_info", || {
        let runtime = runtime()?;
        let raw = cache
            .checked_sub(1)
            .ok_or_else(|| Error::new(Status::INVALID_CACHE, "cache 0"))?;
        let (agent, level) = ((raw >> 8) as usize, (raw & 0xff) as usize);
        let size = runtime
            .machine
            .agents
            .get(agent)
            .and_then(|a| {
                (1..=4)
                    .contains(&level)
                    .then(|| a.cache_bytes(&runtime.device)[level - 1])
            })
            .filter(|&s| s != 0)
            .ok_or_else(|| Error::new(Status::INVALID_CACHE, "unknown cache"))?;
        let name = format!("L{level}");
        let v = match attribute {
            0 => Value::U32(name.len() as u32),
            1 => Value::Bytes(name.into_bytes()),
            2 => Value::Bytes(vec![level as u8]),
            3 => Value::U32(size),
            _ => return Err(Error::invalid_argument("unknown cache attribute")),
        };
        // SAFETY: the caller's contract.
        unsafe { answer(&v, value) }
    })
}

/// `hsa_agent_get_exception_policies` / `hsa_isa_get_exception_policies`: no policy (ROCr
/// reports none for HSAIL exceptions either).
///
/// # Safety
///
/// `mask` is null or valid for one `uint16_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_agent_get_exception_policies(
    _agent: u64,
    _profile: u32,
    mask: *mut u16,
) -> Status {
    entry("hsa_agent_get_exception_policies", || {
        runtime()?;
        if mask.is_null() {
            return Err(Error::invalid_argument("null mask"));
        }
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { mask.write(0) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_isa_get_exception_policies`.
///
/// # Safety
///
/// `mask` is null or valid for one `uint16_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_isa_get_exception_policies(
    isa: u64,
    profile: u32,
    mask: *mut u16,
) -> Status {
    // SAFETY: the same contract.
    unsafe { hsa_agent_get_exception_policies(isa, profile, mask) }
}

/// `hsa_isa_get_round_method`: round to nearest (`HSA_ROUND_METHOD_SINGLE`, 1).
///
/// # Safety
///
/// `round_method` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_isa_get_round_method(
    _isa: u64,
    _fp_type: u32,
    _flush_mode: u32,
    round_method: *mut u32,
) -> Status {
    entry("hsa_isa_get_round_method", || {
        runtime()?;
        if round_method.is_null() {
            return Err(Error::invalid_argument("null round method"));
        }
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { round_method.write(1) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_extension_get_name`.
///
/// # Safety
///
/// `name` is null or valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_extension_get_name(
    extension: u16,
    name: *mut *const c_char,
) -> Status {
    entry("hsa_extension_get_name", || {
        runtime()?;
        let text: &CStr = match extension {
            0 => c"HSA_EXTENSION_FINALIZER",
            1 => c"HSA_EXTENSION_IMAGES",
            2 => c"HSA_EXTENSION_PERFORMANCE_COUNTERS",
            3 => c"HSA_EXTENSION_PROFILING_EVENTS",
            0x200 => c"HSA_EXTENSION_AMD_PROFILER",
            0x201 => c"HSA_EXTENSION_AMD_LOADER",
            0x202 => c"HSA_EXTENSION_AMD_AQLPROFILE",
            _ => return Err(Error::invalid_argument("unknown extension")),
        };
        if name.is_null() {
            return Err(Error::invalid_argument("null name"));
        }
        // SAFETY: non-null, valid for one write; the text is static.
        unsafe { name.write(text.as_ptr()) };
        Ok(Status::SUCCESS)
    })
}

macro_rules! no_ops {
    ($($name:ident => $why:literal;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: ", $why, ".")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() -> Status {
            entry(stringify!($name), || {
                runtime()?;
                Ok(Status::SUCCESS)
            })
        }
    )*};
}

no_ops! {
    hsa_memory_register => "nothing to do: GPUs reach memory through allocations, locks and pools (ROCr's is a no-op on dGPUs too)";
    hsa_memory_deregister => "nothing to do (see hsa_memory_register)";
    hsa_memory_assign_agent => "nothing to do: ownership does not move memory";
    hsa_amd_coherency_set_type => "host memory is always coherent here";
}

/// `hsa_amd_coherency_get_type`: `HSA_AMD_COHERENCY_TYPE_COHERENT` (0).
///
/// # Safety
///
/// `coherency_type` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_coherency_get_type(
    _agent: u64,
    coherency_type: *mut u32,
) -> Status {
    entry("hsa_amd_coherency_get_type", || {
        runtime()?;
        if coherency_type.is_null() {
            return Err(Error::invalid_argument("null type"));
        }
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { coherency_type.write(0) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_memory_pool_can_migrate`: no (migration is not served).
///
/// # Safety
///
/// `result` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_memory_pool_can_migrate(
    _src: u64,
    _dst: u64,
    result: *mut bool,
) -> Status {
    entry("hsa_amd_memory_pool_can_migrate", || {
        runtime()?;
        if result.is_null() {
            return Err(Error::invalid_argument("null result"));
        }
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { result.write(false) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_queue_cu_set_mask`.
///
/// # Safety
///
/// `cu_mask` points to `num_cu_mask_count / 32` words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_queue_cu_set_mask(
    queue: *const c_void,
    num_cu_mask_count: u32,
    cu_mask: *const u32,
) -> Status {
    entry("hsa_amd_queue_cu_set_mask", || {
        let runtime = runtime()?;
        let queue = crate::api::queue::queue(&runtime, queue)?;
        if cu_mask.is_null() || num_cu_mask_count == 0 || num_cu_mask_count % 32 != 0 {
            return Err(Error::invalid_argument("a CU mask of whole 32-bit words"));
        }
        // SAFETY: `num_cu_mask_count / 32` words by the caller's contract.
        let mask =
            unsafe { std::slice::from_raw_parts(cu_mask, (num_cu_mask_count / 32) as usize) };
        queue.set_cu_mask(mask)?;
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_queue_cu_get_mask`: every CU (the mask last set is not kept).
///
/// # Safety
///
/// `cu_mask` is valid for `num_cu_mask_count / 32` words.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_queue_cu_get_mask(
    queue: *const c_void,
    num_cu_mask_count: u32,
    cu_mask: *mut u32,
) -> Status {
    entry("hsa_amd_queue_cu_get_mask", || {
        let runtime = runtime()?;
        crate::api::queue::queue(&runtime, queue)?;
        if cu_mask.is_null() || num_cu_mask_count % 32 != 0 {
            return Err(Error::invalid_argument("a CU mask of whole 32-bit words"));
        }
        for word in 0..(num_cu_mask_count / 32) as usize {
            // SAFETY: within the caller's buffer.
            unsafe { cu_mask.add(word).write(u32::MAX) };
        }
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_queue_set_priority`: low, normal and high map to the kernel's priorities 3, 7
/// and 11 (of 0..=15; 7 is the normal one aqueduct's queues start with).
#[unsafe(no_mangle)]
pub extern "C" fn hsa_amd_queue_set_priority(queue: *const c_void, priority: u32) -> Status {
    entry("hsa_amd_queue_set_priority", || {
        let runtime = runtime()?;
        let queue = crate::api::queue::queue(&runtime, queue)?;
        let kernel_priority = match priority {
            0 => 3,
            1 => 7,
            2 => 11,
            _ => return Err(Error::invalid_argument("unknown priority")),
        };
        queue.update(100, kernel_priority)?;
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_signal_wait_any`: the index of the first signal whose condition holds, or
/// `u32::MAX` when the timeout (in ns) runs out; its value into `satisfying_value`.
///
/// # Safety
///
/// `signals`, `conds` and `values` point to `signal_count` entries; `satisfying_value` is null
/// or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_signal_wait_any(
    signal_count: u32,
    signals: *const u64,
    conds: *const u32,
    values: *const i64,
    timeout_hint: u64,
    _wait_hint: u32,
    satisfying_value: *mut i64,
) -> u32 {
    let Ok(runtime) = runtime() else {
        return u32::MAX;
    };
    if signals.is_null() || conds.is_null() || values.is_null() || signal_count == 0 {
        return u32::MAX;
    }
    let n = signal_count as usize;
    // SAFETY: `signal_count` entries each, by the caller's contract.
    let (handles, conds, values) = unsafe {
        (
            std::slice::from_raw_parts(signals, n),
            std::slice::from_raw_parts(conds, n),
            std::slice::from_raw_parts(values, n),
        )
    };
    let watched: Vec<Option<(aqueduct::Signal, Condition)>> = handles
        .iter()
        .zip(conds)
        .map(|(&h, &c)| {
            let condition = match c {
                0 => Condition::Eq,
                1 => Condition::Ne,
                2 => Condition::Lt,
                3 => Condition::Gte,
                _ => return None,
            };
            crate::api::signal::signal(&runtime, h)
                .ok()
                .map(|s| (s, condition))
        })
        .collect();
    drop(runtime);
    let deadline = (timeout_hint != u64::MAX)
        .then(|| Instant::now().checked_add(Duration::from_nanos(timeout_hint)))
        .flatten();
    let mut nap = Duration::from_micros(1);
    loop {
        for (index, entry) in watched.iter().enumerate() {
            if let Some((signal, condition)) = entry
                && let Ok(value) = signal.load(MemoryOrder::Acquire)
                && condition.holds(value, values[index])
            {
                if !satisfying_value.is_null() {
                    // SAFETY: non-null, valid for one write by the caller's contract.
                    unsafe { satisfying_value.write(value) };
                }
                return index as u32;
            }
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return u32::MAX;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_micros(500));
    }
}
