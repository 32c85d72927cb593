//! Asynchronous copies, `hsa_amd_memory_async_copy` and `hsa_amd_memory_async_copy_rect`, on
//! the GPUs' copy engines as ROCr runs them on SDMA: the call queues the copy and returns; the
//! engine waits for the dependency signals to reach 0, copies, stamps the completion signal
//! when copy profiling is on, and decrements it. The engine is that of the source agent when
//! it is a GPU, else the destination's (ROCr's `Runtime::CopyMemory`); for a rectangle, the
//! `copy_agent` the caller names.
//!
//! An engine reaches only memory mapped in its GPU's page tables: memory of this runtime's
//! pools mapped on that GPU, and the program's memory locked with `hsa_amd_memory_lock`. Where
//! an end is anything else (pageable memory the program never locked, or memory another GPU
//! maps but this one does not) the copy runs on the CPU instead, on the calling thread, after
//! waiting for the dependencies: ROCr would hand the engine an address it cannot translate (a
//! GPU page fault); copying on the CPU gives the program the bytes it asked for instead. The
//! same holds for a copy within one allocation whose ranges overlap (aqueduct's copy queue
//! refuses those; the CPU copies as `memmove`).

use std::ffi::c_void;
use std::time::Duration;

use aqueduct::{Buffer, Condition, CopyOrder, MemoryOrder, Pitched, Signal};

use crate::error::{Error, Result, entry};
use crate::objects::copy_engines::CopiedBy;
use crate::runtime::{Runtime, runtime};
use crate::status::Status;

/// How long a copy on the CPU waits for one dependency before it reports an error.
const DEPENDENCY_PATIENCE: Duration = Duration::from_secs(600);

/// The dependency and completion signals of a copy, checked.
struct Order {
    after: Vec<Signal>,
    completion: Signal,
    completion_handle: u64,
}

/// # Safety
///
/// `dep_signals` points to `num_dep_signals` handles, or is null when there are none.
unsafe fn order(
    runtime: &Runtime,
    num_dep_signals: u32,
    dep_signals: *const u64,
    completion_signal: u64,
) -> Result<Order> {
    // As ROCr: a count without a list, or a list without a count, is invalid.
    if (num_dep_signals == 0) != dep_signals.is_null() {
        return Err(Error::invalid_argument(
            "the dependency count and list disagree",
        ));
    }
    let handles = if num_dep_signals == 0 {
        &[][..]
    } else {
        // SAFETY: `num_dep_signals` handles by the caller's contract.
        unsafe { std::slice::from_raw_parts(dep_signals, num_dep_signals as usize) }
    };
    let after = handles
        .iter()
        .map(|&h| crate::api::signal::signal(runtime, h))
        .collect::<Result<Vec<_>>>()?;
    Ok(Order {
        after,
        completion: crate::api::signal::signal(runtime, completion_signal)?,
        completion_handle: completion_signal,
    })
}

/// An allocation the engine of GPU agent `agent` reaches, holding `len` bytes from `address`:
/// the buffer and the offset of `address` in it.
fn engine_end(
    runtime: &Runtime,
    agent: usize,
    address: u64,
    len: usize,
) -> Option<(Buffer, usize)> {
    let gpu = runtime.machine.agents.get(agent)?.gpu.as_ref()?;
    let (allocation, offset) = runtime.objects.memory.containing(address)?;
    let fits = offset
        .checked_add(len)
        .is_some_and(|end| end <= allocation.buffer.len());
    (fits && allocation.buffer.is_mapped_on(gpu).unwrap_or(false))
        .then_some((allocation.buffer, offset))
}

/// Queue work on the engine of GPU agent `agent` with `order`, stamping the completion signal
/// when copy profiling is on.
fn on_engine(
    runtime: &Runtime,
    agent: usize,
    order: &Order,
    work: impl FnOnce(&aqueduct::CopyQueue, &CopyOrder<'_>) -> aqueduct::Result<()>,
) -> Result<()> {
    let engines = &runtime.objects.copies;
    let queue = engines.queue(&runtime.device, &runtime.machine, agent)?;
    let after: Vec<&Signal> = order.after.iter().collect();
    let profiled = engines.profiling();
    work(
        &queue,
        &CopyOrder {
            after: &after,
            completion: Some(&order.completion),
            timestamps: None,
            stamps_in_completion: profiled,
        },
    )?;
    if profiled {
        engines.record(order.completion_handle, CopiedBy::Engine(agent));
    }
    Ok(())
}

/// Run `copy` on the CPU: wait for the dependencies, copy, complete (timed when profiled).
fn on_cpu(runtime: &Runtime, order: &Order, copy: impl FnOnce() -> Result<()>) -> Result<()> {
    for dep in &order.after {
        dep.wait(Condition::Eq, 0, Some(DEPENDENCY_PATIENCE))?;
    }
    let start = crate::api::system::timestamp();
    copy()?;
    let end = crate::api::system::timestamp();
    let engines = &runtime.objects.copies;
    if engines.profiling() {
        engines.record(order.completion_handle, CopiedBy::Host { start, end });
    }
    order.completion.sub(1, MemoryOrder::Release)?;
    Ok(())
}

/// The index of agent `handle`, or `HSA_STATUS_ERROR_INVALID_AGENT`.
fn agent_index(runtime: &Runtime, handle: u64) -> Result<usize> {
    runtime
        .machine
        .agent(handle)
        .and_then(|_| crate::model::index_of(handle))
        .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))
}

