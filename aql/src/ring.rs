//! The producer side of an AQL ring (aql.md §1.6, §2.5): reserve slots, write a packet's body,
//! publish its header, ring the doorbell. Any number of host threads may produce into one ring
//! through a shared [`RingProducer`].
//!
//! # Ring invariants
//!
//! Indices are 64-bit and never wrap (2^64 packets is centuries at any dispatch rate); packet
//! `i` lives in slot `i & (slots - 1)`. Two counters in `amd_queue_t` split the index space:
//! `write_dispatch_id` (W, advanced by producers) and `read_dispatch_id` (R, advanced by the
//! CP). Always `R <= W <= R + slots`. A packet index `i` is in exactly one of four states, and
//! its slot is owned by exactly one party in each:
//!
//! | state | when | owner | slot header |
//! |---|---|---|---|
//! | free | `i >= W` | nobody (the next reservation) | INVALID: its previous packet `i - slots` was consumed, or the slot was never used |
//! | reserved | `i < W`, header not yet published | the one producer whose reservation covered `i` | INVALID |
//! | published | header stored, `i >= R` | the CP | valid; the CP may read all 64 bytes |
//! | consumed | `i < R` | nobody until `i + slots` is reserved | INVALID again, stored by the CP before it advanced R past `i` |
//!
//! What the CP may read when: it may load the first 32-bit word of any slot at any time
//! (acquire); it reads bytes 4..64 only after that load returned a header that is not INVALID,
//! which happens only after the owning producer finished the body (release store of the
//! header). A reserved slot is therefore seen as INVALID and the CP stalls on it (it does not
//! fault), which is what makes it safe to reserve an index before the packet is written.
//!
//! The producer writes a slot only while it owns it (reserved), and every store it makes to ring
//! memory is atomic, so a caller that writes an index it does not own corrupts the queue (the
//! CP may run or reject a garbage packet) but causes no undefined behaviour.
//!
//! # Reservation: a compare-and-swap that reserves only where room exists
//!
//! ROCr reserves with `fetch_add(W, n)` and then waits until `i - R < slots`. That reserves
//! an index before its slot is free: a producer that then gives up (deadline, broken queue)
//! owns an index whose slot still holds an older packet the CP has not consumed, so it can
//! neither un-reserve (other producers may be past it) nor write a filler packet there, and
//! the CP would stall forever at the hole. [`RingProducer::reserve`] instead loads R, then W,
//! and moves W to `W + n` with a compare-and-swap only if `W + n - R <= slots`. R only grows, so
//! the room it saw is still there after the swap: a successful reservation is writable at once,
//! and giving up leaves no trace in the ring. Device-side producers that use ROCr's
//! fetch-and-add protocol on the same queue stay compatible: they only make W larger.
//!
//! # Doorbell
//!
//! After publishing, a producer rings the doorbell with the index of its packet (the last
//! packet it made ready, aql.md §2.5). With several producers the values may arrive out of
//! order; the CP takes a backward value as a wake-up only (its write pointer also comes from
//! `write_dispatch_id`, aql.md §7.1), and every value rung is the index of a published packet.

use std::fmt;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering, fence};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_utils::Backoff;
use thiserror::Error;

use crate::packet::{PacketType, RawPacket};
use crate::queue::AmdQueue;

/// First sleep once spinning for room has not helped.
const FIRST_SLEEP: Duration = Duration::from_micros(10);
/// Longest single sleep while waiting for room: bounds how late a producer notices room.
const LONGEST_SLEEP: Duration = Duration::from_millis(1);

/// The queue's doorbell: tells the CP that packets up to and including `write_index` may be
/// ready. `kfd::Doorbell::ring` has this shape.
pub trait Doorbell: Send + Sync {
    /// Store `write_index` (the index of the last packet made ready, not one past it).
    fn ring(&self, write_index: u64);
}

impl<D: Doorbell + ?Sized> Doorbell for &D {
    fn ring(&self, write_index: u64) {
        (**self).ring(write_index);
    }
}

impl<D: Doorbell + ?Sized> Doorbell for Arc<D> {
    fn ring(&self, write_index: u64) {
        (**self).ring(write_index);
    }
}

