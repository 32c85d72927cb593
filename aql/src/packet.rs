//! AQL packets (64 bytes each) and the bit fields of their first 32-bit word, as `hsa.h` and
//! `hsa_ext_amd.h` define them (aql.md §1). Field names follow the C headers.
//!
//! The packet structs have C's natural alignment (8), as in the headers; ring slots are
//! 64-byte aligned because the ring is, which [`RawPacket`] (a slot) states in its type.

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Every AQL packet is 64 bytes and 64-byte aligned in the ring.
pub const PACKET_SIZE: usize = 64;

/// `hsa_packet_type_t`, bits 7:0 of the header. Open: the command processor reads whatever
/// the producer wrote, and an unknown type is a queue error, not undefined behaviour.
#[repr(transparent)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct PacketType(pub u8);

impl PacketType {
    /// `HSA_PACKET_TYPE_VENDOR_SPECIFIC`: an AMD vendor packet (see [`AmdFormat`]).
    pub const VENDOR_SPECIFIC: Self = Self(0);
    /// `HSA_PACKET_TYPE_INVALID`: consumed or not yet published; the CP stalls on it.
    pub const INVALID: Self = Self(1);
    /// `HSA_PACKET_TYPE_KERNEL_DISPATCH`.
    pub const KERNEL_DISPATCH: Self = Self(2);
    /// `HSA_PACKET_TYPE_BARRIER_AND`.
    pub const BARRIER_AND: Self = Self(3);
    /// `HSA_PACKET_TYPE_AGENT_DISPATCH`: not supported by GPU queues.
    pub const AGENT_DISPATCH: Self = Self(4);
    /// `HSA_PACKET_TYPE_BARRIER_OR`.
    pub const BARRIER_OR: Self = Self(5);
}

/// `hsa_fence_scope_t`, the acquire (bits 10:9) and release (bits 12:11) scopes of a header.
#[repr(u8)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FenceScope {
    /// `HSA_FENCE_SCOPE_NONE`.
    #[default]
    None = 0,
    /// `HSA_FENCE_SCOPE_AGENT`.
    Agent = 1,
    /// `HSA_FENCE_SCOPE_SYSTEM`.
    System = 2,
}

impl FenceScope {
    /// Decode two header bits; the reserved value 3 is returned as `None`.
    pub const fn from_bits(bits: u16) -> Option<Self> {
        match bits {
            0 => Some(Self::None),
            1 => Some(Self::Agent),
            2 => Some(Self::System),
            _ => None,
        }
    }
}

/// Bit offsets and widths of the header fields (`hsa_packet_header_t`,
/// `hsa_packet_header_width_t`).
pub mod header_bits {
    /// `HSA_PACKET_HEADER_TYPE`.
    pub const TYPE: u32 = 0;
    /// `HSA_PACKET_HEADER_WIDTH_TYPE`.
    pub const WIDTH_TYPE: u32 = 8;
    /// `HSA_PACKET_HEADER_BARRIER`.
    pub const BARRIER: u32 = 8;
    /// `HSA_PACKET_HEADER_WIDTH_BARRIER`.
    pub const WIDTH_BARRIER: u32 = 1;
    /// `HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE`.
    pub const SCACQUIRE_FENCE_SCOPE: u32 = 9;
    /// `HSA_PACKET_HEADER_WIDTH_SCACQUIRE_FENCE_SCOPE`.
    pub const WIDTH_SCACQUIRE_FENCE_SCOPE: u32 = 2;
    /// `HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE`.
    pub const SCRELEASE_FENCE_SCOPE: u32 = 11;
    /// `HSA_PACKET_HEADER_WIDTH_SCRELEASE_FENCE_SCOPE`.
    pub const WIDTH_SCRELEASE_FENCE_SCOPE: u32 = 2;
    /// `HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS`.
    pub const SETUP_DIMENSIONS: u32 = 0;
    /// `HSA_KERNEL_DISPATCH_PACKET_SETUP_WIDTH_DIMENSIONS`.
    pub const SETUP_WIDTH_DIMENSIONS: u32 = 2;
}

const fn field(word: u16, shift: u32, width: u32) -> u16 {
    (word >> shift) & ((1 << width) - 1)
}

const fn with_field(word: u16, shift: u32, width: u32, value: u16) -> u16 {
    let mask = ((1u16 << width) - 1) << shift;
    (word & !mask) | ((value << shift) & mask)
}

/// The 16-bit packet header.
#[repr(transparent)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct Header(pub u16);

impl Header {
    /// A header of the given type, no barrier, no fences.
    pub const fn new(packet_type: PacketType) -> Self {
        Self(packet_type.0 as u16)
    }

    /// The packet type.
    pub const fn packet_type(self) -> PacketType {
        PacketType(field(self.0, header_bits::TYPE, header_bits::WIDTH_TYPE) as u8)
    }

