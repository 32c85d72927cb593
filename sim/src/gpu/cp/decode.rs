//! Decoding a fetched slot into a packet the CP executes (aql.md §1, §7.3): the header's type,
//! barrier bit and fence scopes, the AMD vendor formats, and the reserved fields every packet
//! kind must leave at zero.
//!
//! Reserved fields: hsa.h says "must be 0" for each of them, and the simulator enforces it with
//! INVALID_PACKET_FORMAT (0x20), as the checklist in aql.md §7.3 asks. Whether the firmware
//! checks them or ignores them is not documented; a producer that zeroes them (ROCr, tinygrad,
//! aqueduct) behaves the same either way.

use aql::packet::setup_dimensions;
use aql::{
    AmdFormat, BarrierPacket, BarrierValuePacket, FenceScope, KernelDispatchPacket, PacketType,
    RawPacket,
};

use super::pm4::IndirectBuffer;
use super::queue_error::QueueError;

/// Header bits 15:13 are reserved.
const HEADER_RESERVED_MASK: u16 = 0xE000;

/// What a packet asks the CP to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Command {
    /// HSA_PACKET_TYPE_KERNEL_DISPATCH.
    KernelDispatch(KernelDispatchPacket),
    /// HSA_PACKET_TYPE_BARRIER_AND.
    BarrierAnd(BarrierPacket),
    /// HSA_PACKET_TYPE_BARRIER_OR.
    BarrierOr(BarrierPacket),
    /// AMD vendor packet, AmdFormat 2.
    BarrierValue(BarrierValuePacket),
    /// AMD vendor packet, AmdFormat 1.
    Pm4IndirectBuffer(IndirectBuffer),
}

/// A validated packet header and its command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Packet {
    /// The barrier bit.
    pub(crate) barrier: bool,
    /// Fence applied when the packet enters its active phase.
    pub(crate) acquire: FenceScope,
    /// Fence applied before the completion signal changes.
    pub(crate) release: FenceScope,
    /// The completion signal handle (0 = none), at bytes 56..64 in every packet kind.
    pub(crate) completion_signal: u64,
    /// What to do.
    pub(crate) command: Command,
}

/// Decode the packet in a slot whose header is not INVALID.
pub(crate) fn decode(raw: &RawPacket) -> Result<Packet, QueueError> {
    let header = raw.header();
    if header.0 & HEADER_RESERVED_MASK != 0 {
        return Err(QueueError::InvalidPacketFormat);
    }
    let (Some(acquire), Some(release)) =
        (header.acquire_fence_scope(), header.release_fence_scope())
    else {
        return Err(QueueError::InvalidPacketFormat);
    };
    let command = match header.packet_type() {
        PacketType::KERNEL_DISPATCH => {
            let packet: KernelDispatchPacket = zerocopy::transmute!(*raw);
            if packet.reserved0 != 0
                || packet.reserved2 != 0
                || packet.setup != setup_dimensions(packet.setup)
            {
                return Err(QueueError::InvalidPacketFormat);
            }
            Command::KernelDispatch(packet)
        }
        kind @ (PacketType::BARRIER_AND | PacketType::BARRIER_OR) => {
            let packet: BarrierPacket = zerocopy::transmute!(*raw);
            if packet.reserved0 != 0 || packet.reserved1 != 0 || packet.reserved2 != 0 {
                return Err(QueueError::InvalidPacketFormat);
            }
            if kind == PacketType::BARRIER_AND {
                Command::BarrierAnd(packet)
            } else {
                Command::BarrierOr(packet)
            }
        }
        PacketType::VENDOR_SPECIFIC => decode_vendor(raw)?,
        // AGENT_DISPATCH is not a feature of GPU queues (ROCr advertises KERNEL_DISPATCH only),
        // and types above 5 do not exist. INVALID never gets here: the fetch stalls on it.
        _ => return Err(QueueError::InvalidPacketFormat),
    };
    Ok(Packet {
        barrier: header.barrier(),
        acquire,
        release,
        completion_signal: raw.completion_signal(),
        command,
    })
}