impl<D: Doorbell + ?Sized> Doorbell for Box<D> {
    fn ring(&self, write_index: u64) {
        (**self).ring(write_index);
    }
}

/// Why slots could not be reserved. The ring is unchanged in every case.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RingError {
    /// `count` is 0 or more than the ring holds: no wait could ever succeed.
    #[error("cannot reserve {count} slots in a ring of {slots}")]
    InvalidCount {
        /// Slots asked for.
        count: u64,
        /// Slots in the ring.
        slots: u32,
    },
    /// The ring stayed too full until the deadline.
    #[error(
        "no room for {count} packets before the deadline: write index {write_index}, read index {read_index}, {slots} slots"
    )]
    Timeout {
        /// Slots asked for.
        count: u64,
        /// `write_dispatch_id` when the producer gave up.
        write_index: u64,
        /// `read_dispatch_id` when the producer gave up.
        read_index: u64,
        /// Slots in the ring.
        slots: u32,
    },
    /// The caller's `abandon` check said to stop waiting (the queue is broken, the device is
    /// closing, ...), with its reason.
    #[error("stopped waiting for room in the ring: {0}")]
    Abandoned(String),
}

/// The producer side of one AQL ring. `Send + Sync`: producer threads share `&RingProducer`.
pub struct RingProducer<D: Doorbell> {
    /// Slot 0 of `slots`.
    ring: NonNull<RawPacket>,
    /// Slots in the ring, a power of two.
    slots: u32,
    /// The live `amd_queue_t` holding the two indices.
    queue: NonNull<AmdQueue>,
    doorbell: D,
    /// Whether the ring is reached through a write-combining mapping (device memory over the
    /// PCIe BAR): then stores may reach memory out of program order, and ROCr fences between
    /// the body and the header (aql.md §1.6 step 4).
    write_combined: bool,
}

impl<D: Doorbell> fmt::Debug for RingProducer<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RingProducer")
            .field("ring", &self.ring)
            .field("slots", &self.slots)
            .field("queue", &self.queue)
            .field("write_combined", &self.write_combined)
            .finish_non_exhaustive()
    }
}

// SAFETY: the producer holds raw pointers to ring and queue memory that `new`'s contract keeps
// alive and valid for the producer's whole life; every access through them is atomic, so using
// them from any thread, or from many threads at once, is sound. The doorbell is Send + Sync.
unsafe impl<D: Doorbell> Send for RingProducer<D> {}
// SAFETY: as above; `&self` methods only make atomic accesses to shared memory.
unsafe impl<D: Doorbell> Sync for RingProducer<D> {}

impl<D: Doorbell> RingProducer<D> {
    /// A producer over a ring the caller mapped.
    ///
    /// # Safety
    ///
    /// - `ring` points to `slots * 64` bytes, 64-byte aligned, readable and writable;
    /// - `queue` points to the live `amd_queue_t` of this ring (its `write_dispatch_id` and
    ///   `read_dispatch_id` are the ring's indices), readable and writable;
    /// - both stay valid for as long as the producer lives, and nothing accesses the indices or
    ///   the slots other than through atomic operations (the CP and other producers included);
    /// - `slots` is a power of two;
    /// - every slot `i` with `i >= write_dispatch_id` or `i < read_dispatch_id` (mod `slots`)
    ///   has an INVALID header, as after queue creation (ROCr sets every header INVALID).
    ///
    /// # Panics
    ///
    /// If `slots` is not a power of two or `ring` is not 64-byte aligned (caller bugs, checked
    /// because everything else relies on them).
    pub unsafe fn new(
        ring: NonNull<u8>,
        slots: u32,
        queue: NonNull<AmdQueue>,
        doorbell: D,
    ) -> Self {
        assert!(
            slots.is_power_of_two(),
            "an AQL ring holds a power of two of slots, not {slots}"
        );
        assert!(
            ring.as_ptr().addr() % align_of::<RawPacket>() == 0,
            "an AQL ring is 64-byte aligned; {ring:p} is not"
        );
        Self {
            // `RawPacket` is one 64-byte-aligned slot; the contract says the ring is aligned.
            ring: ring.cast::<RawPacket>(),
            slots,
            queue,
            doorbell,
            write_combined: false,
        }
    }