    /// Whether the barrier bit is set: the packet does not launch before every earlier packet
    /// of the queue has completed.
    pub const fn barrier(self) -> bool {
        field(self.0, header_bits::BARRIER, header_bits::WIDTH_BARRIER) != 0
    }

    /// The raw acquire fence scope bits.
    pub const fn acquire_bits(self) -> u16 {
        field(
            self.0,
            header_bits::SCACQUIRE_FENCE_SCOPE,
            header_bits::WIDTH_SCACQUIRE_FENCE_SCOPE,
        )
    }

    /// The raw release fence scope bits.
    pub const fn release_bits(self) -> u16 {
        field(
            self.0,
            header_bits::SCRELEASE_FENCE_SCOPE,
            header_bits::WIDTH_SCRELEASE_FENCE_SCOPE,
        )
    }

    /// The acquire fence scope (`None` for the reserved value 3).
    pub const fn acquire_fence_scope(self) -> Option<FenceScope> {
        FenceScope::from_bits(self.acquire_bits())
    }

    /// The release fence scope (`None` for the reserved value 3).
    pub const fn release_fence_scope(self) -> Option<FenceScope> {
        FenceScope::from_bits(self.release_bits())
    }

    /// Set or clear the barrier bit.
    #[must_use]
    pub const fn with_barrier(self, barrier: bool) -> Self {
        Self(with_field(
            self.0,
            header_bits::BARRIER,
            header_bits::WIDTH_BARRIER,
            barrier as u16,
        ))
    }

    /// Set the acquire fence scope.
    #[must_use]
    pub const fn with_acquire(self, scope: FenceScope) -> Self {
        Self(with_field(
            self.0,
            header_bits::SCACQUIRE_FENCE_SCOPE,
            header_bits::WIDTH_SCACQUIRE_FENCE_SCOPE,
            scope as u16,
        ))
    }

    /// Set the release fence scope.
    #[must_use]
    pub const fn with_release(self, scope: FenceScope) -> Self {
        Self(with_field(
            self.0,
            header_bits::SCRELEASE_FENCE_SCOPE,
            header_bits::WIDTH_SCRELEASE_FENCE_SCOPE,
            scope as u16,
        ))
    }

    /// The first 32-bit word of a packet: this header in the low half and `rest` (dispatch
    /// setup, or the vendor format byte) in the high half. Publishing a packet is one atomic
    /// release store of this word.
    pub const fn first_word(self, rest: u16) -> u32 {
        self.0 as u32 | (rest as u32) << 16
    }
}

/// The dispatch `setup` field: bits 1:0 hold the number of grid dimensions (1..=3).
pub const fn dispatch_setup(dimensions: u16) -> u16 {
    with_field(
        0,
        header_bits::SETUP_DIMENSIONS,
        header_bits::SETUP_WIDTH_DIMENSIONS,
        dimensions,
    )
}

/// The number of dimensions in a dispatch `setup` field.
pub const fn setup_dimensions(setup: u16) -> u16 {
    field(
        setup,
        header_bits::SETUP_DIMENSIONS,
        header_bits::SETUP_WIDTH_DIMENSIONS,
    )
}

/// `hsa_kernel_dispatch_packet_t`.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct KernelDispatchPacket {
    /// [`Header`] bits.
    pub header: u16,
    /// [`dispatch_setup`] bits.
    pub setup: u16,
    /// Work-items per workgroup, X.
    pub workgroup_size_x: u16,
    /// Work-items per workgroup, Y (1 if unused).
    pub workgroup_size_y: u16,
    /// Work-items per workgroup, Z (1 if unused).
    pub workgroup_size_z: u16,
    /// Must be 0.
    pub reserved0: u16,
    /// Work-items in the grid, X (not workgroups).
    pub grid_size_x: u32,
    /// Work-items in the grid, Y.
    pub grid_size_y: u32,
    /// Work-items in the grid, Z.
    pub grid_size_z: u32,
    /// Scratch bytes per work-item.
    pub private_segment_size: u32,
    /// LDS bytes per workgroup (static plus dynamic).
    pub group_segment_size: u32,
    /// GPU address of the 64-byte kernel descriptor.
    pub kernel_object: u64,
    /// GPU address of the kernarg segment (16-byte aligned).
    pub kernarg_address: u64,
    /// Must be 0.
    pub reserved2: u64,
    /// Address of an `amd_signal_t` decremented on completion, or 0.
    pub completion_signal: u64,
}

/// `hsa_barrier_and_packet_t` and `hsa_barrier_or_packet_t` (identical layouts).
///
/// AND waits until every non-null dependency reads 0 (null counts as satisfied); OR waits until
/// any dependency reads 0 (null counts as unsatisfied).
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct BarrierPacket {
    /// [`Header`] bits (type BARRIER_AND or BARRIER_OR).
    pub header: u16,
    /// Must be 0.
    pub reserved0: u16,
    /// Must be 0.
    pub reserved1: u32,
    /// Dependency signals (`amd_signal_t` addresses) or 0.
    pub dep_signal: [u64; 5],
    /// Must be 0.
    pub reserved2: u64,
    /// Address of an `amd_signal_t` decremented on completion, or 0.
    pub completion_signal: u64,
}

