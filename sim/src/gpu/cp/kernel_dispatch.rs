//! KERNEL_DISPATCH packets (aql.md §1.2, §7.3, §7.6): the checks the CP makes before it
//! launches a grid, and the scratch check that may halt the queue until the host grows
//! scratch.

use aql::KernelDispatchPacket;
use aql::packet::setup_dimensions;

use super::device_memory::DeviceMemory;
use super::queue_error::QueueError;
use crate::gpu::dispatch::ScratchSetup;
use crate::gpu::target::GfxTarget;
use crate::gpu::vm::Access;

/// The most work-items a workgroup may have on gfx9 (ROCr's
/// `HSA_AGENT_INFO_WORKGROUP_MAX_SIZE`).
pub(crate) const MAX_WORKGROUP_SIZE: u64 = 1024;

/// A kernel descriptor is 64 bytes, 64-byte aligned (LLVM AMDGPUUsage).
const KERNEL_DESCRIPTOR_BYTES: u64 = 64;

/// Check a dispatch packet. When several checks fail, the one reported is the one ROCr's
/// decoder would pick first from an error word holding them all (dimensions, group memory,
/// code object, workgroup size), so the status a runtime derives is the same either way.
///
/// - dimensions: `setup` holds 1..=3 dimensions; each used dimension has a non-zero workgroup
///   and grid size; each unused one has both equal to 1 (hsa.h). A grid smaller than its
///   workgroup is accepted (the only workgroup is partial), as HSA allows partial workgroups;
/// - group segment: at most the LDS a workgroup may use;
/// - code object: the kernel object is non-null, 64-byte aligned and its 64 bytes lie in
///   mapped memory. The CP reads the descriptor to program the dispatch; the model reports an
///   unmapped one as an invalid code object rather than as a VM fault, which is the reading of
///   aql.md §7.3 (the firmware's exact report is not documented);
/// - workgroup size: at most 1024 work-items.
pub(crate) fn validate(
    packet: &KernelDispatchPacket,
    lds_bytes_per_workgroup: u32,
    memory: &mut DeviceMemory,
) -> Result<(), QueueError> {
    let dimensions = usize::from(setup_dimensions(packet.setup));
    let workgroup = [
        u32::from(packet.workgroup_size_x),
        u32::from(packet.workgroup_size_y),
        u32::from(packet.workgroup_size_z),
    ];
    let grid = [packet.grid_size_x, packet.grid_size_y, packet.grid_size_z];
    let dimensions_valid = (1..=3).contains(&dimensions)
        && (0..3).all(|d| {
            if d < dimensions {
                workgroup[d] != 0 && grid[d] != 0
            } else {
                workgroup[d] == 1 && grid[d] == 1
            }
        });
    if !dimensions_valid {
        return Err(QueueError::InvalidDimensions);
    }
    if packet.group_segment_size > lds_bytes_per_workgroup {
        return Err(QueueError::InvalidGroupMemory);
    }
    let kernel_object = packet.kernel_object;
    if kernel_object == 0
        || kernel_object % KERNEL_DESCRIPTOR_BYTES != 0
        || memory
            .probe(kernel_object, KERNEL_DESCRIPTOR_BYTES, Access::Read)
            .is_err()
    {
        return Err(QueueError::InvalidCodeObject);
    }
    let workitems: u64 = workgroup.iter().map(|&w| u64::from(w)).product();
    if workitems > MAX_WORKGROUP_SIZE {
        return Err(QueueError::WorkgroupTooLarge);
    }
    Ok(())
}

/// Byte offset of `kernel_code_properties` (a `u16`) in a kernel descriptor.
const KERNEL_CODE_PROPERTIES_OFFSET: u64 = 56;
/// `ENABLE_WAVEFRONT_SIZE32` in `kernel_code_properties` (GFX10+).
const ENABLE_WAVEFRONT_SIZE32: u32 = 1 << 10;

/// The wave size the kernel at `kernel_object` runs at: 64 on GFX9 (the bit is reserved
/// there), else what its descriptor's `ENABLE_WAVEFRONT_SIZE32` says, as the CP programs
/// `COMPUTE_DISPATCH_INITIATOR.CS_W32_EN` from it. The descriptor was probed by [`validate`].
pub(crate) fn kernel_wave_size(
    kernel_object: u64,
    target: GfxTarget,
    memory: &mut DeviceMemory,
) -> Result<u32, QueueError> {
    if target.wave64_only() {
        return Ok(64);
    }
    let properties = memory.load_u32(
        kernel_object + KERNEL_CODE_PROPERTIES_OFFSET,
        std::sync::atomic::Ordering::Relaxed,
    )?;
    Ok(if properties & ENABLE_WAVEFRONT_SIZE32 != 0 {
        32
    } else {
        64
    })
}

/// Whether the queue's scratch covers the dispatch's private segment (aql.md §4, §7.6):
/// `scratch_wave64_lane_byte_size` is the per-lane scratch normalised to a 64-lane wave, so a
/// wave of `wave_size` lanes gets `× 64 / wave_size` bytes per lane. A dispatch without
/// private segment needs none.
pub(crate) fn scratch_sufficient(
    packet: &KernelDispatchPacket,
    scratch: &ScratchSetup,
    wave_size: u32,
) -> bool {
    if packet.private_segment_size == 0 {
        return true;
    }
    let per_lane = u64::from(scratch.wave64_lane_byte_size) * 64 / u64::from(wave_size.max(1));
    u64::from(packet.private_segment_size) <= per_lane
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(lane: u32) -> ScratchSetup {
        ScratchSetup {
            wave64_lane_byte_size: lane,
            ..Default::default()
        }
    }

    #[test]
    fn scratch_is_checked_per_lane() {
        let mut packet = KernelDispatchPacket::default();
        assert!(scratch_sufficient(&packet, &scratch(0), 64));
        packet.private_segment_size = 16;
        assert!(!scratch_sufficient(&packet, &scratch(0), 64));
        assert!(scratch_sufficient(&packet, &scratch(16), 64));
        packet.private_segment_size = 17;
        assert!(!scratch_sufficient(&packet, &scratch(16), 64));
        // A wave32 wave has half the lanes: twice the bytes per lane.
        assert!(scratch_sufficient(&packet, &scratch(16), 32));
        packet.private_segment_size = 33;
        assert!(!scratch_sufficient(&packet, &scratch(16), 32));
    }
}