    /// Say whether the ring is mapped write-combining (device memory through the PCIe BAR).
    /// Then a full fence separates each packet's body from its header, as ROCr does for a
    /// ring in device memory, because such stores may otherwise reach memory out of order.
    #[must_use]
    pub fn write_combined(mut self, write_combined: bool) -> Self {
        self.write_combined = write_combined;
        self
    }

    /// Slots in the ring.
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// The doorbell.
    pub fn doorbell(&self) -> &D {
        &self.doorbell
    }

    /// `read_dispatch_id`: the next packet the CP will consume (acquire).
    pub fn read_index(&self) -> u64 {
        self.read_dispatch_id().load(Ordering::Acquire)
    }

    /// `write_dispatch_id`: one past the last reserved packet.
    pub fn write_index(&self) -> u64 {
        self.write_dispatch_id().load(Ordering::Acquire)
    }

    fn write_dispatch_id(&self) -> &AtomicU64 {
        // SAFETY: `new`'s contract: `queue` is a live, aligned amd_queue_t accessed only
        // atomically for as long as `self` lives; the field is an aligned u64.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.queue.as_ptr()).write_dispatch_id) }
    }

    fn read_dispatch_id(&self) -> &AtomicU64 {
        // SAFETY: as in `write_dispatch_id`.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.queue.as_ptr()).read_dispatch_id) }
    }

    /// Packet `index`'s slot.
    fn slot(&self, index: u64) -> *mut RawPacket {
        let slot = (index & u64::from(self.slots - 1)) as usize;
        // SAFETY: `slot` < slots, the number of slots `new`'s contract guarantees.
        unsafe { self.ring.as_ptr().add(slot) }
    }

    /// Word `word` (0..8) of packet `index`'s slot.
    fn slot_word(&self, index: u64, word: usize) -> &AtomicU64 {
        // SAFETY: `slot` is a live 64-byte-aligned slot of the ring, which `new`'s contract
        // keeps valid for the producer's life and accessed only atomically; the place is an
        // aligned u64 inside it (indexing panics rather than leave it).
        unsafe { AtomicU64::from_ptr(&raw mut (*self.slot(index)).0[word]) }
    }

    /// Half `half` (0: bytes 0..4, 1: bytes 4..8) of packet `index`'s first word.
    fn first_word_half(&self, index: u64, half: usize) -> &AtomicU32 {
        debug_assert!(half < 2);
        // SAFETY: as in `slot_word`; on this little-endian target bytes 0..4 hold the header
        // and setup, and the u32 places at offsets 0 and 4 of an aligned u64 are aligned and
        // inside the slot.
        unsafe {
            let first = (&raw mut (*self.slot(index)).0[0]).cast::<u32>();
            AtomicU32::from_ptr(first.add(half))
        }
    }

