//! Packet builders that refuse, before anything reaches a ring, what the CP would reject with a
//! queue error (aql.md §5A, §7.3), and the ABI rules the CP does not check but a kernel relies
//! on (kernel descriptor and kernarg alignment).
//!
//! - [`DispatchBuilder`] and [`validate_dispatch`]: KERNEL_DISPATCH;
//! - [`barrier_and`], [`barrier_or`], [`barrier_value`]: the barrier packets;
//! - [`AqlPacket`]: header settings shared by every packet, and the conversion to the
//!   [`RawPacket`] a [`RingProducer`](crate::RingProducer) publishes.
//!
//! Every builder leaves reserved fields 0 and starts from the conservative header ROCr and HIP
//! use: barrier bit clear, system-scope acquire and release fences.

use thiserror::Error;
use zerocopy::{FromBytes, Immutable, IntoBytes};

use crate::packet::{
    AmdFormat, AmdVendorPacketHeader, BarrierPacket, BarrierValuePacket, FenceScope, Header,
    KernelDispatchPacket, PacketType, RawPacket, dispatch_setup, setup_dimensions,
};
use crate::queue::queue_error;
use crate::signal::Condition;

/// Header bits 15:13 are reserved (aql.md §1.1).
const HEADER_RESERVED_MASK: u16 = 0xE000;
/// A kernel descriptor is 64 bytes and 64-byte aligned (LLVM AMDGPUUsage).
const KERNEL_OBJECT_ALIGN: u64 = 64;
/// The kernarg segment is at least 16-byte aligned (LLVM AMDGPUUsage).
const KERNARG_ALIGN: u64 = 16;
/// A barrier packet has five dependency slots.
pub const MAX_BARRIER_DEPENDENCIES: usize = 5;

/// What a packet was refused for. [`queue_error`](Self::queue_error) names the error word the
/// CP would have posted for it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PacketError {
    /// The header has reserved bits set or a reserved fence scope (3).
    #[error("packet header {0:#06x}: reserved bits set or reserved fence scope")]
    InvalidHeader(u16),
    /// The packet's header type is not the one the packet's layout belongs to.
    #[error("header type {found} where a {expected} packet belongs")]
    WrongType {
        /// The type the layout needs.
        expected: u8,
        /// The type found.
        found: u8,
    },
    /// A field the ABI reserves is not 0.
    #[error("reserved field {0} is not 0")]
    ReservedField(&'static str),
    /// The dispatch does not have 1 to 3 dimensions (or `setup` has reserved bits set).
    #[error("a dispatch has 1 to 3 dimensions; setup {setup:#x} says {dimensions}")]
    Dimensions {
        /// The `setup` word.
        setup: u16,
        /// The dimensions it encodes.
        dimensions: u16,
    },
    /// A used dimension has a zero workgroup or grid size.
    #[error("dimension {axis}: workgroup size {workgroup} and grid size {grid} must be non-zero")]
    EmptyDimension {
        /// `x`, `y` or `z`.
        axis: char,
        /// Work-items per workgroup along it.
        workgroup: u16,
        /// Work-items in the grid along it.
        grid: u32,
    },
    /// An unused dimension does not have workgroup and grid size 1.
    #[error(
        "unused dimension {axis}: workgroup and grid size must be 1, not {workgroup} and {grid}"
    )]
    UnusedDimension {
        /// `y` or `z`.
        axis: char,
        /// Work-items per workgroup along it.
        workgroup: u16,
        /// Work-items in the grid along it.
        grid: u32,
    },
    /// The group segment (LDS) is larger than a workgroup may use.
    #[error("group segment of {size} bytes exceeds the {limit} bytes of LDS a workgroup may use")]
    GroupSegmentTooLarge {
        /// Bytes asked for.
        size: u32,
        /// Bytes allowed.
        limit: u32,
    },
    /// The kernel object is null.
    #[error("kernel object is null")]
    NullKernelObject,
    /// The kernel object is not 64-byte aligned.
    #[error("kernel object {0:#x} is not 64-byte aligned")]
    MisalignedKernelObject(u64),
    /// The workgroup has more work-items than the device allows.
    #[error("workgroup of {size} work-items exceeds the limit of {limit}")]
    WorkgroupTooLarge {
        /// Work-items per workgroup.
        size: u64,
        /// The most allowed.
        limit: u32,
    },
    /// The kernarg segment is not 16-byte aligned.
    #[error("kernarg address {0:#x} is not 16-byte aligned")]
    MisalignedKernarg(u64),
    /// The private segment per work-item is larger than any queue's scratch can provide.
    #[error("private segment of {size} bytes per work-item exceeds the limit of {limit}")]
    PrivateSegmentTooLarge {
        /// Bytes per work-item asked for.
        size: u32,
        /// Bytes allowed.
        limit: u32,
    },
    /// More dependencies than a barrier packet holds.
    #[error("a barrier packet holds at most 5 dependency signals, not {0}")]
    TooManyDependencies(usize),
    /// A barrier-OR without a non-null dependency: null counts as unsatisfied, so it would
    /// block its queue until the queue is destroyed.
    #[error("a barrier-OR packet needs at least one non-null dependency signal")]
    NoDependency,
}