/// Whether agent `index` is a GPU.
fn is_gpu(runtime: &Runtime, index: usize) -> bool {
    runtime.machine.agents[index].gpu.is_some()
}

/// `hsa_amd_memory_async_copy`: `size` bytes from `src` to `dst` on a copy engine, after the
/// dependencies, then decrement the completion signal. A copy of 0 bytes does nothing and
/// leaves the completion signal alone, as ROCr's does.
///
/// # Safety
///
/// As ROCr's: `dst` and `src` are valid for `size` bytes; `dep_signals` points to
/// `num_dep_signals` handles.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "the C API's signature")]
pub unsafe extern "C" fn hsa_amd_memory_async_copy(
    dst: *mut c_void,
    dst_agent: u64,
    src: *const c_void,
    src_agent: u64,
    size: usize,
    num_dep_signals: u32,
    dep_signals: *const u64,
    completion_signal: u64,
) -> Status {
    entry("hsa_amd_memory_async_copy", || {
        let runtime = runtime()?;
        if dst.is_null() || src.is_null() {
            return Err(Error::invalid_argument("null pointer"));
        }
        let (to_agent, from_agent) = (
            agent_index(&runtime, dst_agent)?,
            agent_index(&runtime, src_agent)?,
        );
        // SAFETY: the caller's contract.
        let order = unsafe { order(&runtime, num_dep_signals, dep_signals, completion_signal) }?;
        if size == 0 {
            return Ok(Status::SUCCESS);
        }
        // ROCr: the source agent's engine when it is a GPU, else the destination's; between
        // two CPU agents, the first GPU's.
        let agent = [from_agent, to_agent]
            .into_iter()
            .find(|&a| is_gpu(&runtime, a))
            .or_else(|| (0..runtime.machine.agents.len()).find(|&a| is_gpu(&runtime, a)));
        let ends = agent.and_then(|agent| {
            let to = engine_end(&runtime, agent, dst as u64, size)?;
            let from = engine_end(&runtime, agent, src as u64, size)?;
            let same = to.0.gpu_address() == from.0.gpu_address();
            let overlap = same && to.1 < from.1 + size && from.1 < to.1 + size;
            (!overlap).then_some((agent, to, from))
        });
        match ends {
            Some((agent, (to, to_offset), (from, from_offset))) => {
                on_engine(&runtime, agent, &order, |queue, order| {
                    queue.copy(&to, to_offset, &from, from_offset, size, order)
                })?;
            }
            None => on_cpu(&runtime, &order, || {
                // SAFETY: the caller's contract.
                unsafe { crate::api::memory::copy(&runtime, dst as u64, src as u64, size) }
            })?,
        }
        Ok(Status::SUCCESS)
    })
}

/// `hsa_pitched_ptr_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PitchedPtr {
    /// The box's memory.
    pub base: *mut c_void,
    /// Bytes between rows.
    pub pitch: usize,
    /// Bytes between slices.
    pub slice: usize,
}

/// `hsa_dim3_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Dim3 {
    /// Bytes (offsets, widths).
    pub x: u32,
    /// Rows.
    pub y: u32,
    /// Slices.
    pub z: u32,
}

/// The first byte of the box at `offset` in `ptr`.
fn first_byte(ptr: &PitchedPtr, offset: &Dim3) -> u64 {
    (ptr.base as u64)
        .wrapping_add(u64::from(offset.x))
        .wrapping_add(u64::from(offset.y).wrapping_mul(ptr.pitch as u64))
        .wrapping_add(u64::from(offset.z).wrapping_mul(ptr.slice as u64))
}

