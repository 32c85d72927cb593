//! One small function per `/dev/kfd` ioctl, in the rustix style: typed arguments in, typed
//! results out, and an [`IoctlError`] naming the request on failure. Requests through which the
//! kernel or the GPU would write to caller-chosen addresses are `unsafe fn`s with their contract
//! spelled out; the others are safe.
//!
//! These are deliberately thin: policy (retry on EINTR, fork detection, choosing sizes) lives in
//! the layers above.

use std::os::fd::RawFd;

use super::requests as req;
use crate::abi::{
    AcquireVmArgs, AllocMemoryOfGpuArgs, CachePolicy, CreateEventArgs, CreateQueueArgs,
    DestroyEventArgs, DestroyQueueArgs, EventData, FreeMemoryOfGpuArgs, GetAvailableMemoryArgs,
    GetClockCountersArgs, GetProcessAperturesNewArgs, GetQueueWaveStateArgs, GetVersionArgs,
    MapMemoryToGpuArgs, ProcessDeviceApertures, ResetEventArgs, RuntimeEnableArgs, SetCuMaskArgs,
    SetEventArgs, SetMemoryPolicyArgs, SetScratchBackingVaArgs, SetTrapHandlerArgs,
    SetXnackModeArgs, UnmapMemoryFromGpuArgs, UpdateQueueArgs, WaitEventsArgs, WaitResult,
};
use crate::ioctl::{IoctlError, call, call_unchecked};
use crate::sys::Sys;

/// AMDKFD_IOC_GET_VERSION.
pub fn get_version(sys: &dyn Sys, kfd: RawFd) -> Result<GetVersionArgs, IoctlError> {
    let mut args = GetVersionArgs::default();
    call::<req::GetVersion>(sys, kfd, &mut args)?;
    Ok(args)
}

/// AMDKFD_IOC_ACQUIRE_VM: make `drm_fd`'s VM the compute VM of this process on `gpu_id`.
pub fn acquire_vm(sys: &dyn Sys, kfd: RawFd, drm_fd: RawFd, gpu_id: u32) -> Result<(), IoctlError> {
    let mut args = AcquireVmArgs {
        drm_fd: drm_fd as u32,
        gpu_id,
    };
    call::<req::AcquireVm>(sys, kfd, &mut args)
}

/// Most GPU apertures [`get_process_apertures`] reads (far more GPUs than a machine holds).
pub const MAX_APERTURE_NODES: u32 = 1024;

/// AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, with the kernel's two-call pattern: count, then fill
/// (at most [`MAX_APERTURE_NODES`] entries).
pub fn get_process_apertures(
    sys: &dyn Sys,
    kfd: RawFd,
) -> Result<Vec<ProcessDeviceApertures>, IoctlError> {
    let mut args = GetProcessAperturesNewArgs::default();
    // SAFETY: with `num_of_nodes == 0` the kernel writes through no pointer, only the count.
    unsafe { call_unchecked::<req::GetProcessAperturesNew>(sys, kfd, &mut args)? };
    // The count comes from the kernel: never let it size an allocation unchecked.
    args.num_of_nodes = args.num_of_nodes.min(MAX_APERTURE_NODES);
    let mut apertures = vec![ProcessDeviceApertures::default(); args.num_of_nodes as usize];
    if apertures.is_empty() {
        return Ok(apertures);
    }
    args.kfd_process_device_apertures_ptr = apertures.as_mut_ptr() as u64;
    // SAFETY: the pointer and `num_of_nodes` describe `apertures`, live and exclusively
    // borrowed for the call; the kernel writes at most `num_of_nodes` entries.
    unsafe { call_unchecked::<req::GetProcessAperturesNew>(sys, kfd, &mut args)? };
    apertures.truncate(args.num_of_nodes as usize);
    Ok(apertures)
}

