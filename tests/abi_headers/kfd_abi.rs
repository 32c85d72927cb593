//! `kfd` crate against `linux/kfd_ioctl.h` and `linux/kfd_sysfs.h`.

use kfd::abi::sysfs::{Capability, cache, io_link, mem_bank};
use kfd::abi::*;
use kfd::ioctl::Ioctl;
use kfd::ioctl::requests as request;

use crate::harness::Check;
use crate::{constant, layout};

const V13: &str = "KFD_IOCTL_MINOR_VERSION >= 13";
const V14: &str = "KFD_IOCTL_MINOR_VERSION >= 14";
const V17: &str = "KFD_IOCTL_MINOR_VERSION >= 17";
const V18: &str = "KFD_IOCTL_MINOR_VERSION >= 18";
const V22: &str = "KFD_IOCTL_MINOR_VERSION >= 22";

pub fn checks() -> Vec<Check> {
    let mut c = vec![
        layout!("struct kfd_ioctl_get_version_args" => GetVersionArgs { major_version, minor_version }),
        layout!("struct kfd_ioctl_create_queue_args" => CreateQueueArgs {
            ring_base_address, write_pointer_address, read_pointer_address, doorbell_offset, ring_size, gpu_id,
            queue_type, queue_percentage, queue_priority, queue_id, eop_buffer_address, eop_buffer_size,
            ctx_save_restore_address, ctx_save_restore_size, ctl_stack_size, sdma_engine_id, metadata_ring_size,
        })
        .since(V22),
        // 1.17 to 1.21 call the last word `pad`.
        layout!("struct kfd_ioctl_create_queue_args" => CreateQueueArgs {
            ring_base_address, write_pointer_address, read_pointer_address, doorbell_offset, ring_size, gpu_id,
            queue_type, queue_percentage, queue_priority, queue_id, eop_buffer_address, eop_buffer_size,
            ctx_save_restore_address, ctx_save_restore_size, ctl_stack_size, sdma_engine_id, metadata_ring_size = "pad",
        })
        .since(&format!("{V17} && KFD_IOCTL_MINOR_VERSION < 22")),
        layout!("struct kfd_ioctl_destroy_queue_args" => DestroyQueueArgs { queue_id, pad }),
        layout!("struct kfd_ioctl_update_queue_args" => UpdateQueueArgs {
            ring_base_address, queue_id, ring_size, queue_percentage, queue_priority,
        }),
        layout!("struct kfd_ioctl_set_cu_mask_args" => SetCuMaskArgs { queue_id, num_cu_mask, cu_mask_ptr }),
        layout!("struct kfd_ioctl_get_queue_wave_state_args" => GetQueueWaveStateArgs {
            ctl_stack_address, ctl_stack_used_size, save_area_used_size, queue_id, pad,
        }),
        layout!("struct kfd_ioctl_set_memory_policy_args" => SetMemoryPolicyArgs {
            alternate_aperture_base, alternate_aperture_size, gpu_id, default_policy, alternate_policy, misc_process_flag,
        })
        .since(V18),
        layout!("struct kfd_ioctl_set_memory_policy_args" => SetMemoryPolicyArgs {
            alternate_aperture_base, alternate_aperture_size, gpu_id, default_policy, alternate_policy,
            misc_process_flag = "pad",
        })
        .since("KFD_IOCTL_MINOR_VERSION < 18"),
        layout!("struct kfd_ioctl_get_clock_counters_args" => GetClockCountersArgs {
            gpu_clock_counter, cpu_clock_counter, system_clock_counter, system_clock_freq, gpu_id, pad,
        }),
        layout!("struct kfd_process_device_apertures" => ProcessDeviceApertures {
            lds_base, lds_limit, scratch_base, scratch_limit, gpuvm_base, gpuvm_limit, gpu_id, pad,
        }),
        layout!("struct kfd_ioctl_get_process_apertures_new_args" => GetProcessAperturesNewArgs {
            kfd_process_device_apertures_ptr, num_of_nodes, pad,
        }),
        layout!("struct kfd_ioctl_acquire_vm_args" => AcquireVmArgs { drm_fd, gpu_id }),
        layout!("struct kfd_ioctl_alloc_memory_of_gpu_args" => AllocMemoryOfGpuArgs {
            va_addr, size, handle, mmap_offset, gpu_id, flags,
        }),
        layout!("struct kfd_ioctl_free_memory_of_gpu_args" => FreeMemoryOfGpuArgs { handle }),
        layout!("struct kfd_ioctl_map_memory_to_gpu_args" => MapMemoryToGpuArgs {
            handle, device_ids_array_ptr, n_devices, n_success,
        }),
        layout!("struct kfd_ioctl_unmap_memory_from_gpu_args" => UnmapMemoryFromGpuArgs {
            handle, device_ids_array_ptr, n_devices, n_success,
        }),
        layout!("struct kfd_ioctl_get_available_memory_args" => GetAvailableMemoryArgs { available, gpu_id, pad }),
        layout!("struct kfd_ioctl_set_scratch_backing_va_args" => SetScratchBackingVaArgs { va_addr, gpu_id, pad }),
        layout!("struct kfd_ioctl_set_trap_handler_args" => SetTrapHandlerArgs { tba_addr, tma_addr, gpu_id, pad }),
        layout!("struct kfd_ioctl_set_xnack_mode_args" => SetXnackModeArgs { xnack_enabled }),
        layout!("struct kfd_ioctl_runtime_enable_args" => RuntimeEnableArgs { r_debug, mode_mask, capabilities_mask })
            .since(V13),
        layout!("struct kfd_ioctl_create_event_args" => CreateEventArgs {
            event_page_offset, event_trigger_data, event_type, auto_reset, node_id, event_id, event_slot_index,
        }),
        layout!("struct kfd_ioctl_destroy_event_args" => DestroyEventArgs { event_id, pad }),
        layout!("struct kfd_ioctl_set_event_args" => SetEventArgs { event_id, pad }),
        layout!("struct kfd_ioctl_reset_event_args" => ResetEventArgs { event_id, pad }),
        layout!("struct kfd_memory_exception_failure" => MemoryExceptionFailure {
            not_present = "NotPresent", read_only = "ReadOnly", no_execute = "NoExecute", imprecise,
        }),
        layout!("struct kfd_hsa_memory_exception_data" => MemoryExceptionData {
            failure, va, gpu_id, error_type = "ErrorType",
        }),
        layout!("struct kfd_hsa_hw_exception_data" => HwExceptionData { reset_type, reset_cause, memory_lost, gpu_id }),
        layout!("struct kfd_event_data" => EventData {
            payload = "memory_exception_data", kfd_event_data_ext, event_id, pad,
        }),
        layout!("struct kfd_ioctl_wait_events_args" => WaitEventsArgs {
            events_ptr, num_events, wait_for_all, timeout, wait_result,
        }),
        // The union members EventData reads through its accessors.
        constant!("offsetof(struct kfd_event_data, hw_exception_data)", 0),
        constant!("sizeof(((struct kfd_event_data *)0)->hw_exception_data)", size_of::<HwExceptionData>()),
        constant!("offsetof(struct kfd_event_data, signal_event_data.last_event_age)", 0).since(V14),
        constant!("KFD_IOCTL_MAJOR_VERSION", KFD_IOCTL_MAJOR_VERSION).ifdef(),
        constant!("AMDKFD_IOCTL_BASE", request::AMDKFD_IOCTL_BASE).ifdef(),
        constant!("AMDKFD_COMMAND_START", request::AMDKFD_COMMAND_START).ifdef(),
        constant!("KFD_IOC_QUEUE_TYPE_COMPUTE", QueueType::COMPUTE.0).ifdef(),
        constant!("KFD_IOC_QUEUE_TYPE_SDMA", QueueType::SDMA.0).ifdef(),
        constant!("KFD_IOC_QUEUE_TYPE_COMPUTE_AQL", QueueType::COMPUTE_AQL.0).ifdef(),
        constant!("KFD_IOC_QUEUE_TYPE_SDMA_XGMI", QueueType::SDMA_XGMI.0).ifdef(),
        constant!("KFD_IOC_QUEUE_TYPE_SDMA_BY_ENG_ID", QueueType::SDMA_BY_ENG_ID.0).ifdef(),
        constant!("KFD_MAX_QUEUE_PERCENTAGE", KFD_MAX_QUEUE_PERCENTAGE).ifdef(),
        constant!("KFD_MAX_QUEUE_PRIORITY", KFD_MAX_QUEUE_PRIORITY).ifdef(),
        constant!("KFD_MIN_QUEUE_RING_SIZE", KFD_MIN_QUEUE_RING_SIZE).ifdef(),
        constant!("KFD_IOC_CACHE_POLICY_COHERENT", CachePolicy::COHERENT.0).ifdef(),
        constant!("KFD_IOC_CACHE_POLICY_NONCOHERENT", CachePolicy::NONCOHERENT.0).ifdef(),
        constant!("KFD_PROC_FLAG_MFMA_HIGH_PRECISION", KFD_PROC_FLAG_MFMA_HIGH_PRECISION).ifdef(),
        constant!("KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK", KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK).ifdef(),
        constant!("KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK", KFD_RUNTIME_ENABLE_MODE_TTMP_SAVE_MASK).ifdef(),
        constant!("KFD_IOC_EVENT_SIGNAL", EventType::SIGNAL.0).ifdef(),
        constant!("KFD_IOC_EVENT_NODECHANGE", EventType::NODECHANGE.0).ifdef(),
        constant!("KFD_IOC_EVENT_DEVICESTATECHANGE", EventType::DEVICESTATECHANGE.0).ifdef(),
        constant!("KFD_IOC_EVENT_HW_EXCEPTION", EventType::HW_EXCEPTION.0).ifdef(),
        constant!("KFD_IOC_EVENT_SYSTEM_EVENT", EventType::SYSTEM_EVENT.0).ifdef(),
        constant!("KFD_IOC_EVENT_DEBUG_EVENT", EventType::DEBUG_EVENT.0).ifdef(),
        constant!("KFD_IOC_EVENT_PROFILE_EVENT", EventType::PROFILE_EVENT.0).ifdef(),
        constant!("KFD_IOC_EVENT_QUEUE_EVENT", EventType::QUEUE_EVENT.0).ifdef(),
        constant!("KFD_IOC_EVENT_MEMORY", EventType::MEMORY.0).ifdef(),
        constant!("KFD_IOC_WAIT_RESULT_COMPLETE", WaitResult::COMPLETE.0).ifdef(),
        constant!("KFD_IOC_WAIT_RESULT_TIMEOUT", WaitResult::TIMEOUT.0).ifdef(),
        constant!("KFD_IOC_WAIT_RESULT_FAIL", WaitResult::FAIL.0).ifdef(),
        constant!("KFD_SIGNAL_EVENT_LIMIT", KFD_SIGNAL_EVENT_LIMIT).ifdef(),
        constant!("KFD_HW_EXCEPTION_WHOLE_GPU_RESET", exception::WHOLE_GPU_RESET).ifdef(),
        constant!("KFD_HW_EXCEPTION_PER_ENGINE_RESET", exception::PER_ENGINE_RESET).ifdef(),
        constant!("KFD_HW_EXCEPTION_GPU_HANG", exception::GPU_HANG).ifdef(),
        constant!("KFD_HW_EXCEPTION_ECC", exception::ECC).ifdef(),
        constant!("KFD_MEM_ERR_NO_RAS", exception::MEM_ERR_NO_RAS).ifdef(),
        constant!("KFD_MEM_ERR_SRAM_ECC", exception::MEM_ERR_SRAM_ECC).ifdef(),
        constant!("KFD_MEM_ERR_POISON_CONSUMED", exception::MEM_ERR_POISON_CONSUMED).ifdef(),
        constant!("KFD_MEM_ERR_GPU_HANG", exception::MEM_ERR_GPU_HANG).ifdef(),
        constant!("HSA_CAP_DOORBELL_TYPE_TOTALBITS_SHIFT", Capability::DOORBELL_TYPE_SHIFT).ifdef(),
        constant!("HSA_CAP_DOORBELL_TYPE_2_0", Capability::DOORBELL_TYPE_2_0).ifdef(),
        constant!("HSA_CAP_ASIC_REVISION_SHIFT", Capability::ASIC_REVISION_SHIFT).ifdef(),
        constant!("HSA_CAP_WATCH_POINTS_TOTALBITS_SHIFT", Capability::WATCH_POINTS_TOTALBITS_SHIFT).ifdef(),
        constant!("HSA_MEM_HEAP_TYPE_SYSTEM", mem_bank::HEAP_TYPE_SYSTEM).ifdef(),
        constant!("HSA_MEM_HEAP_TYPE_FB_PUBLIC", mem_bank::HEAP_TYPE_FB_PUBLIC).ifdef(),
        constant!("HSA_MEM_HEAP_TYPE_FB_PRIVATE", mem_bank::HEAP_TYPE_FB_PRIVATE).ifdef(),
        constant!("HSA_MEM_HEAP_TYPE_GPU_GDS", mem_bank::HEAP_TYPE_GPU_GDS).ifdef(),
        constant!("HSA_MEM_HEAP_TYPE_GPU_LDS", mem_bank::HEAP_TYPE_GPU_LDS).ifdef(),
        constant!("HSA_MEM_HEAP_TYPE_GPU_SCRATCH", mem_bank::HEAP_TYPE_GPU_SCRATCH).ifdef(),
        constant!("HSA_CACHE_TYPE_DATA", cache::TYPE_DATA).ifdef(),
        constant!("HSA_CACHE_TYPE_INSTRUCTION", cache::TYPE_INSTRUCTION).ifdef(),
        constant!("HSA_CACHE_TYPE_CPU", cache::TYPE_CPU).ifdef(),
        constant!("HSA_CACHE_TYPE_HSACU", cache::TYPE_HSACU).ifdef(),
        constant!("HSA_IOLINK_TYPE_PCIEXPRESS", io_link::TYPE_PCIEXPRESS).ifdef(),
        constant!("HSA_IOLINK_TYPE_XGMI", io_link::TYPE_XGMI).ifdef(),
        constant!("HSA_IOLINK_FLAGS_ENABLED", io_link::FLAGS_ENABLED).ifdef(),
        constant!("HSA_IOLINK_FLAGS_NON_COHERENT", io_link::FLAGS_NON_COHERENT).ifdef(),
        constant!("HSA_IOLINK_FLAGS_NO_ATOMICS_32_BIT", io_link::FLAGS_NO_ATOMICS_32_BIT).ifdef(),
        constant!("HSA_IOLINK_FLAGS_NO_ATOMICS_64_BIT", io_link::FLAGS_NO_ATOMICS_64_BIT).ifdef(),
        constant!("HSA_IOLINK_FLAGS_NO_PEER_TO_PEER_DMA", io_link::FLAGS_NO_PEER_TO_PEER_DMA).ifdef(),
    ];

    // Every request number, with the version that gave it its current size.
    for r in request::ALL {
        let check = constant!(r.name, r.opcode.raw()).ifdef();
        c.push(match r.name {
            "AMDKFD_IOC_CREATE_QUEUE" => check.since(V17),
            _ => check,
        });
    }
    assert_eq!(<request::CreateQueue as Ioctl>::OPCODE.size(), 96);

    // Every flag of the two bitflags sets, by the C name derived from the Rust one.
    for (name, flag) in AllocFlags::all().iter_names() {
        c.push(constant!(format!("KFD_IOC_ALLOC_MEM_FLAGS_{name}"), flag.bits()).ifdef());
    }
    for (name, flag) in Capability::all().iter_names() {
        c.push(constant!(format!("HSA_CAP_{name}"), flag.bits()).ifdef());
    }
    c
}
