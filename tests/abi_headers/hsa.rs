//! `aql` crate against ROCr's `hsa.h`, `hsa_ext_amd.h`, `amd_hsa_queue.h`, `amd_hsa_signal.h`.

use aql::packet::{AmdFormat, FenceScope, PacketType, SignalCondition, header_bits};
use aql::queue::{
    AMD_QUEUE_ALIGN_BYTES, HSA_QUEUE_FEATURE_AGENT_DISPATCH, HSA_QUEUE_FEATURE_KERNEL_DISPATCH,
    HsaQueueType, properties_bits,
};
use aql::signal::{AMD_SIGNAL_ALIGN_BYTES, SignalKind};
use aql::*;

use crate::harness::Check;
use crate::{constant, layout};

pub fn checks() -> Vec<Check> {
    vec![
        layout!("hsa_kernel_dispatch_packet_t" => KernelDispatchPacket {
            header, setup, workgroup_size_x, workgroup_size_y, workgroup_size_z, reserved0, grid_size_x, grid_size_y,
            grid_size_z, private_segment_size, group_segment_size, kernel_object, kernarg_address, reserved2,
            completion_signal,
        }),
        layout!("hsa_barrier_and_packet_t" => BarrierPacket {
            header, reserved0, reserved1, dep_signal, reserved2, completion_signal,
        }),
        layout!("hsa_barrier_or_packet_t" => BarrierPacket {
            header, reserved0, reserved1, dep_signal, reserved2, completion_signal,
        }),
        layout!("hsa_amd_vendor_packet_header_t" => AmdVendorPacketHeader { header, amd_format = "AmdFormat", reserved }),
        layout!("hsa_amd_barrier_value_packet_t" => BarrierValuePacket {
            header, reserved0, signal, value, mask, cond, reserved1, reserved2, reserved3, completion_signal,
        }),
        layout!("hsa_queue_t" => HsaQueue { r#type = "type", features, base_address, doorbell_signal, size, reserved1, id }),
        layout!("amd_queue_t" => AmdQueue {
            hsa_queue, reserved1, write_dispatch_id, group_segment_aperture_base_hi, private_segment_aperture_base_hi,
            max_cu_id, max_wave_id, max_legacy_doorbell_dispatch_id_plus_1, legacy_doorbell_lock, reserved2,
            read_dispatch_id, read_dispatch_id_field_base_byte_offset, compute_tmpring_size,
            scratch_resource_descriptor, scratch_backing_memory_location, scratch_backing_memory_byte_size,
            scratch_wave64_lane_byte_size, queue_properties, reserved3, queue_inactive_signal, reserved4,
        }),
        layout!("amd_signal_t" => AmdSignal {
            kind, value, event_mailbox_ptr, event_id, reserved1, start_ts, end_ts, queue_ptr, reserved3,
        }),
        // The unions inside amd_signal_t.
        constant!(
            "offsetof(amd_signal_t, hardware_doorbell_ptr)",
            core::mem::offset_of!(AmdSignal, value)
        ),
        constant!(
            "offsetof(amd_signal_t, reserved2)",
            core::mem::offset_of!(AmdSignal, queue_ptr)
        ),
        constant!(
            "HSA_PACKET_TYPE_VENDOR_SPECIFIC",
            PacketType::VENDOR_SPECIFIC.0
        ),
        constant!("HSA_PACKET_TYPE_INVALID", PacketType::INVALID.0),
        constant!(
            "HSA_PACKET_TYPE_KERNEL_DISPATCH",
            PacketType::KERNEL_DISPATCH.0
        ),
        constant!("HSA_PACKET_TYPE_BARRIER_AND", PacketType::BARRIER_AND.0),
        constant!(
            "HSA_PACKET_TYPE_AGENT_DISPATCH",
            PacketType::AGENT_DISPATCH.0
        ),
        constant!("HSA_PACKET_TYPE_BARRIER_OR", PacketType::BARRIER_OR.0),
        constant!("HSA_FENCE_SCOPE_NONE", FenceScope::None as u8),
        constant!("HSA_FENCE_SCOPE_AGENT", FenceScope::Agent as u8),
        constant!("HSA_FENCE_SCOPE_SYSTEM", FenceScope::System as u8),
        constant!("HSA_PACKET_HEADER_TYPE", header_bits::TYPE),
        constant!("HSA_PACKET_HEADER_WIDTH_TYPE", header_bits::WIDTH_TYPE),
        constant!("HSA_PACKET_HEADER_BARRIER", header_bits::BARRIER),
        constant!(
            "HSA_PACKET_HEADER_WIDTH_BARRIER",
            header_bits::WIDTH_BARRIER
        ),
        constant!(
            "HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE",
            header_bits::SCACQUIRE_FENCE_SCOPE
        ),
        constant!(
            "HSA_PACKET_HEADER_WIDTH_SCACQUIRE_FENCE_SCOPE",
            header_bits::WIDTH_SCACQUIRE_FENCE_SCOPE
        ),
        constant!(
            "HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE",
            header_bits::SCRELEASE_FENCE_SCOPE
        ),
        constant!(
            "HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE",
            header_bits::WIDTH_SCRELEASE_FENCE_SCOPE
        ),
        constant!(
            "HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS",
            header_bits::SETUP_DIMENSIONS
        ),
        constant!(
            "HSA_KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS",
            header_bits::SETUP_WIDTH_DIMENSIONS
        ),
        constant!(
            "HSA_AMD_PACKET_TYPE_BARRIER_VALUE",
            AmdFormat::BARRIER_VALUE.0
        ),
        constant!("HSA_SIGNAL_CONDITION_EQ", SignalCondition::EQ.0),
        constant!("HSA_SIGNAL_CONDITION_NE", SignalCondition::NE.0),
        constant!("HSA_SIGNAL_CONDITION_LT", SignalCondition::LT.0),
        constant!("HSA_SIGNAL_CONDITION_GTE", SignalCondition::GTE.0),
        constant!("HSA_QUEUE_TYPE_MULTI", HsaQueueType::MULTI.0),
        constant!("HSA_QUEUE_TYPE_SINGLE", HsaQueueType::SINGLE.0),
        constant!("HSA_QUEUE_TYPE_COOPERATIVE", HsaQueueType::COOPERATIVE.0),
        constant!(
            "HSA_QUEUE_FEATURE_KERNEL_DISPATCH",
            HSA_QUEUE_FEATURE_KERNEL_DISPATCH
        ),
        constant!(
            "HSA_QUEUE_FEATURE_AGENT_DISPATCH",
            HSA_QUEUE_FEATURE_AGENT_DISPATCH
        ),
        constant!(
            "AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER_SHIFT",
            properties_bits::ENABLE_TRAP_HANDLER
        ),
        constant!(
            "AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER",
            QueueProperties::ENABLE_TRAP_HANDLER.bits()
        ),
        constant!(
            "AMD_QUEUE_PROPERTIES_IS_PTR64_SHIFT",
            properties_bits::IS_PTR64
        ),
        constant!(
            "AMD_QUEUE_PROPERTIES_IS_PTR64",
            QueueProperties::IS_PTR64.bits()
        ),
        constant!(
            "AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER_DEBUG_SGPRS_SHIFT",
            properties_bits::ENABLE_TRAP_HANDLER_DEBUG_SGPRS
        ),
        constant!(
            "AMD_QUEUE_PROPERTIES_ENABLE_TRAP_HANDLER_DEBUG_SGPRS",
            QueueProperties::ENABLE_TRAP_HANDLER_DEBUG_SGPRS.bits()
        ),
        constant!(
            "AMD_QUEUE_PROPERTIES_ENABLE_PROFILING_SHIFT",
            properties_bits::ENABLE_PROFILING
        ),
        constant!(
            "AMD_QUEUE_PROPERTIES_ENABLE_PROFILING",
            QueueProperties::ENABLE_PROFILING.bits()
        ),
        constant!(
            "AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE_SHIFT",
            properties_bits::USE_SCRATCH_ONCE
        ),
        constant!(
            "AMD_QUEUE_PROPERTIES_USE_SCRATCH_ONCE",
            QueueProperties::USE_SCRATCH_ONCE.bits()
        ),
        constant!("AMD_QUEUE_ALIGN_BYTES", AMD_QUEUE_ALIGN_BYTES).ifdef(),
        constant!("AMD_SIGNAL_ALIGN_BYTES", AMD_SIGNAL_ALIGN_BYTES).ifdef(),
        constant!("AMD_SIGNAL_KIND_INVALID", SignalKind::INVALID.0),
        constant!("AMD_SIGNAL_KIND_USER", SignalKind::USER.0),
        constant!("AMD_SIGNAL_KIND_DOORBELL", SignalKind::DOORBELL.0),
        constant!(
            "AMD_SIGNAL_KIND_LEGACY_DOORBELL",
            SignalKind::LEGACY_DOORBELL.0
        ),
    ]
}