/// AMDKFD_IOC_SET_MEMORY_POLICY (the aperture arguments are ignored on GFX9+).
pub fn set_memory_policy(
    sys: &dyn Sys,
    kfd: RawFd,
    gpu_id: u32,
    default_policy: CachePolicy,
    alternate_policy: CachePolicy,
) -> Result<(), IoctlError> {
    let mut args = SetMemoryPolicyArgs {
        gpu_id,
        default_policy: default_policy.0,
        alternate_policy: alternate_policy.0,
        ..SetMemoryPolicyArgs::default()
    };
    call::<req::SetMemoryPolicy>(sys, kfd, &mut args)
}

/// AMDKFD_IOC_SET_XNACK_MODE: `mode < 0` queries; returns the mode now in force.
pub fn set_xnack_mode(sys: &dyn Sys, kfd: RawFd, mode: i32) -> Result<i32, IoctlError> {
    let mut args = SetXnackModeArgs {
        xnack_enabled: mode,
    };
    call::<req::SetXnackMode>(sys, kfd, &mut args)?;
    Ok(args.xnack_enabled)
}

/// AMDKFD_IOC_RUNTIME_ENABLE (1.13); returns the debugger capability mask.
pub fn runtime_enable(
    sys: &dyn Sys,
    kfd: RawFd,
    r_debug: u64,
    mode_mask: u32,
) -> Result<u32, IoctlError> {
    let mut args = RuntimeEnableArgs {
        r_debug,
        mode_mask,
        capabilities_mask: 0,
    };
    call::<req::RuntimeEnable>(sys, kfd, &mut args)?;
    Ok(args.capabilities_mask)
}

/// AMDKFD_IOC_ALLOC_MEMORY_OF_GPU; fills in `handle` and `mmap_offset`.
///
/// # Safety
///
/// For a USERPTR allocation, `args.mmap_offset..+size` must be user memory that stays valid,
/// and that nothing else relies on, for as long as the BO may be mapped to a GPU.
pub unsafe fn alloc_memory_of_gpu(
    sys: &dyn Sys,
    kfd: RawFd,
    args: &mut AllocMemoryOfGpuArgs,
) -> Result<(), IoctlError> {
    // SAFETY: forwarded to the caller.
    unsafe { call_unchecked::<req::AllocMemoryOfGpu>(sys, kfd, args) }
}

/// AMDKFD_IOC_FREE_MEMORY_OF_GPU.
pub fn free_memory_of_gpu(sys: &dyn Sys, kfd: RawFd, handle: u64) -> Result<(), IoctlError> {
    call::<req::FreeMemoryOfGpu>(sys, kfd, &mut FreeMemoryOfGpuArgs { handle })
}

/// AMDKFD_IOC_MAP_MEMORY_TO_GPU: map `handle` on each of `gpu_ids`, starting at index
/// `*n_success`; on return (success or failure) `*n_success` counts the devices done, so a
/// caller can retry from there, as the kernel intends.
pub fn map_memory_to_gpu(
    sys: &dyn Sys,
    kfd: RawFd,
    handle: u64,
    gpu_ids: &[u32],
    n_success: &mut u32,
) -> Result<(), IoctlError> {
    let mut args = MapMemoryToGpuArgs {
        handle,
        device_ids_array_ptr: gpu_ids.as_ptr() as u64,
        n_devices: gpu_ids.len() as u32,
        n_success: *n_success,
    };
    let result = call::<req::MapMemoryToGpu>(sys, kfd, &mut args);
    *n_success = args.n_success;
    result
}

/// AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, with the same `n_success` convention as
/// [`map_memory_to_gpu`].
pub fn unmap_memory_from_gpu(
    sys: &dyn Sys,
    kfd: RawFd,
    handle: u64,
    gpu_ids: &[u32],
    n_success: &mut u32,
) -> Result<(), IoctlError> {
    let mut args = UnmapMemoryFromGpuArgs {
        handle,
        device_ids_array_ptr: gpu_ids.as_ptr() as u64,
        n_devices: gpu_ids.len() as u32,
        n_success: *n_success,
    };
    let result = call::<req::UnmapMemoryFromGpu>(sys, kfd, &mut args);
    *n_success = args.n_success;
    result
}