/// `hsa_amd_packet_type_t`: the `AmdFormat` byte of an AMD vendor packet.
#[repr(transparent)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct AmdFormat(pub u8);

impl AmdFormat {
    /// `AMD_AQL_FORMAT_PM4_IB` (gfx9+): a PM4 indirect buffer (ROCr `amd_aql_queue.cpp`; not
    /// in the Debian `hsa_ext_amd.h`).
    pub const PM4_IB: Self = Self(1);
    /// `HSA_AMD_PACKET_TYPE_BARRIER_VALUE`.
    pub const BARRIER_VALUE: Self = Self(2);
}

/// `hsa_amd_vendor_packet_header_t`: the first 4 bytes of an AMD vendor packet.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct AmdVendorPacketHeader {
    /// [`Header`] bits with type VENDOR_SPECIFIC.
    pub header: u16,
    /// `AmdFormat`: one of [`AmdFormat`].
    pub amd_format: u8,
    /// Must be 0.
    pub reserved: u8,
}

/// `hsa_signal_condition_t`: how a barrier-value packet (and a host wait) compares.
#[repr(transparent)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SignalCondition(pub u32);

impl SignalCondition {
    /// `HSA_SIGNAL_CONDITION_EQ`.
    pub const EQ: Self = Self(0);
    /// `HSA_SIGNAL_CONDITION_NE`.
    pub const NE: Self = Self(1);
    /// `HSA_SIGNAL_CONDITION_LT` (signed).
    pub const LT: Self = Self(2);
    /// `HSA_SIGNAL_CONDITION_GTE` (signed).
    pub const GTE: Self = Self(3);

    /// Evaluate `value <cond> compare`; `None` for an unknown condition.
    pub const fn holds(self, value: i64, compare: i64) -> Option<bool> {
        match self.0 {
            0 => Some(value == compare),
            1 => Some(value != compare),
            2 => Some(value < compare),
            3 => Some(value >= compare),
            _ => None,
        }
    }
}

/// `hsa_amd_barrier_value_packet_t`: waits until `(signal.value & mask) cond value`.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct BarrierValuePacket {
    /// Vendor header, `amd_format` = BARRIER_VALUE.
    pub header: AmdVendorPacketHeader,
    /// Must be 0.
    pub reserved0: u32,
    /// The signal to watch (0 counts as satisfied).
    pub signal: u64,
    /// The comparand.
    pub value: i64,
    /// Mask applied to the signal value first.
    pub mask: i64,
    /// One of [`SignalCondition`].
    pub cond: u32,
    /// Must be 0.
    pub reserved1: u32,
    /// Must be 0.
    pub reserved2: u64,
    /// Must be 0.
    pub reserved3: u64,
    /// Address of an `amd_signal_t` decremented on completion, or 0.
    pub completion_signal: u64,
}

/// One ring slot as raw little-endian words, for code that inspects packets of any type.
#[repr(C, align(64))]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct RawPacket(pub [u64; 8]);

impl RawPacket {
    /// The header (low 16 bits of the first word).
    pub const fn header(&self) -> Header {
        Header(self.0[0] as u16)
    }

    /// The completion signal (bytes 56..64, the same place in every packet type).
    pub const fn completion_signal(&self) -> u64 {
        self.0[7]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_fields_round_trip() {
        let h = Header::new(PacketType::KERNEL_DISPATCH)
            .with_barrier(true)
            .with_acquire(FenceScope::System)
            .with_release(FenceScope::Agent);
        assert_eq!(h.0, 2 | 1 << 8 | 2 << 9 | 1 << 11);
        assert_eq!(h.packet_type(), PacketType::KERNEL_DISPATCH);
        assert!(h.barrier());
        assert_eq!(h.acquire_fence_scope(), Some(FenceScope::System));
        assert_eq!(h.release_fence_scope(), Some(FenceScope::Agent));
        assert_eq!(Header(3 << 9).acquire_fence_scope(), None);
        assert!(!h.with_barrier(false).barrier());
        assert_eq!(h.first_word(dispatch_setup(3)), u32::from(h.0) | 3 << 16);
        assert_eq!(setup_dimensions(dispatch_setup(2)), 2);
    }

    #[test]
    fn conditions_compare_signed() {
        assert_eq!(SignalCondition::LT.holds(-1, 0), Some(true));
        assert_eq!(SignalCondition::GTE.holds(-1, 0), Some(false));
        assert_eq!(SignalCondition(9).holds(0, 0), None);
    }
}