impl PacketError {
    /// The `queue_inactive_signal` error word the CP would post for this packet (aql.md §5A),
    /// or `None` for rules the CP does not check (the kernel would misbehave instead, or the
    /// queue would block forever).
    pub const fn queue_error(&self) -> Option<i64> {
        match self {
            Self::InvalidHeader(_) | Self::WrongType { .. } | Self::ReservedField(_) => {
                Some(queue_error::INVALID_PACKET_FORMAT)
            }
            Self::Dimensions { .. }
            | Self::EmptyDimension { .. }
            | Self::UnusedDimension { .. } => Some(queue_error::INVALID_DIMENSIONS),
            Self::GroupSegmentTooLarge { .. } => Some(queue_error::INVALID_GROUP_MEMORY),
            Self::NullKernelObject | Self::MisalignedKernelObject(_) => {
                Some(queue_error::INVALID_CODE_OBJECT)
            }
            Self::WorkgroupTooLarge { .. } => Some(queue_error::WORKGROUP_TOO_LARGE),
            Self::MisalignedKernarg(_)
            | Self::PrivateSegmentTooLarge { .. }
            | Self::TooManyDependencies(_)
            | Self::NoDependency => None,
        }
    }
}

/// The device limits a dispatch is checked against (from the agent's properties).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DispatchLimits {
    /// Most work-items per workgroup (`HSA_AGENT_INFO_WORKGROUP_MAX_SIZE`).
    pub max_workgroup_size: u32,
    /// LDS bytes a workgroup may use.
    pub max_group_segment_size: u32,
    /// Scratch bytes a work-item may use.
    pub max_private_segment_size: u32,
}

impl DispatchLimits {
    /// gfx9 (gfx900 to gfx942): 1024 work-items, 64 KiB of LDS per workgroup, and
    /// 131,056 private bytes per work-item.
    ///
    /// The private limit is derived, not quoted: COMPUTE_TMPRING_SIZE.WAVESIZE has 13 bits in
    /// 1 KiB units on gfx9, so a wave gets at most 8,387,584 bytes (ROCr's
    /// `MAX_WAVE_SCRATCH`), which is 131,056 bytes for each of 64 lanes. ROCr's own limit
    /// at queue creation (262,128 bytes) is larger; which one the firmware enforces per
    /// dispatch is not documented.
    pub const GFX9: Self = Self {
        max_workgroup_size: 1024,
        max_group_segment_size: 64 * 1024,
        max_private_segment_size: 8_387_584 / 64,
    };

    /// gfx11 (RDNA3): 1024 work-items, 64 KiB of LDS per workgroup, and 131,068 private bytes
    /// per work-item: WAVESIZE has 15 bits in 256-byte units there (ROCr aligns a wave's
    /// scratch to 256 bytes from GFX11), 8,388,352 bytes per wave over 64 lanes. Wave32
    /// kernels could have twice that per lane; the limit does not depend on the kernel, so it
    /// is the wave64 one.
    pub const GFX11: Self = Self {
        max_workgroup_size: 1024,
        max_group_segment_size: 64 * 1024,
        max_private_segment_size: 0x7FFF * 256 / 64,
    };

    /// The limits of an ISA with this major version (9 for gfx9xx, 11 for gfx11xx): GFX9's
    /// below 11 (GFX10 has GFX9's scratch wave size), GFX11's from 11 (unsure for GFX12).
    pub const fn for_gfx_major(major: u32) -> Self {
        if major >= 11 { Self::GFX11 } else { Self::GFX9 }
    }
}

impl Default for DispatchLimits {
    fn default() -> Self {
        Self::GFX9
    }
}