/// ROCr's checks of a rectangle (`BlitSdma::SubmitCopyRectCommand`): dword-aligned bases,
/// pitches and slices, rows within the pitch, rows within the slice, slices when copying more
/// than one.
fn check_rect(
    dst: &PitchedPtr,
    dst_offset: &Dim3,
    src: &PitchedPtr,
    src_offset: &Dim3,
    range: &Dim3,
) -> Result<()> {
    let sides = [(dst, dst_offset), (src, src_offset)];
    if sides.iter().any(|(p, _)| p.base as usize % 4 != 0) {
        return Err(Error::invalid_argument(
            "copy rect base address not aligned",
        ));
    }
    if sides
        .iter()
        .any(|(p, _)| p.pitch % 4 != 0 || p.slice % 4 != 0)
    {
        return Err(Error::invalid_argument(
            "copy rect pitch or slice not aligned",
        ));
    }
    for (p, o) in sides {
        if u64::from(o.x) + u64::from(range.x) > p.pitch as u64 {
            return Err(Error::invalid_argument("copy rect width out of range"));
        }
        if p.slice != 0 && u64::from(o.y) + u64::from(range.y) > (p.slice / p.pitch) as u64 {
            return Err(Error::invalid_argument("copy rect height out of range"));
        }
        if range.z > 1 && p.slice == 0 {
            return Err(Error::invalid_argument("copy rect slice needed"));
        }
    }
    Ok(())
}

/// `hsa_amd_memory_async_copy_rect`: the box `range` (`x` in bytes) from `src` at
/// `src_offset` to `dst` at `dst_offset`, on `copy_agent`'s engine, after the dependencies,
/// then decrement the completion signal. As ROCr: host-to-host is refused, the copy agent must
/// be a GPU, and an empty box does nothing (not even complete the signal).
///
/// # Safety
///
/// As ROCr's: the pointers are null or valid; the boxes lie in memory valid for them;
/// `dep_signals` points to `num_dep_signals` handles.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments, reason = "the C API's signature")]
pub unsafe extern "C" fn hsa_amd_memory_async_copy_rect(
    dst: *const PitchedPtr,
    dst_offset: *const Dim3,
    src: *const PitchedPtr,
    src_offset: *const Dim3,
    range: *const Dim3,
    copy_agent: u64,
    dir: u32,
    num_dep_signals: u32,
    dep_signals: *const u64,
    completion_signal: u64,
) -> Status {
    /// `hsaHostToHost`.
    const HOST_TO_HOST: u32 = 0;
    entry("hsa_amd_memory_async_copy_rect", || {
        let runtime = runtime()?;
        if [
            dst.cast::<c_void>(),
            dst_offset.cast(),
            src.cast(),
            src_offset.cast(),
            range.cast(),
        ]
        .iter()
        .any(|p| p.is_null())
        {
            return Err(Error::invalid_argument("null pointer"));
        }
        // SAFETY: non-null, valid for reads by the caller's contract.
        let (dst, dst_offset, src, src_offset, range) =
            unsafe { (*dst, *dst_offset, *src, *src_offset, *range) };
        if (num_dep_signals == 0) != dep_signals.is_null() || dir == HOST_TO_HOST {
            return Err(Error::invalid_argument(
                "dependencies disagree, or a host-to-host rectangle",
            ));
        }
        let agent = agent_index(&runtime, copy_agent)?;
        if !is_gpu(&runtime, agent) {
            return Err(Error::new(
                Status::INVALID_AGENT,
                "the copy agent is not a GPU",
            ));
        }
        // SAFETY: the caller's contract.
        let order = unsafe { order(&runtime, num_dep_signals, dep_signals, completion_signal) }?;
        if range.x == 0 || range.y == 0 || range.z == 0 {
            return Ok(Status::SUCCESS);
        }
        check_rect(&dst, &dst_offset, &src, &src_offset, &range)?;
        let extent = [range.x as usize, range.y as usize, range.z as usize];
        let span =
            |p: &PitchedPtr| (extent[2] - 1) * p.slice + (extent[1] - 1) * p.pitch + extent[0];
        let (to_first, from_first) = (first_byte(&dst, &dst_offset), first_byte(&src, &src_offset));
        let ends = engine_end(&runtime, agent, to_first, span(&dst)).zip(engine_end(
            &runtime,
            agent,
            from_first,
            span(&src),
        ));
        match ends {
            Some(((to, to_offset), (from, from_offset))) => {
                let at = |offset, p: &PitchedPtr| Pitched {
                    offset,
                    pitch: p.pitch,
                    slice: p.slice,
                };
                let (to_at, from_at) = (at(to_offset, &dst), at(from_offset, &src));
                on_engine(&runtime, agent, &order, |queue, order| {
                    queue.copy_rect(&to, to_at, &from, from_at, extent, order)
                })?;
            }
            None => on_cpu(&runtime, &order, || {
                for z in 0..u64::from(range.z) {
                    for y in 0..u64::from(range.y) {
                        let row = |first: u64, p: &PitchedPtr| {
                            first + z * p.slice as u64 + y * p.pitch as u64
                        };
                        // SAFETY: each row lies in the boxes the caller vouches for.
                        unsafe {
                            crate::api::memory::copy(
                                &runtime,
                                row(to_first, &dst),
                                row(from_first, &src),
                                extent[0],
                            )
                        }?;
                    }
                }
                Ok(())
            })?,
        }
        Ok(Status::SUCCESS)
    })
}