    /// Reserve `count` consecutive slots and return the first index; the caller then owns
    /// indices `first..first + count` and must publish each of them with [`write`](Self::write)
    /// (a reserved slot that is never published stalls the queue there).
    ///
    /// Waits while the ring has no room for all `count`: a bounded spin with
    /// [`crossbeam_utils::Backoff`], then sleeps that grow from 10 µs to 1 ms. Gives up at
    /// `deadline` ([`RingError::Timeout`]) or as soon as `abandon` returns a reason
    /// ([`RingError::Abandoned`]); `abandon` is called only while the ring is full. Giving up
    /// reserves nothing (see the module doc: reservation is a compare-and-swap).
    pub fn reserve(
        &self,
        count: u64,
        deadline: Option<Instant>,
        abandon: &dyn Fn() -> Option<String>,
    ) -> Result<u64, RingError> {
        let slots = u64::from(self.slots);
        if count == 0 || count > slots {
            return Err(RingError::InvalidCount {
                count,
                slots: self.slots,
            });
        }
        let backoff = Backoff::new();
        let mut sleep = FIRST_SLEEP;
        loop {
            // R first, then W: R <= W at every instant and both only grow, so this W is at
            // least the R just read, and `W - R` over-estimates the occupancy (never under).
            // Acquire on R: the CP stored INVALID into each consumed slot before it released
            // R, so the slots this reservation gets are seen INVALID and no longer read by it.
            let read = self.read_dispatch_id().load(Ordering::Acquire);
            let write = self.write_dispatch_id().load(Ordering::Relaxed);
            let used = write.wrapping_sub(read);
            if used <= slots - count {
                if self
                    .write_dispatch_id()
                    .compare_exchange_weak(
                        write,
                        // Wrapping: a garbage W near 2^64 must not panic.
                        write.wrapping_add(count),
                        Ordering::AcqRel,
                        Ordering::Relaxed,
                    )
                    .is_ok()
                {
                    return Ok(write);
                }
                // Another producer moved W (or a spurious failure): room may remain.
                backoff.spin();
                continue;
            }
            // Full (or `read` is beyond `write`, which a sane CP never does: then `used` is
            // huge and the producer waits, and the timeout reports both indices).
            if let Some(reason) = abandon() {
                return Err(RingError::Abandoned(reason));
            }
            if !backoff.is_completed() {
                backoff.snooze();
                continue;
            }
            let now = Instant::now();
            let nap = match deadline {
                Some(deadline) if now >= deadline => {
                    return Err(RingError::Timeout {
                        count,
                        write_index: write,
                        read_index: read,
                        slots: self.slots,
                    });
                }
                Some(deadline) => sleep.min(deadline - now),
                None => sleep,
            };
            thread::sleep(nap);
            sleep = (sleep * 2).min(LONGEST_SLEEP);
        }
    }

    /// Write `packet` into packet `index`'s slot and publish it: bytes 4..64 first, then the
    /// first 32-bit word (header and setup, or header and vendor format) with one release
    /// store, after which the CP owns the slot.
    ///
    /// `index` must be one this caller reserved and has not published yet; the header must not
    /// be INVALID (the CP would stall at it forever). Writing another index corrupts the queue
    /// but, every store being atomic, is not undefined behaviour.
    pub fn write(&self, index: u64, packet: &RawPacket) {
        debug_assert!(
            self.slot_header(index) == PacketType::INVALID.0,
            "packet {index}: writing a slot whose header is not INVALID (not reserved by this caller?)"
        );
        debug_assert!(
            packet.header().packet_type() != PacketType::INVALID,
            "packet {index}: publishing an INVALID header stalls the queue"
        );
        self.first_word_half(index, 1)
            .store((packet.0[0] >> 32) as u32, Ordering::Relaxed);
        for (word, &value) in packet.0.iter().enumerate().skip(1) {
            self.slot_word(index, word).store(value, Ordering::Relaxed);
        }
        if self.write_combined {
            // On x86-64 a SeqCst fence is `mfence`, which also drains write-combining buffers
            // (the `sfence` ROCr issues would do). Release ordering alone says nothing about
            // WC memory, which the language's model does not describe.
            fence(Ordering::SeqCst);
        }
        self.first_word_half(index, 0)
            .store(packet.0[0] as u32, Ordering::Release);
    }

    /// The type byte of packet `index`'s slot header (acquire).
    fn slot_header(&self, index: u64) -> u8 {
        self.first_word_half(index, 0).load(Ordering::Acquire) as u8
    }

    /// Ring the doorbell with `index`, the last packet this caller made ready.
    pub fn ring_doorbell(&self, index: u64) {
        self.doorbell.ring(index);
    }

    /// Reserve one slot, write and publish `packet` there, ring the doorbell; returns the
    /// packet's index. Waits for room as [`reserve`](Self::reserve) does.
    pub fn submit(
        &self,
        packet: &RawPacket,
        deadline: Option<Instant>,
        abandon: &dyn Fn() -> Option<String>,
    ) -> Result<u64, RingError> {
        let index = self.reserve(1, deadline, abandon)?;
        self.write(index, packet);
        self.ring_doorbell(index);
        Ok(index)
    }
}