mod sealed {
    /// Where a packet keeps its header word; not nameable outside this crate, so only this
    /// crate's packet types implement [`AqlPacket`](super::AqlPacket) and nothing outside can
    /// rewrite a header's type bits through it.
    pub trait HeaderWord {
        fn header_word(&mut self) -> &mut u16;
    }
}

/// Header settings shared by every packet type, and the ring-slot image.
pub trait AqlPacket: sealed::HeaderWord + Copy + IntoBytes + FromBytes + Immutable {
    /// The packet's header.
    fn header(&self) -> Header;

    /// Replace the barrier bit and fence scopes, keeping the type.
    fn set_header_bits(&mut self, header: Header) {
        let packet_type = self.header().packet_type();
        let word = self.header_word();
        *word = (header.0 & !0xFF) | u16::from(packet_type.0);
    }

    /// Set the barrier bit: the packet does not launch before every earlier packet of its
    /// queue has completed.
    #[must_use]
    fn barrier(mut self, barrier: bool) -> Self {
        let header = self.header().with_barrier(barrier);
        self.set_header_bits(header);
        self
    }

    /// Set the acquire fence scope (applied when the packet enters its active phase).
    #[must_use]
    fn acquire(mut self, scope: FenceScope) -> Self {
        let header = self.header().with_acquire(scope);
        self.set_header_bits(header);
        self
    }

    /// Set the release fence scope (applied before the completion signal changes).
    #[must_use]
    fn release(mut self, scope: FenceScope) -> Self {
        let header = self.header().with_release(scope);
        self.set_header_bits(header);
        self
    }

    /// The packet as a ring slot: its first 32-bit word is the header in the low half and the
    /// dispatch `setup` (or the vendor format byte) in the high half, as it is published.
    fn to_raw(&self) -> RawPacket {
        let mut raw = RawPacket::default();
        raw.as_mut_bytes().copy_from_slice(self.as_bytes());
        raw
    }
}

/// The header every builder starts from.
const fn default_header(packet_type: PacketType) -> Header {
    Header::new(packet_type)
        .with_acquire(FenceScope::System)
        .with_release(FenceScope::System)
}

impl sealed::HeaderWord for KernelDispatchPacket {
    fn header_word(&mut self) -> &mut u16 {
        &mut self.header
    }
}

impl AqlPacket for KernelDispatchPacket {
    fn header(&self) -> Header {
        Header(self.header)
    }
}

impl sealed::HeaderWord for BarrierPacket {
    fn header_word(&mut self) -> &mut u16 {
        &mut self.header
    }
}

impl AqlPacket for BarrierPacket {
    fn header(&self) -> Header {
        Header(self.header)
    }
}

impl sealed::HeaderWord for BarrierValuePacket {
    fn header_word(&mut self) -> &mut u16 {
        &mut self.header.header
    }
}

impl AqlPacket for BarrierValuePacket {
    fn header(&self) -> Header {
        Header(self.header.header)
    }
}

fn check_header(header: Header, expected: PacketType) -> Result<(), PacketError> {
    if header.0 & HEADER_RESERVED_MASK != 0
        || header.acquire_fence_scope().is_none()
        || header.release_fence_scope().is_none()
    {
        return Err(PacketError::InvalidHeader(header.0));
    }
    if header.packet_type() != expected {
        return Err(PacketError::WrongType {
            expected: expected.0,
            found: header.packet_type().0,
        });
    }
    Ok(())
}