fn decode_vendor(raw: &RawPacket) -> Result<Command, QueueError> {
    let word = raw.0[0] as u32;
    let format = AmdFormat((word >> 16) as u8);
    let reserved = (word >> 24) as u8;
    match format {
        AmdFormat::BARRIER_VALUE => {
            let packet: BarrierValuePacket = zerocopy::transmute!(*raw);
            if reserved != 0
                || packet.reserved0 != 0
                || packet.reserved1 != 0
                || packet.reserved2 != 0
                || packet.reserved3 != 0
            {
                return Err(QueueError::InvalidPacketFormat);
            }
            if aql::SignalCondition(packet.cond).holds(0, 0).is_none() {
                return Err(QueueError::InvalidPacketFormat);
            }
            Ok(Command::BarrierValue(packet))
        }
        AmdFormat::PM4_IB if reserved == 0 => {
            IndirectBuffer::decode(raw).map(Command::Pm4IndirectBuffer)
        }
        AmdFormat::PM4_IB => Err(QueueError::InvalidPacketFormat),
        // Formats 3 (AIE ERT, not a GPU packet) and 0xFE (ROCr's intercept marker, never meant
        // for the CP) and everything else.
        _ => Err(QueueError::UnsupportedVendorPacket),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aql::Header;
    use aql::packet::dispatch_setup;

    fn header(kind: PacketType) -> Header {
        Header::new(kind)
    }
    use zerocopy::IntoBytes;

    fn raw_of<T: IntoBytes + zerocopy::Immutable>(packet: &T) -> RawPacket {
        let mut raw = RawPacket::default();
        raw.as_mut_bytes().copy_from_slice(packet.as_bytes());
        raw
    }

    fn dispatch() -> KernelDispatchPacket {
        KernelDispatchPacket {
            header: header(PacketType::KERNEL_DISPATCH)
                .with_barrier(true)
                .with_acquire(FenceScope::System)
                .with_release(FenceScope::Agent)
                .0,
            setup: dispatch_setup(1),
            workgroup_size_x: 64,
            workgroup_size_y: 1,
            workgroup_size_z: 1,
            grid_size_x: 64,
            grid_size_y: 1,
            grid_size_z: 1,
            kernel_object: 0x1000,
            completion_signal: 0xabc0,
            ..Default::default()
        }
    }

    #[test]
    fn a_dispatch_decodes_with_its_header_fields() {
        let packet = decode(&raw_of(&dispatch())).unwrap();
        assert!(packet.barrier);
        assert_eq!(packet.acquire, FenceScope::System);
        assert_eq!(packet.release, FenceScope::Agent);
        assert_eq!(packet.completion_signal, 0xabc0);
        assert_eq!(packet.command, Command::KernelDispatch(dispatch()));
    }

    #[test]
    fn reserved_bits_and_scopes_are_format_errors() {
        let mut bad = dispatch();
        bad.header |= 0x2000;
        assert_eq!(decode(&raw_of(&bad)), Err(QueueError::InvalidPacketFormat));
        let mut bad = dispatch();
        bad.header |= 3 << 9;
        assert_eq!(decode(&raw_of(&bad)), Err(QueueError::InvalidPacketFormat));
        let mut bad = dispatch();
        bad.reserved2 = 1;
        assert_eq!(decode(&raw_of(&bad)), Err(QueueError::InvalidPacketFormat));
        let mut bad = dispatch();
        bad.setup |= 0x10;
        assert_eq!(decode(&raw_of(&bad)), Err(QueueError::InvalidPacketFormat));
    }

    #[test]
    fn agent_dispatch_and_unknown_types_are_format_errors() {
        for kind in [4u8, 6, 0x80, 0xFF] {
            let mut raw = RawPacket::default();
            raw.0[0] = u64::from(kind);
            assert_eq!(
                decode(&raw),
                Err(QueueError::InvalidPacketFormat),
                "type {kind}"
            );
        }
    }

    #[test]
    fn barriers_decode_and_check_reserved_fields() {
        let packet = BarrierPacket {
            header: header(PacketType::BARRIER_OR).0,
            dep_signal: [1, 2, 3, 4, 5],
            completion_signal: 0x40,
            ..Default::default()
        };
        assert_eq!(
            decode(&raw_of(&packet)).unwrap().command,
            Command::BarrierOr(packet)
        );
        let bad = BarrierPacket {
            reserved1: 1,
            ..packet
        };
        assert_eq!(decode(&raw_of(&bad)), Err(QueueError::InvalidPacketFormat));
    }

    #[test]
    fn vendor_formats() {
        let mut value = BarrierValuePacket::default();
        value.header.header = header(PacketType::VENDOR_SPECIFIC).0;
        value.header.amd_format = AmdFormat::BARRIER_VALUE.0;
        value.cond = aql::SignalCondition::GTE.0;
        assert_eq!(
            decode(&raw_of(&value)).unwrap().command,
            Command::BarrierValue(value)
        );
        let bad_cond = BarrierValuePacket { cond: 4, ..value };
        assert_eq!(
            decode(&raw_of(&bad_cond)),
            Err(QueueError::InvalidPacketFormat)
        );
        for format in [0u8, 3, 0xFE] {
            let mut other = value;
            other.header.amd_format = format;
            assert_eq!(
                decode(&raw_of(&other)),
                Err(QueueError::UnsupportedVendorPacket),
                "format {format}"
            );
        }
    }
}
