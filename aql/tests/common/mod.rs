//! Host memory standing in for a mapped ring and `amd_queue_t`, and a consumer that behaves as
//! the CP does with them (aql.md §7.2, §7.7): wait for a non-INVALID header in index order,
//! read the packet after the acquire load, store INVALID back, then release the read index.

#![allow(dead_code)]

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use aql::{AmdQueue, Doorbell, PacketType, RawPacket, RingProducer};
use crossbeam_utils::Backoff;

/// The first word of a consumed or never-used slot.
pub const INVALID_WORD: u32 = PacketType::INVALID.0 as u32;

/// A ring of `slots` packets and its queue descriptor, in host memory accessed only atomically
/// once created.
pub struct HostQueue {
    ring: NonNull<RawPacket>,
    slots: u32,
    queue: NonNull<AmdQueue>,
}

// SAFETY: the memory is owned by the HostQueue and only accessed atomically through it.
unsafe impl Send for HostQueue {}
// SAFETY: as above.
unsafe impl Sync for HostQueue {}

impl HostQueue {
    /// Every header INVALID, both indices 0.
    pub fn new(slots: u32) -> Self {
        let invalid = RawPacket([u64::from(INVALID_WORD), 0, 0, 0, 0, 0, 0, 0]);
        let ring: Box<[RawPacket]> = vec![invalid; slots as usize].into_boxed_slice();
        let ring = NonNull::new(Box::into_raw(ring).cast::<RawPacket>()).unwrap();
        let mut descriptor = AmdQueue::default();
        descriptor.hsa_queue.size = slots;
        let queue = NonNull::new(Box::into_raw(Box::new(descriptor))).unwrap();
        Self { ring, slots, queue }
    }

    /// A producer over this ring.
    pub fn producer<D: Doorbell>(&self, doorbell: D) -> RingProducer<D> {
        // SAFETY: the ring is `slots` 64-byte-aligned RawPackets and the queue a live
        // AmdQueue, both owned by `self`, which the tests keep alive longer than the producer
        // (it borrows nothing, so the tests drop it first by scoping); all later access is
        // atomic; `slots` is a power of two and every header INVALID.
        unsafe { RingProducer::new(self.ring.cast(), self.slots, self.queue, doorbell) }
    }

    pub fn slots(&self) -> u32 {
        self.slots
    }

    pub fn read_index(&self) -> &AtomicU64 {
        // SAFETY: a live, aligned field of the owned descriptor, accessed only atomically.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.queue.as_ptr()).read_dispatch_id) }
    }

    pub fn write_index(&self) -> &AtomicU64 {
        // SAFETY: as in `read_index`.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.queue.as_ptr()).write_dispatch_id) }
    }

    fn slot(&self, index: u64) -> *mut RawPacket {
        let slot = (index % u64::from(self.slots)) as usize;
        // SAFETY: `slot` < slots.
        unsafe { self.ring.as_ptr().add(slot) }
    }

    /// Word `word` of packet `index`'s slot.
    pub fn word(&self, index: u64, word: usize) -> &AtomicU64 {
        // SAFETY: an aligned u64 inside an owned slot, accessed only atomically.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.slot(index)).0[word]) }
    }

    /// The 32-bit half `half` of packet `index`'s first word (0: header and setup).
    pub fn half(&self, index: u64, half: usize) -> &AtomicU32 {
        // SAFETY: an aligned u32 inside an owned slot (little-endian: half 0 is bytes 0..4),
        // accessed only atomically.
        unsafe { AtomicU32::from_ptr((&raw mut (*self.slot(index)).0[0]).cast::<u32>().add(half)) }
    }

    /// Whether packet `index` has been published: its header is valid, or the consumer has
    /// already moved past it. Called by the producer thread that reserved `index` (so the
    /// previous packet in the slot is known consumed); retries for a while because the
    /// consumer's INVALID store may be seen before its read-index store.
    pub fn published(&self, index: u64) -> bool {
        let deadline = Instant::now() + std::time::Duration::from_secs(5);
        let backoff = Backoff::new();
        loop {
            if self.read_index().load(Ordering::Acquire) > index
                || self.half(index, 0).load(Ordering::Acquire) != INVALID_WORD
            {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            backoff.snooze();
        }
    }

    /// Consume `count` packets as the CP does and return them, giving up (panicking) at
    /// `deadline`.
    pub fn consume(&self, count: usize, deadline: Instant) -> Vec<RawPacket> {
        let mut packets = Vec::with_capacity(count);
        self.consume_with(count, deadline, |raw| packets.push(raw));
        packets
    }

    /// Consume `count` packets as the CP does, handing each to `record`.
    pub fn consume_with(&self, count: usize, deadline: Instant, mut record: impl FnMut(RawPacket)) {
        let mut seen = 0;
        let mut next = self.read_index().load(Ordering::Acquire);
        let backoff = Backoff::new();
        while seen < count {
            let first = self.half(next, 0).load(Ordering::Acquire);
            if first as u8 == PacketType::INVALID.0 {
                assert!(
                    Instant::now() < deadline,
                    "consumer: packet {next} never published ({seen} of {count} seen)"
                );
                backoff.snooze();
                continue;
            }
            backoff.reset();
            let mut raw = RawPacket::default();
            raw.0[0] =
                u64::from(first) | u64::from(self.half(next, 1).load(Ordering::Relaxed)) << 32;
            for word in 1..8 {
                raw.0[word] = self.word(next, word).load(Ordering::Relaxed);
            }
            record(raw);
            seen += 1;
            self.half(next, 0).store(INVALID_WORD, Ordering::Relaxed);
            next += 1;
            self.read_index().store(next, Ordering::Release);
        }
    }

    /// Whether every slot header is INVALID.
    pub fn all_invalid(&self) -> bool {
        (0..u64::from(self.slots)).all(|i| self.half(i, 0).load(Ordering::Acquire) == INVALID_WORD)
    }
}

impl Drop for HostQueue {
    fn drop(&mut self) {
        // SAFETY: both were made by Box::into_raw in `new` with these types and lengths, and
        // nothing uses them any more (producers borrow `self` or were dropped first).
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.ring.as_ptr(),
                self.slots as usize,
            )));
            drop(Box::from_raw(self.queue.as_ptr()));
        }
    }
}

/// A doorbell that ignores its value.
#[derive(Debug, Default)]
pub struct NoDoorbell;

impl Doorbell for NoDoorbell {
    fn ring(&self, _write_index: u64) {}
}