/// Check a dispatch packet as the CP does, in the CP's order (format, dimensions, group
/// memory, code object, workgroup size; the sim's `cp::kernel_dispatch::validate`), then the
/// ABI rules the CP leaves to the kernel (kernarg alignment) and the private segment limit.
///
/// The CP also refuses a kernel object that is not mapped; only the caller can know that.
pub fn validate_dispatch(
    packet: &KernelDispatchPacket,
    limits: &DispatchLimits,
) -> Result<(), PacketError> {
    check_header(packet.header(), PacketType::KERNEL_DISPATCH)?;
    if packet.reserved0 != 0 {
        return Err(PacketError::ReservedField("reserved0"));
    }
    if packet.reserved2 != 0 {
        return Err(PacketError::ReservedField("reserved2"));
    }
    let dimensions = setup_dimensions(packet.setup);
    if packet.setup != dimensions || !(1..=3).contains(&dimensions) {
        return Err(PacketError::Dimensions {
            setup: packet.setup,
            dimensions,
        });
    }
    let workgroup = [
        packet.workgroup_size_x,
        packet.workgroup_size_y,
        packet.workgroup_size_z,
    ];
    let grid = [packet.grid_size_x, packet.grid_size_y, packet.grid_size_z];
    for (d, axis) in ['x', 'y', 'z'].into_iter().enumerate() {
        let (workgroup, grid) = (workgroup[d], grid[d]);
        if d < usize::from(dimensions) {
            if workgroup == 0 || grid == 0 {
                return Err(PacketError::EmptyDimension {
                    axis,
                    workgroup,
                    grid,
                });
            }
        } else if workgroup != 1 || grid != 1 {
            return Err(PacketError::UnusedDimension {
                axis,
                workgroup,
                grid,
            });
        }
    }
    if packet.group_segment_size > limits.max_group_segment_size {
        return Err(PacketError::GroupSegmentTooLarge {
            size: packet.group_segment_size,
            limit: limits.max_group_segment_size,
        });
    }
    if packet.kernel_object == 0 {
        return Err(PacketError::NullKernelObject);
    }
    if packet.kernel_object % KERNEL_OBJECT_ALIGN != 0 {
        return Err(PacketError::MisalignedKernelObject(packet.kernel_object));
    }
    let size: u64 = workgroup.iter().map(|&w| u64::from(w)).product();
    if size > u64::from(limits.max_workgroup_size) {
        return Err(PacketError::WorkgroupTooLarge {
            size,
            limit: limits.max_workgroup_size,
        });
    }
    if packet.kernarg_address % KERNARG_ALIGN != 0 {
        return Err(PacketError::MisalignedKernarg(packet.kernarg_address));
    }
    if packet.private_segment_size > limits.max_private_segment_size {
        return Err(PacketError::PrivateSegmentTooLarge {
            size: packet.private_segment_size,
            limit: limits.max_private_segment_size,
        });
    }
    Ok(())
}

/// Builds a KERNEL_DISPATCH packet and checks it with [`validate_dispatch`].
///
/// ```
/// use aql::builder::{AqlPacket, DispatchBuilder, DispatchLimits};
/// let packet = DispatchBuilder::new(0x7f00_0000_1000, 0x7f00_0000_2000)
///     .grid_2d([1920, 1080], [16, 16])
///     .group_segment_size(4096)
///     .completion_signal(0x7f00_0000_3000)
///     .build(&DispatchLimits::GFX9)
///     .unwrap()
///     .barrier(true);
/// assert_eq!(packet.setup, 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DispatchBuilder {
    packet: KernelDispatchPacket,
}

impl DispatchBuilder {
    /// A one-work-item dispatch of the kernel whose descriptor is at `kernel_object`, with its
    /// kernarg segment at `kernarg_address` (0 if the kernel takes none). Default header
    /// (barrier clear, system-scope fences), no segments, no completion signal.
    pub fn new(kernel_object: u64, kernarg_address: u64) -> Self {
        Self {
            packet: KernelDispatchPacket {
                header: default_header(PacketType::KERNEL_DISPATCH).0,
                kernel_object,
                kernarg_address,
                ..KernelDispatchPacket::default()
            }
            .with_geometry(1, [1, 1, 1], [1, 1, 1]),
        }
    }

    /// `grid` work-items (not workgroups) in workgroups of `workgroup`, one dimension.
    #[must_use]
    pub fn grid_1d(self, grid: u32, workgroup: u16) -> Self {
        self.geometry(1, [grid, 1, 1], [workgroup, 1, 1])
    }

    /// Two dimensions.
    #[must_use]
    pub fn grid_2d(self, grid: [u32; 2], workgroup: [u16; 2]) -> Self {
        self.geometry(2, [grid[0], grid[1], 1], [workgroup[0], workgroup[1], 1])
    }

    /// Three dimensions.
    #[must_use]
    pub fn grid_3d(self, grid: [u32; 3], workgroup: [u16; 3]) -> Self {
        self.geometry(3, grid, workgroup)
    }

    /// Every geometry field as given, checked only by [`build`](Self::build).
    #[must_use]
    pub fn geometry(mut self, dimensions: u16, grid: [u32; 3], workgroup: [u16; 3]) -> Self {
        self.packet = self.packet.with_geometry(dimensions, grid, workgroup);
        self
    }

    /// LDS bytes per workgroup (static plus dynamic).
    #[must_use]
    pub fn group_segment_size(mut self, bytes: u32) -> Self {
        self.packet.group_segment_size = bytes;
        self
    }

