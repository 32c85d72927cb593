//! Where things are in the shared RPC buffer, per protocol generation: the one place that
//! knows the wire layout (gpu-programs.md §3, §6).
//!
//! Checked against llvm-project `libc/shared/rpc.h` in two generations:
//! - [`ProtocolVersion::Polling`] (read 2026-11 at a tree before the interrupt doorbell):
//!   `MAX_PORT_COUNT = 4096`; the buffer is `{u32 inbox[N]; u32 outbox[N]; Header[N];
//!   Buffer[N][L]}`; the `Client` object is `{u32 port_count; u32 *inbox; u32 *outbox;
//!   Header *header; Buffer *packet; u32 lock[MAX_PORT_COUNT / 32]}`, 552 bytes.
//! - [`ProtocolVersion::Doorbell`] (llvm-project PR 188067, March 2026): `MAX_PORT_COUNT =
//!   16384`; a 64-byte `Doorbell {u64 *value; u64 *mailbox; u32 event_id}` at offset 0 and
//!   everything else shifted by 64; the `Client` object gains a `Doorbell *doorbell` after
//!   `port_count`, 2096 bytes. A client rings the doorbell only when `value` is non-null;
//!   aqueduct leaves the record zeroed, so such images are served by polling too (the
//!   interrupt wake-up is not used yet).

/// Bytes of one lane's packet (`rpc::Buffer`: eight `u64`).
pub const PACKET_BYTES: u64 = 64;
/// Bytes of one port's header (`rpc::Header`: `u64 mask; u32 opcode`, padded to 16).
pub const HEADER_BYTES: u64 = 16;

/// A generation of LLVM libc's GPU RPC protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// Mailboxes at offset 0, no doorbell, at most 4096 ports; the client object is 552
    /// bytes. LLVM trees of 2024 to March 2026 (LLVM 19 to 22).
    Polling,
    /// A 64-byte doorbell record first, at most 16384 ports; the client object is 2096 bytes.
    /// LLVM main since March 2026 (PR 188067).
    Doorbell,
}

impl ProtocolVersion {
    /// The generation whose `__llvm_rpc_client` object has `size` bytes; `Err` says why none
    /// fits.
    pub fn from_client_size(size: u64) -> Result<Self, String> {
        match size {
            552 => Ok(Self::Polling),
            2096 => Ok(Self::Doorbell),
            other => Err(format!(
                "an RPC client object of {other} bytes, which matches no LLVM libc protocol \
                 aqueduct knows (552 or 2096 bytes)"
            )),
        }
    }

    /// The most ports the protocol allows (`MAX_PORT_COUNT`).
    pub const fn max_ports(self) -> u32 {
        match self {
            Self::Polling => 4096,
            Self::Doorbell => 16384,
        }
    }

    /// Bytes of the device's client object.
    pub const fn client_bytes(self) -> usize {
        match self {
            Self::Polling => 552,
            Self::Doorbell => 2096,
        }
    }

    /// Bytes before the mailboxes (the doorbell record).
    pub const fn prefix_bytes(self) -> u64 {
        match self {
            Self::Polling => 0,
            Self::Doorbell => 64,
        }
    }
}

/// The shared buffer's layout for a port count and a lane count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The protocol generation.
    pub version: ProtocolVersion,
    /// Ports.
    pub ports: u32,
    /// Lanes per port (the wavefront size).
    pub lanes: u32,
}

impl Layout {
    /// Offset of the doorbell record (meaningful for [`ProtocolVersion::Doorbell`]).
    pub const fn doorbell(&self) -> u64 {
        0
    }

    /// Offset of the client's inbox (the server's outbox).
    pub const fn client_inbox(&self) -> u64 {
        self.version.prefix_bytes()
    }

    /// Offset of the client's outbox (the server's inbox).
    pub const fn client_outbox(&self) -> u64 {
        self.version.prefix_bytes() + 4 * self.ports as u64
    }

    /// Offset of the headers.
    pub const fn headers(&self) -> u64 {
        (self.version.prefix_bytes() + 8 * self.ports as u64).next_multiple_of(8)
    }

    /// Offset of the packets.
    pub const fn packets(&self) -> u64 {
        (self.headers() + HEADER_BYTES * self.ports as u64).next_multiple_of(8)
    }

