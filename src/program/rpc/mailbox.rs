//! The server's view of the shared RPC buffer: the mailboxes read and written with
//! system-scope atomics, headers and lane packets copied in and out.
//!
//! The buffer is fine-grained host memory, which the GPU reaches coherently while kernels
//! run; on the CPU, a `SeqCst`/`Acquire`/`Release` atomic on it is what LLVM's server does
//! with `__scoped_atomic_*(..., __MEMORY_SCOPE_SYSTEM)`. Every access runs inside
//! [`Buffer::with_host_memory`], so a concurrent shutdown cannot unmap the memory under it.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};

use super::layout::{Layout, PACKET_BYTES};
use crate::Buffer;
use crate::error::{Error, Result};

/// One lane's packet: eight `u64`.
pub type Packet = [u64; 8];

/// The shared buffer, seen from the server.
#[derive(Debug)]
pub struct Mailbox {
    buffer: Buffer,
    layout: Layout,
}

impl Mailbox {
    /// A view of `buffer`, which must be at least `layout.bytes()` long, zeroed, in
    /// host-accessible memory.
    pub fn new(buffer: Buffer, layout: Layout) -> Result<Self> {
        if (buffer.len() as u64) < layout.bytes() {
            return Err(Error::InvalidArgument(format!(
                "an RPC buffer of {} bytes; the layout needs {}",
                buffer.len(),
                layout.bytes()
            )));
        }
        buffer.with_host_memory(|host| match host {
            Some(_) => Ok(()),
            None => Err(Error::Unsupported(
                "the RPC buffer is not mapped on the CPU".into(),
            )),
        })?;
        Ok(Self { buffer, layout })
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    fn with<R>(&self, f: impl FnOnce(NonNull<u8>) -> R) -> Result<R> {
        self.buffer.with_host_memory(|host| {
            host.map(f)
                .ok_or_else(|| Error::Unsupported("the RPC buffer is not mapped".into()))
        })
    }

    /// The mailbox word at byte `offset` of `base`.
    ///
    /// # Safety
    ///
    /// `base` is the live mapping of the buffer and `offset + 4 <= layout.bytes()`, 4-aligned.
    unsafe fn word<'a>(base: NonNull<u8>, offset: u64) -> &'a AtomicU32 {
        // SAFETY: the caller guarantees the word lies in the mapped buffer and is aligned
        // (mailboxes start at offset 0 of a page-aligned mapping, 4 bytes each); the memory
        // is only ever accessed atomically by both sides, so an atomic view is sound.
        unsafe { AtomicU32::from_ptr(base.as_ptr().add(offset as usize).cast()) }
    }

    /// The server's inbox (the client's outbox) and outbox (the client's inbox) of `port`.
    fn boxes(base: NonNull<u8>, layout: Layout, port: u32) -> (u32, u32) {
        // SAFETY: `port < layout.ports`, so both words lie inside the mailbox arrays.
        let (inbox, outbox) = unsafe {
            (
                Self::word(base, layout.client_outbox() + 4 * u64::from(port)),
                Self::word(base, layout.client_inbox() + 4 * u64::from(port)),
            )
        };
        (
            inbox.load(Ordering::Relaxed),
            outbox.load(Ordering::Relaxed),
        )
    }

    /// The server's inbox of `port`.
    pub fn load_inbox(&self, port: u32) -> Result<u32> {
        self.check_port(port)?;
        let layout = self.layout;
        self.with(|base| Self::boxes(base, layout, port).0)
    }

    /// The server's outbox of `port`.
    pub fn load_outbox(&self, port: u32) -> Result<u32> {
        self.check_port(port)?;
        let layout = self.layout;
        self.with(|base| Self::boxes(base, layout, port).1)
    }

    /// Hand `port` to the client: release fence, then store `value` (the inverted outbox).
    pub fn store_outbox(&self, port: u32, value: u32) -> Result<()> {
        self.check_port(port)?;
        let offset = self.layout.client_inbox() + 4 * u64::from(port);
        self.with(|base| {
            fence(Ordering::Release);
            // SAFETY: `port < ports`: the word is inside the client's inbox array.
            unsafe { Self::word(base, offset) }.store(value, Ordering::Relaxed);
        })
    }

    /// The first port at or after `start` whose buffer the server owns (work pending).
    ///
    /// The hot loop of an idle server: it compares the two mailbox arrays eight bytes at a
    /// time (two ports per load) where their alignment allows, so that a scan of 4096 ports
    /// stays a few microseconds even in a debug build.
    pub fn pending(&self, start: u32) -> Result<Option<u32>> {
        let layout = self.layout;
        self.with(|base| {
            let ports = layout.ports;
            let mut port = start;
            // Pairs need the client's outbox array 8-aligned: an even port count.
            let pairs = ports % 2 == 0;
            while port < ports {
                if pairs && port % 2 == 0 && port + 1 < ports {
                    // SAFETY: `port + 1 < ports`, so both 8-byte words lie inside the two
                    // mailbox arrays of the mapped buffer; `port` is even and the port count
                    // is even, so each word is 8-aligned from the page-aligned base; the
                    // words are only ever accessed atomically.
                    let (inbox, outbox) = unsafe {
                        (
                            AtomicU64::from_ptr(
                                base.as_ptr()
                                    .add((layout.client_outbox() + 4 * u64::from(port)) as usize)
                                    .cast(),
                            ),
                            AtomicU64::from_ptr(
                                base.as_ptr()
                                    .add((layout.client_inbox() + 4 * u64::from(port)) as usize)
                                    .cast(),
                            ),
                        )
                    };
                    let differ = inbox.load(Ordering::Relaxed) ^ outbox.load(Ordering::Relaxed);
                    if differ != 0 {
                        // Little-endian: the low half is the even port.
                        return Some(port + u32::from(differ as u32 == 0));
                    }
                    port += 2;
                } else {
                    let (inbox, outbox) = Self::boxes(base, layout, port);
                    if inbox != outbox {
                        return Some(port);
                    }
                    port += 1;
                }
            }
            None
        })
    }

    /// `port`'s header: the live-lane mask and the opcode.
    pub fn header(&self, port: u32) -> Result<(u64, u32)> {
        self.check_port(port)?;
        let at = self.layout.headers() + 16 * u64::from(port);
        let mut bytes = [0u8; 12];
        self.read(at, &mut bytes)?;
        let mask = u64::from_le_bytes(bytes[..8].try_into().unwrap_or_default());
        let opcode = u32::from_le_bytes(bytes[8..].try_into().unwrap_or_default());
        Ok((mask, opcode))
    }

    /// Lane `lane`'s packet of `port`.
    pub fn read_packet(&self, port: u32, lane: u32) -> Result<Packet> {
        self.check_lane(port, lane)?;
        let mut bytes = [0u8; PACKET_BYTES as usize];
        self.read(self.layout.packet(port, lane), &mut bytes)?;
        let mut packet = [0u64; 8];
        for (word, chunk) in packet.iter_mut().zip(bytes.chunks_exact(8)) {
            *word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        }
        Ok(packet)
    }

    /// Write lane `lane`'s packet of `port`.
    pub fn write_packet(&self, port: u32, lane: u32, packet: &Packet) -> Result<()> {
        self.check_lane(port, lane)?;
        let mut bytes = [0u8; PACKET_BYTES as usize];
        for (chunk, word) in bytes.chunks_exact_mut(8).zip(packet) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        self.buffer
            .write(self.layout.packet(port, lane) as usize, &bytes)
    }

    fn read(&self, at: u64, bytes: &mut [u8]) -> Result<()> {
        self.buffer.read(at as usize, bytes)
    }

    fn check_port(&self, port: u32) -> Result<()> {
        if port < self.layout.ports {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "RPC port {port} of {}",
                self.layout.ports
            )))
        }
    }

    fn check_lane(&self, port: u32, lane: u32) -> Result<()> {
        self.check_port(port)?;
        if lane < self.layout.lanes {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "RPC lane {lane} of {}",
                self.layout.lanes
            )))
        }
    }
}
