//! Where things are in the shared RPC buffer, per protocol generation: the one place that
//! knows the wire layout (gpu-programs.md §3, §6).
//!
//! Checked against llvm-project `libc/shared/rpc.h` (read 2026-11, before the interrupt
//! doorbell): `Process::allocation_size`, `header_offset`, `buffer_offset`,
//! `MAX_PORT_COUNT = 4096`, and the `Client` object (`{u32 port_count; u32 *inbox;
//! u32 *outbox; Header *header; Buffer *packet; u32 lock[MAX_PORT_COUNT / 32]}`, 552 bytes).
//! The doorbell generation (llvm-project PR 188067) is recognised by its 2096-byte client
//! and refused for now: its layout is known only from the pull request's description, not
//! checked here against its source.

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
}

impl ProtocolVersion {
    /// The generation whose `__llvm_rpc_client` object has `size` bytes, if aqueduct speaks
    /// it. `Err` names the generation it recognised but does not speak, if any.
    pub fn from_client_size(size: u64) -> Result<Self, String> {
        match size {
            552 => Ok(Self::Polling),
            2096 => Err(
                "the interrupt-doorbell RPC protocol (LLVM main after March 2026, a \
                         2096-byte __llvm_rpc_client), which aqueduct does not speak yet"
                    .into(),
            ),
            other => Err(format!(
                "an RPC client object of {other} bytes, which matches no LLVM libc protocol \
                 aqueduct knows (552 bytes expected)"
            )),
        }
    }

    /// The most ports the protocol allows (`MAX_PORT_COUNT`).
    pub const fn max_ports(self) -> u32 {
        match self {
            Self::Polling => 4096,
        }
    }

    /// Bytes of the device's client object.
    pub const fn client_bytes(self) -> usize {
        match self {
            Self::Polling => 552,
        }
    }
}

/// The shared buffer's layout for a port count and a lane count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Ports.
    pub ports: u32,
    /// Lanes per port (the wavefront size).
    pub lanes: u32,
}

impl Layout {
    /// Offset of the client's inbox (the server's outbox).
    pub const fn client_inbox(&self) -> u64 {
        0
    }

    /// Offset of the client's outbox (the server's inbox).
    pub const fn client_outbox(&self) -> u64 {
        4 * self.ports as u64
    }

    /// Offset of the headers.
    pub const fn headers(&self) -> u64 {
        (8 * self.ports as u64).next_multiple_of(8)
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
    pub fn client_object(&self, version: ProtocolVersion, base: u64) -> Vec<u8> {
        let mut object = vec![0u8; version.client_bytes()];
        object[0..4].copy_from_slice(&self.ports.to_le_bytes());
        let pointers = [
            base + self.client_inbox(),
            base + self.client_outbox(),
            base + self.headers(),
            base + self.packets(),
        ];
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
            ports: 4096,
            lanes: 64,
        };
        assert_eq!(layout.client_outbox(), 16384);
        assert_eq!(layout.headers(), 32768);
        assert_eq!(layout.packets(), 32768 + 65536);
        assert_eq!(layout.bytes(), 98304 + 4096 * 64 * 64);
        assert_eq!(layout.packet(1, 2), 98304 + (64 + 2) * 64);
    }

    #[test]
    fn client_object_fields() {
        let layout = Layout {
            ports: 8,
            lanes: 64,
        };
        let object = layout.client_object(ProtocolVersion::Polling, 0x1000);
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
        assert!(
            ProtocolVersion::from_client_size(2096)
                .unwrap_err()
                .contains("doorbell")
        );
        assert!(ProtocolVersion::from_client_size(8).is_err());
    }
}