    /// Offset of port `port`'s packet for lane `lane`.
    pub const fn packet(&self, port: u32, lane: u32) -> u64 {
        self.packets() + (port as u64 * self.lanes as u64 + lane as u64) * PACKET_BYTES
    }

    /// Bytes of the whole buffer.
    pub const fn bytes(&self) -> u64 {
        self.packets() + self.ports as u64 * self.lanes as u64 * PACKET_BYTES
    }

    /// The device's client object over a buffer at `base` (a GPU address): the bytes to copy
    /// into `__llvm_rpc_client`, lock bits zero.
    pub fn client_object(&self, base: u64) -> Vec<u8> {
        let mut object = vec![0u8; self.version.client_bytes()];
        object[0..4].copy_from_slice(&self.ports.to_le_bytes());
        let mut pointers = Vec::with_capacity(5);
        if self.version == ProtocolVersion::Doorbell {
            pointers.push(base + self.doorbell());
        }
        pointers.extend([
            base + self.client_inbox(),
            base + self.client_outbox(),
            base + self.headers(),
            base + self.packets(),
        ]);
        for (i, pointer) in pointers.iter().enumerate() {
            object[8 + 8 * i..16 + 8 * i].copy_from_slice(&pointer.to_le_bytes());
        }
        object
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Process<...>::allocation_size(4096, 64)` and the offsets rpc.h computes.
    #[test]
    fn offsets_match_llvm() {
        let layout = Layout {
            version: ProtocolVersion::Polling,
            ports: 4096,
            lanes: 64,
        };
        assert_eq!(layout.client_outbox(), 16384);
        assert_eq!(layout.headers(), 32768);
        assert_eq!(layout.packets(), 32768 + 65536);
        assert_eq!(layout.bytes(), 98304 + 4096 * 64 * 64);
        assert_eq!(layout.packet(1, 2), 98304 + (64 + 2) * 64);
    }

    /// The doorbell generation: `sizeof(Doorbell) = 64` first, then the same arrays.
    #[test]
    fn doorbell_offsets_match_llvm() {
        let layout = Layout {
            version: ProtocolVersion::Doorbell,
            ports: 16384,
            lanes: 64,
        };
        assert_eq!(layout.client_inbox(), 64);
        assert_eq!(layout.client_outbox(), 64 + 65536);
        assert_eq!(layout.headers(), 64 + 131072);
        assert_eq!(layout.packets(), 64 + 131072 + 262144);
        assert_eq!(layout.bytes(), 64 + 131072 + 262144 + 16384 * 64 * 64);
        let object = layout.client_object(0x10000);
        assert_eq!(object.len(), 2096);
        let at = |i: usize| u64::from_le_bytes(object[i..i + 8].try_into().unwrap());
        assert_eq!(
            [at(8), at(16), at(24), at(32), at(40)],
            [
                0x10000,
                0x10040,
                0x10040 + 65536,
                0x10040 + 131072,
                0x10040 + 131072 + 262144
            ]
        );
        assert!(object[48..].iter().all(|&b| b == 0));
    }

    #[test]
    fn client_object_fields() {
        let layout = Layout {
            version: ProtocolVersion::Polling,
            ports: 8,
            lanes: 64,
        };
        let object = layout.client_object(0x1000);
        assert_eq!(object.len(), 552);
        assert_eq!(u32::from_le_bytes(object[0..4].try_into().unwrap()), 8);
        let at = |i: usize| u64::from_le_bytes(object[i..i + 8].try_into().unwrap());
        assert_eq!(
            [at(8), at(16), at(24), at(32)],
            [0x1000, 0x1020, 0x1040, 0x10c0]
        );
        assert!(object[40..].iter().all(|&b| b == 0));
    }

    #[test]
    fn generations_by_client_size() {
        assert_eq!(
            ProtocolVersion::from_client_size(552),
            Ok(ProtocolVersion::Polling)
        );
        assert_eq!(
            ProtocolVersion::from_client_size(2096),
            Ok(ProtocolVersion::Doorbell)
        );
        assert!(ProtocolVersion::from_client_size(8).is_err());
    }
}
