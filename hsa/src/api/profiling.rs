//! Dispatch and copy profiling: queues whose CP writes start and end timestamps into
//! completion signals, copies the engines stamp likewise, and those timestamps in the system domain (nanoseconds, `HSA_SYSTEM_INFO_TIMESTAMP`'s
//! unit), converted from GPU ticks by the GPU's counter frequency.

use std::ffi::c_void;

use crate::api::system::TIMESTAMP_HZ;
use crate::error::{Error, Result, entry};
use crate::objects::copy_engines::CopiedBy;
use crate::runtime::{Runtime, runtime};
use crate::status::Status;

/// `hsa_amd_profiling_dispatch_time_t` (and `_async_copy_time_t`): start and end.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Times {
    /// Start, system domain.
    pub start: u64,
    /// End, system domain.
    pub end: u64,
}

/// GPU ticks of `agent` in the system domain.
pub(crate) fn to_system(runtime: &Runtime, agent: u64, ticks: u64) -> Result<u64> {
    let frequency = runtime
        .machine
        .agent(agent)
        .and_then(|a| a.gpu.as_ref())
        .map(|g| g.timestamp_frequency_hz)
        .filter(|&f| f != 0)
        .ok_or_else(|| Error::new(Status::INVALID_AGENT, "not a GPU agent"))?;
    Ok((u128::from(ticks) * u128::from(TIMESTAMP_HZ) / u128::from(frequency)) as u64)
}

/// `hsa_amd_profiling_set_profiler_enabled`.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_amd_profiling_set_profiler_enabled(
    queue: *mut c_void,
    enable: i32,
) -> Status {
    entry("hsa_amd_profiling_set_profiler_enabled", || {
        let runtime = runtime()?;
        crate::api::queue::queue(&runtime, queue)?.set_profiling(enable != 0)?;
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_profiling_get_dispatch_time`.
///
/// # Safety
///
/// `time` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_profiling_get_dispatch_time(
    agent: u64,
    signal: u64,
    time: *mut Times,
) -> Status {
    entry("hsa_amd_profiling_get_dispatch_time", || {
        let runtime = runtime()?;
        if time.is_null() {
            return Err(Error::invalid_argument("null time"));
        }
        let stamps = crate::api::signal::signal(&runtime, signal)?.timestamps()?;
        let times = Times {
            start: to_system(&runtime, agent, stamps.start)?,
            end: to_system(&runtime, agent, stamps.end)?,
        };
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { time.write(times) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_profiling_convert_tick_to_system_domain`.
///
/// # Safety
///
/// `system_tick` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_profiling_convert_tick_to_system_domain(
    agent: u64,
    agent_tick: u64,
    system_tick: *mut u64,
) -> Status {
    entry("hsa_amd_profiling_convert_tick_to_system_domain", || {
        let runtime = runtime()?;
        if system_tick.is_null() {
            return Err(Error::invalid_argument("null tick"));
        }
        let ticks = to_system(&runtime, agent, agent_tick)?;
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { system_tick.write(ticks) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_profiling_async_copy_enable`: from now on the copy engines stamp each copy's
/// completion signal with their start and end times (copies on the CPU are timed by it).
#[unsafe(no_mangle)]
pub extern "C" fn hsa_amd_profiling_async_copy_enable(enable: bool) -> Status {
    entry("hsa_amd_profiling_async_copy_enable", || {
        runtime()?.objects.copies.set_profiling(enable);
        Ok(Status::SUCCESS)
    })
}

/// `hsa_amd_profiling_get_async_copy_time`: the times of the last profiled copy that
/// completed `signal`, in the system domain; `HSA_STATUS_ERROR` when no profiled copy
/// completed it, as ROCr answers for a signal with no copy agent.
///
/// # Safety
///
/// `time` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_amd_profiling_get_async_copy_time(
    signal: u64,
    time: *mut Times,
) -> Status {
    entry("hsa_amd_profiling_get_async_copy_time", || {
        let runtime = runtime()?;
        if time.is_null() {
            return Err(Error::invalid_argument("null time"));
        }
        let live = crate::api::signal::signal(&runtime, signal)?;
        let times = match runtime.objects.copies.copied_by(signal) {
            None => return Err(Error::new(Status::ERROR, "no profiled copy completed it")),
            Some(CopiedBy::Host { start, end }) => Times { start, end },
            Some(CopiedBy::Engine(agent)) => {
                let stamps = live.timestamps()?;
                let agent = crate::model::handle_of(agent);
                Times {
                    start: to_system(&runtime, agent, stamps.start)?,
                    end: to_system(&runtime, agent, stamps.end)?,
                }
            }
        };
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { time.write(times) };
        Ok(Status::SUCCESS)
    })
}
