//! Packet fetch from the AQL ring (aql.md §7.1, §7.2, §7.7): where the write index is, where a
//! packet's slot is, the acquire-load of its first word, and the INVALID header written back
//! once it has been consumed.

use std::sync::atomic::Ordering;

use aql::packet::PACKET_SIZE;
use aql::{PacketType, RawPacket};

use super::device_memory::DeviceMemory;
use crate::gpu::vm::MemoryFault;

const SLOT_BYTES: u64 = PACKET_SIZE as u64;

/// A ring of 64-byte slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Ring {
    va: u64,
    /// Slots, a power of two.
    slots: u64,
}

/// What the slot at the read index holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fetched {
    /// The header is INVALID: not yet published. The CP stalls on it.
    NotReady,
    /// A published packet, read after the acquire-load of its first word.
    Packet(RawPacket),
}

impl Ring {
    /// The ring at `va` of `bytes` bytes, or `None` if it cannot hold a packet. KFD accepts
    /// only power-of-two sizes of at least 1 KiB (kfd.md §5.2); the CP's QUEUE_SIZE field can
    /// only express powers of two, so any other size is rounded down to one.
    pub(crate) fn new(va: u64, bytes: u64) -> Option<Self> {
        let slots = bytes / SLOT_BYTES;
        (slots > 0).then(|| Self {
            va,
            slots: 1 << slots.ilog2(),
        })
    }

    /// Number of slots.
    #[cfg(test)]
    pub(crate) fn slots(&self) -> u64 {
        self.slots
    }

    /// GPU address of the slot that packet `index` uses.
    pub(crate) fn slot_va(&self, index: u64) -> u64 {
        self.va + (index & (self.slots - 1)) * SLOT_BYTES
    }

    /// The write index the CP works to (aql.md §7.1): the newer of the doorbell (which holds
    /// the index of the last packet made ready, so +1) and `write_dispatch_id` (the WPTR poll
    /// address), but never more than one ring ahead of the read index, whatever garbage a
    /// doorbell or the write index holds.
    pub(crate) fn write_index(
        &self,
        read_index: u64,
        doorbell: Option<u64>,
        write_dispatch_id: u64,
    ) -> u64 {
        let from_doorbell = doorbell.map_or(0, |d| d.saturating_add(1));
        from_doorbell
            .max(write_dispatch_id)
            .min(read_index.saturating_add(self.slots))
    }

    /// Fetch packet `index`: acquire-load the first 32-bit word (header and setup, published
    /// by the producer's release store), and only then read the other 60 bytes.
    pub(crate) fn fetch(
        &self,
        memory: &mut DeviceMemory,
        index: u64,
    ) -> Result<Fetched, MemoryFault> {
        let va = self.slot_va(index);
        let first = memory.load_u32(va, Ordering::Acquire)?;
        if (first & 0xFF) as u8 == PacketType::INVALID.0 {
            return Ok(Fetched::NotReady);
        }
        let second = memory.load_u32(va + 4, Ordering::Relaxed)?;
        let mut words = [0u64; 8];
        words[0] = u64::from(first) | u64::from(second) << 32;
        for (i, word) in words.iter_mut().enumerate().skip(1) {
            *word = memory.load_u64(va + 8 * i as u64, Ordering::Relaxed)?;
        }
        Ok(Fetched::Packet(RawPacket(words)))
    }

    /// Mark packet `index`'s slot consumed: producers only ever write a header over INVALID.
    pub(crate) fn invalidate(
        &self,
        memory: &mut DeviceMemory,
        index: u64,
    ) -> Result<(), MemoryFault> {
        memory.store_u16(
            self.slot_va(index),
            u16::from(PacketType::INVALID.0),
            Ordering::Release,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_down_to_whole_power_of_two_rings() {
        assert_eq!(Ring::new(0, 4096).unwrap().slots(), 64);
        assert_eq!(Ring::new(0, 4096 + 64 * 3).unwrap().slots(), 64);
        assert_eq!(Ring::new(0, 64).unwrap().slots(), 1);
        assert_eq!(Ring::new(0, 63), None);
    }

    #[test]
    fn slots_wrap() {
        let ring = Ring::new(0x10000, 1024).unwrap();
        assert_eq!(ring.slot_va(0), 0x10000);
        assert_eq!(ring.slot_va(15), 0x10000 + 15 * 64);
        assert_eq!(ring.slot_va(16), 0x10000);
        assert_eq!(ring.slot_va(u64::MAX), 0x10000 + 15 * 64);
    }

    #[test]
    fn write_index_takes_the_newest_source_clamped_to_one_ring() {
        let ring = Ring::new(0, 1024).unwrap(); // 16 slots
        assert_eq!(ring.write_index(0, None, 0), 0);
        assert_eq!(ring.write_index(0, Some(0), 0), 1);
        assert_eq!(ring.write_index(0, Some(2), 5), 5);
        assert_eq!(ring.write_index(0, Some(7), 5), 8);
        assert_eq!(ring.write_index(3, Some(u64::MAX), 0), 3 + 16);
        assert_eq!(ring.write_index(3, None, 1000), 3 + 16);
        // A write index behind the read index means nothing is ready.
        assert_eq!(ring.write_index(10, Some(4), 2), 5);
    }
}