    /// Scratch bytes per work-item.
    #[must_use]
    pub fn private_segment_size(mut self, bytes: u32) -> Self {
        self.packet.private_segment_size = bytes;
        self
    }

    /// The signal decremented when the dispatch completes (0: none).
    #[must_use]
    pub fn completion_signal(mut self, handle: u64) -> Self {
        self.packet.completion_signal = handle;
        self
    }

    /// The barrier bit.
    #[must_use]
    pub fn barrier(mut self, barrier: bool) -> Self {
        self.packet = self.packet.barrier(barrier);
        self
    }

    /// The acquire fence scope.
    #[must_use]
    pub fn acquire(mut self, scope: FenceScope) -> Self {
        self.packet = self.packet.acquire(scope);
        self
    }

    /// The release fence scope.
    #[must_use]
    pub fn release(mut self, scope: FenceScope) -> Self {
        self.packet = self.packet.release(scope);
        self
    }

    /// The packet, if [`validate_dispatch`] accepts it.
    pub fn build(&self, limits: &DispatchLimits) -> Result<KernelDispatchPacket, PacketError> {
        validate_dispatch(&self.packet, limits)?;
        Ok(self.packet)
    }
}

trait WithGeometry {
    fn with_geometry(self, dimensions: u16, grid: [u32; 3], workgroup: [u16; 3]) -> Self;
}

impl WithGeometry for KernelDispatchPacket {
    fn with_geometry(mut self, dimensions: u16, grid: [u32; 3], workgroup: [u16; 3]) -> Self {
        // Out-of-range dimension counts are kept as they are, for `validate_dispatch` to
        // refuse: `dispatch_setup` would silently truncate them to two bits.
        self.setup = if dimensions <= 3 {
            dispatch_setup(dimensions)
        } else {
            dimensions
        };
        [self.grid_size_x, self.grid_size_y, self.grid_size_z] = grid;
        [
            self.workgroup_size_x,
            self.workgroup_size_y,
            self.workgroup_size_z,
        ] = workgroup;
        self
    }
}

fn barrier_packet(
    packet_type: PacketType,
    dependencies: &[u64],
    completion_signal: u64,
) -> Result<BarrierPacket, PacketError> {
    if dependencies.len() > MAX_BARRIER_DEPENDENCIES {
        return Err(PacketError::TooManyDependencies(dependencies.len()));
    }
    let mut dep_signal = [0; MAX_BARRIER_DEPENDENCIES];
    dep_signal[..dependencies.len()].copy_from_slice(dependencies);
    Ok(BarrierPacket {
        header: default_header(packet_type).0,
        dep_signal,
        completion_signal,
        ..BarrierPacket::default()
    })
}

/// A barrier-AND packet: completes (decrementing `completion_signal`, if not 0) once every
/// dependency signal has been observed at 0. Null handles count as satisfied; no dependency
/// at all makes a packet that completes at once (a queue marker).
pub fn barrier_and(
    dependencies: &[u64],
    completion_signal: u64,
) -> Result<BarrierPacket, PacketError> {
    barrier_packet(PacketType::BARRIER_AND, dependencies, completion_signal)
}

/// A barrier-OR packet: completes once any dependency signal is observed at 0. Null handles
/// count as unsatisfied, so at least one must be non-null.
pub fn barrier_or(
    dependencies: &[u64],
    completion_signal: u64,
) -> Result<BarrierPacket, PacketError> {
    if dependencies.iter().all(|&handle| handle == 0) {
        return Err(PacketError::NoDependency);
    }
    barrier_packet(PacketType::BARRIER_OR, dependencies, completion_signal)
}

/// An AMD barrier-value packet: completes once `(signal.value & mask) condition value` holds
/// (signed 64-bit; a null `signal` counts as satisfied). "Only kernel dispatch queues created
/// from AMD GPU agents support this packet" (`hsa_ext_amd.h`).
pub fn barrier_value(
    signal: u64,
    condition: Condition,
    value: i64,
    mask: i64,
    completion_signal: u64,
) -> BarrierValuePacket {
    BarrierValuePacket {
        header: AmdVendorPacketHeader {
            header: default_header(PacketType::VENDOR_SPECIFIC).0,
            amd_format: AmdFormat::BARRIER_VALUE.0,
            reserved: 0,
        },
        signal,
        value,
        mask,
        cond: condition as u32,
        completion_signal,
        ..BarrierValuePacket::default()
    }
}