/// AMDKFD_IOC_AVAILABLE_MEMORY (1.9): bytes of VRAM still available to this process.
pub fn available_memory(sys: &dyn Sys, kfd: RawFd, gpu_id: u32) -> Result<u64, IoctlError> {
    let mut args = GetAvailableMemoryArgs {
        gpu_id,
        ..GetAvailableMemoryArgs::default()
    };
    call::<req::AvailableMemory>(sys, kfd, &mut args)?;
    Ok(args.available)
}

/// AMDKFD_IOC_CREATE_QUEUE; fills in `queue_id` and `doorbell_offset`.
///
/// # Safety
///
/// The ring, read/write pointers, EOP buffer and CWSR area named in `args` must be GPU-mapped
/// memory that the GPU may read and write until the queue is destroyed.
pub unsafe fn create_queue(
    sys: &dyn Sys,
    kfd: RawFd,
    args: &mut CreateQueueArgs,
) -> Result<(), IoctlError> {
    // SAFETY: forwarded to the caller.
    unsafe { call_unchecked::<req::CreateQueue>(sys, kfd, args) }
}

/// AMDKFD_IOC_DESTROY_QUEUE.
pub fn destroy_queue(sys: &dyn Sys, kfd: RawFd, queue_id: u32) -> Result<(), IoctlError> {
    call::<req::DestroyQueue>(sys, kfd, &mut DestroyQueueArgs { queue_id, pad: 0 })
}

/// AMDKFD_IOC_UPDATE_QUEUE.
///
/// # Safety
///
/// As for [`create_queue`], for the new ring.
pub unsafe fn update_queue(
    sys: &dyn Sys,
    kfd: RawFd,
    args: &mut UpdateQueueArgs,
) -> Result<(), IoctlError> {
    // SAFETY: forwarded to the caller.
    unsafe { call_unchecked::<req::UpdateQueue>(sys, kfd, args) }
}

/// AMDKFD_IOC_SET_CU_MASK: `mask` holds one bit per CU, 32 per word.
pub fn set_cu_mask(
    sys: &dyn Sys,
    kfd: RawFd,
    queue_id: u32,
    mask: &[u32],
) -> Result<(), IoctlError> {
    let mut args = SetCuMaskArgs {
        queue_id,
        num_cu_mask: (mask.len() * 32) as u32,
        cu_mask_ptr: mask.as_ptr() as u64,
    };
    call::<req::SetCuMask>(sys, kfd, &mut args)
}

/// AMDKFD_IOC_GET_QUEUE_WAVE_STATE: copy the queue's control stack into `ctl_stack`; returns
/// `(ctl_stack_used_size, save_area_used_size)`.
///
/// # Safety
///
/// `ctl_stack` must cover everything the kernel may write: the `ctl_stack_size` the queue was
/// created with, and on a part with several XCCs one such stack per XCC, each
/// `ctx_save_restore_size` after the previous one, i.e. at least
/// `(xccs - 1) * ctx_save_restore_size + ctl_stack_size` bytes (the queue's whole CWSR area
/// always suffices). Only the caller knows the sizes it gave CREATE_QUEUE.
pub unsafe fn get_queue_wave_state(
    sys: &dyn Sys,
    kfd: RawFd,
    queue_id: u32,
    ctl_stack: &mut [u8],
) -> Result<(u32, u32), IoctlError> {
    let mut args = GetQueueWaveStateArgs {
        ctl_stack_address: ctl_stack.as_mut_ptr() as u64,
        queue_id,
        ..GetQueueWaveStateArgs::default()
    };
    // SAFETY: `ctl_stack` is live and exclusively borrowed for the call, and the caller
    // guarantees it is as large as anything the kernel writes there.
    unsafe { call_unchecked::<req::GetQueueWaveState>(sys, kfd, &mut args)? };
    Ok((args.ctl_stack_used_size, args.save_area_used_size))
}

/// AMDKFD_IOC_CREATE_EVENT; fills in the id, slot, trigger data and page offset.
pub fn create_event(
    sys: &dyn Sys,
    kfd: RawFd,
    args: &mut CreateEventArgs,
) -> Result<(), IoctlError> {
    call::<req::CreateEvent>(sys, kfd, args)
}

/// AMDKFD_IOC_DESTROY_EVENT.
pub fn destroy_event(sys: &dyn Sys, kfd: RawFd, event_id: u32) -> Result<(), IoctlError> {
    call::<req::DestroyEvent>(sys, kfd, &mut DestroyEventArgs { event_id, pad: 0 })
}

/// AMDKFD_IOC_SET_EVENT.
pub fn set_event(sys: &dyn Sys, kfd: RawFd, event_id: u32) -> Result<(), IoctlError> {
    call::<req::SetEvent>(sys, kfd, &mut SetEventArgs { event_id, pad: 0 })
}

/// AMDKFD_IOC_RESET_EVENT.
pub fn reset_event(sys: &dyn Sys, kfd: RawFd, event_id: u32) -> Result<(), IoctlError> {
    call::<req::ResetEvent>(sys, kfd, &mut ResetEventArgs { event_id, pad: 0 })
}

/// AMDKFD_IOC_WAIT_EVENTS on `events`. `*timeout_ms` is in/out: after an interrupted wait the
/// kernel leaves the remaining time there. The kernel writes exception data and event ages
/// back into `events`, and copies the struct back even on failure.
pub fn wait_events(
    sys: &dyn Sys,
    kfd: RawFd,
    events: &mut [EventData],
    wait_for_all: bool,
    timeout_ms: &mut u32,
) -> Result<WaitResult, IoctlError> {
    let mut args = WaitEventsArgs {
        events_ptr: events.as_mut_ptr() as u64,
        num_events: events.len() as u32,
        wait_for_all: u32::from(wait_for_all),
        timeout: *timeout_ms,
        wait_result: 0,
    };
    // SAFETY: `events_ptr`/`num_events` describe `events`, exclusively borrowed for the call;
    // the kernel writes only within those entries.
    let result = unsafe { call_unchecked::<req::WaitEvents>(sys, kfd, &mut args) };
    *timeout_ms = args.timeout;
    result.map(|()| WaitResult(args.wait_result))
}

/// AMDKFD_IOC_GET_CLOCK_COUNTERS.
pub fn get_clock_counters(
    sys: &dyn Sys,
    kfd: RawFd,
    gpu_id: u32,
) -> Result<GetClockCountersArgs, IoctlError> {
    let mut args = GetClockCountersArgs {
        gpu_id,
        ..GetClockCountersArgs::default()
    };
    call::<req::GetClockCounters>(sys, kfd, &mut args)?;
    Ok(args)
}

/// AMDKFD_IOC_SET_SCRATCH_BACKING_VA.
///
/// # Safety
///
/// `va` must be GPU-mapped memory the GPU may use as scratch for the life of the process.
pub unsafe fn set_scratch_backing_va(
    sys: &dyn Sys,
    kfd: RawFd,
    gpu_id: u32,
    va: u64,
) -> Result<(), IoctlError> {
    let mut args = SetScratchBackingVaArgs {
        va_addr: va,
        gpu_id,
        pad: 0,
    };
    // SAFETY: forwarded to the caller.
    unsafe { call_unchecked::<req::SetScratchBackingVa>(sys, kfd, &mut args) }
}

/// AMDKFD_IOC_SET_TRAP_HANDLER.
///
/// # Safety
///
/// `tba` must hold trap-handler code and `tma` its data, GPU-mapped for the life of the process.
pub unsafe fn set_trap_handler(
    sys: &dyn Sys,
    kfd: RawFd,
    gpu_id: u32,
    tba: u64,
    tma: u64,
) -> Result<(), IoctlError> {
    let mut args = SetTrapHandlerArgs {
        tba_addr: tba,
        tma_addr: tma,
        gpu_id,
        pad: 0,
    };
    // SAFETY: forwarded to the caller.
    unsafe { call_unchecked::<req::SetTrapHandler>(sys, kfd, &mut args) }
}
