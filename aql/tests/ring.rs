//! The ring producer against a consumer that behaves like the CP, on host memory.

mod common;

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use aql::{Doorbell, PacketType, RawPacket, RingError, RingProducer};
use common::{HostQueue, NoDoorbell};
use test_support::{wait, watchdog};

const PRODUCERS: u64 = 8;
const PACKETS_PER_PRODUCER: u64 = 10_000;

/// A packet that names its producer and sequence number in every body word, so a torn or
/// mixed-up packet is noticed. Type KERNEL_DISPATCH (any valid type would do).
fn tagged(producer: u64, sequence: u64) -> RawPacket {
    let tag = producer << 32 | sequence;
    let mut raw = RawPacket::default();
    raw.0[0] = u64::from(PacketType::KERNEL_DISPATCH.0) | (tag ^ 0x5555) << 32;
    for (word, value) in raw.0.iter_mut().enumerate().skip(1) {
        *value = tag.rotate_left(word as u32 * 7) ^ word as u64;
    }
    raw
}

/// The (producer, sequence) a packet made by `tagged` carries, after checking every word.
fn tag_of(raw: &RawPacket) -> (u64, u64) {
    let tag = raw.0[1].rotate_right(7) ^ 1u64.rotate_right(7);
    assert_eq!(*raw, tagged(tag >> 32, tag & 0xFFFF_FFFF), "torn packet");
    (tag >> 32, tag & 0xFFFF_FFFF)
}

/// A doorbell that checks every value it is rung with was reserved and published, and keeps
/// the highest.
struct CheckingDoorbell<'a> {
    queue: &'a HostQueue,
    rings: AtomicU64,
    highest: AtomicU64,
}

impl Doorbell for CheckingDoorbell<'_> {
    fn ring(&self, write_index: u64) {
        assert!(
            write_index < self.queue.write_index().load(Ordering::Acquire),
            "doorbell {write_index} beyond the write index"
        );
        assert!(
            self.queue.published(write_index),
            "doorbell rung with {write_index}, which was never published"
        );
        self.rings.fetch_add(1, Ordering::Relaxed);
        self.highest.fetch_max(write_index, Ordering::Relaxed);
    }
}

#[test]
fn eight_producers_through_a_small_ring_lose_and_duplicate_nothing() {
    let queue = HostQueue::new(64);
    let doorbell = CheckingDoorbell {
        queue: &queue,
        rings: AtomicU64::new(0),
        highest: AtomicU64::new(0),
    };
    let producer = queue.producer(&doorbell);
    let total = (PRODUCERS * PACKETS_PER_PRODUCER) as usize;
    let deadline = Instant::now() + Duration::from_secs(120);
    let watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "eight producers and the consumer to end",
    );
    let packets = thread::scope(|s| {
        let consumer = s.spawn(|| queue.consume(total, deadline));
        for id in 0..PRODUCERS {
            let producer = &producer;
            s.spawn(move || {
                for sequence in 0..PACKETS_PER_PRODUCER {
                    producer
                        .submit(&tagged(id, sequence), Some(deadline), &|| None)
                        .expect("submit");
                }
            });
        }
        consumer.join().expect("consumer")
    });
    drop(watchdog);

    // Every packet once, and each producer's packets in the order it submitted them (its
    // indices grow, and the consumer takes indices in order).
    assert_eq!(packets.len(), total);
    let mut next = HashMap::new();
    for raw in &packets {
        let (id, sequence) = tag_of(raw);
        let expected = next.entry(id).or_insert(0);
        assert_eq!(sequence, *expected, "producer {id}: lost or duplicated");
        *expected += 1;
    }
    assert_eq!(next.len(), PRODUCERS as usize);
    assert!(next.values().all(|&n| n == PACKETS_PER_PRODUCER));

    assert_eq!(producer.write_index(), total as u64);
    assert_eq!(producer.read_index(), total as u64);
    assert!(queue.all_invalid());
    assert_eq!(doorbell.rings.load(Ordering::Relaxed), total as u64);
    assert_eq!(doorbell.highest.load(Ordering::Relaxed), total as u64 - 1);
    // Many wrap-arounds.
    assert!(total as u64 / u64::from(queue.slots()) >= 1000);
}

fn fill(producer: &RingProducer<NoDoorbell>, count: u64) {
    for sequence in 0..count {
        let index = producer
            .submit(&tagged(0, sequence), None, &|| None)
            .unwrap();
        assert_eq!(index, sequence);
    }
}

#[test]
fn reserve_gives_up_at_the_deadline_and_leaves_the_ring_consistent() {
    let queue = HostQueue::new(8);
    let producer = queue.producer(NoDoorbell);
    fill(&producer, 8);

    let start = Instant::now();
    let err = producer
        .submit(
            &tagged(0, 99),
            Some(start + Duration::from_millis(50)),
            &|| None,
        )
        .unwrap_err();
    assert!(start.elapsed() >= Duration::from_millis(50));
    assert_eq!(
        err,
        RingError::Timeout {
            count: 1,
            write_index: 8,
            read_index: 0,
            slots: 8
        }
    );
    // A deadline already past fails at once, for multi-slot reservations too.
    assert!(matches!(
        producer.reserve(3, Some(Instant::now()), &|| None),
        Err(RingError::Timeout { count: 3, .. })
    ));
    assert_eq!(producer.write_index(), 8, "giving up reserved nothing");

    // A consumer arriving later sees exactly the eight published packets, then an INVALID
    // header where the failed submit would have gone.
    let packets = queue.consume(8, Instant::now() + Duration::from_secs(10));
    let sequences: Vec<u64> = packets.iter().map(|p| tag_of(p).1).collect();
    assert_eq!(sequences, (0..8).collect::<Vec<_>>());
    assert!(queue.all_invalid());
    assert_eq!(queue.read_index().load(Ordering::Acquire), 8);

    // The ring goes on working from there.
    assert_eq!(producer.submit(&tagged(0, 8), None, &|| None), Ok(8));
    assert_eq!(
        tag_of(&queue.consume(1, Instant::now() + Duration::from_secs(10))[0]).1,
        8
    );
}

#[test]
fn abandon_is_honoured_while_the_ring_is_full() {
    let queue = HostQueue::new(4);
    let producer = queue.producer(NoDoorbell);
    // With room, `abandon` is not consulted.
    let asked = AtomicUsize::new(0);
    let never = || {
        asked.fetch_add(1, Ordering::Relaxed);
        Some("queue broken".to_owned())
    };
    assert_eq!(producer.reserve(1, None, &never), Ok(0));
    assert_eq!(asked.load(Ordering::Relaxed), 0);
    producer.write(0, &tagged(0, 0));
    let index = producer.reserve(3, None, &|| None).unwrap();
    for (k, i) in (index..index + 3).enumerate() {
        producer.write(i, &tagged(0, k as u64 + 1));
    }
    producer.ring_doorbell(index + 2);

    // Full: the third call says to stop; no deadline is needed.
    let calls = AtomicUsize::new(0);
    let third = || (calls.fetch_add(1, Ordering::Relaxed) == 2).then(|| "device closed".to_owned());
    assert_eq!(
        producer.reserve(1, None, &third),
        Err(RingError::Abandoned("device closed".to_owned()))
    );
    assert_eq!(calls.load(Ordering::Relaxed), 3);
    assert_eq!(producer.write_index(), 4);

    // Abandon from another thread while a producer waits without a deadline: once it has
    // found the ring full and asked at least once.
    let stop = Mutex::new(None::<String>);
    let asked = AtomicUsize::new(0);
    let _watchdog = watchdog::arm(watchdog::HANG_DEADLINE, "the abandoned producer to end");
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            producer.submit(&tagged(0, 9), None, &|| {
                asked.fetch_add(1, Ordering::Relaxed);
                stop.lock().unwrap().clone()
            })
        });
        wait::assert_until(
            Duration::from_secs(30),
            "the producer to wait for room",
            || asked.load(Ordering::Relaxed) > 0,
        );
        *stop.lock().unwrap() = Some("queue error".to_owned());
        assert_eq!(
            waiter.join().unwrap(),
            Err(RingError::Abandoned("queue error".to_owned()))
        );
    });
    let packets = queue.consume(4, Instant::now() + Duration::from_secs(10));
    assert_eq!(
        packets.iter().map(|p| tag_of(p).1).collect::<Vec<_>>(),
        [0, 1, 2, 3]
    );
    assert!(queue.all_invalid());
}

#[test]
fn impossible_reservations_fail_at_once() {
    let queue = HostQueue::new(8);
    let producer = queue.producer(NoDoorbell);
    assert_eq!(
        producer.reserve(0, None, &|| None),
        Err(RingError::InvalidCount { count: 0, slots: 8 })
    );
    assert_eq!(
        producer.reserve(9, None, &|| None),
        Err(RingError::InvalidCount { count: 9, slots: 8 })
    );
    // A whole ring at once is fine.
    assert_eq!(producer.reserve(8, None, &|| None), Ok(0));
    assert_eq!(producer.slots(), 8);
}

#[test]
fn a_waiting_producer_resumes_when_the_consumer_frees_room() {
    let queue = HostQueue::new(4);
    let producer = queue.producer(NoDoorbell);
    fill(&producer, 4);
    // How often the waiting producer found the ring too full (it asks `abandon` each time).
    let full = AtomicUsize::new(0);
    let _watchdog = watchdog::arm(watchdog::HANG_DEADLINE, "the waiting producer to end");
    thread::scope(|s| {
        let waiter = s.spawn(|| {
            producer.reserve(2, Some(Instant::now() + Duration::from_secs(30)), &|| {
                full.fetch_add(1, Ordering::Relaxed);
                None
            })
        });
        // Freeing one slot is not enough for two: the producer looks again (a look that
        // began after the slot was freed: the second after this count) and still waits.
        queue.consume(1, Instant::now() + Duration::from_secs(10));
        let seen = full.load(Ordering::Relaxed);
        wait::assert_until(
            Duration::from_secs(30),
            "the producer to look at the ring after one slot was freed",
            || full.load(Ordering::Relaxed) >= seen + 2,
        );
        assert_eq!(
            producer.write_index(),
            4,
            "reserved two slots with one free"
        );
        assert!(!waiter.is_finished());
        queue.consume(1, Instant::now() + Duration::from_secs(10));
        assert_eq!(waiter.join().unwrap(), Ok(4));
    });
    assert_eq!(producer.write_index(), 6);
    producer.write(4, &tagged(1, 0));
    producer.write(5, &tagged(1, 1));
    let packets = queue.consume(4, Instant::now() + Duration::from_secs(10));
    let tags: Vec<(u64, u64)> = packets.iter().map(tag_of).collect();
    assert_eq!(tags, [(0, 2), (0, 3), (1, 0), (1, 1)]);
}

#[test]
fn the_published_word_is_header_and_setup() {
    let queue = HostQueue::new(4);
    let producer = queue.producer(NoDoorbell).write_combined(true);
    let packet = aql::DispatchBuilder::new(0x1000, 0x2000)
        .grid_2d([8, 8], [4, 4])
        .build(&aql::DispatchLimits::GFX9)
        .unwrap();
    let index = producer
        .submit(&aql::AqlPacket::to_raw(&packet), None, &|| None)
        .unwrap();
    let first = queue.half(index, 0).load(Ordering::Acquire);
    assert_eq!(
        first,
        u32::from(packet.header) | u32::from(packet.setup) << 16
    );
    assert_eq!(queue.word(index, 4).load(Ordering::Relaxed), 0x1000);
}

#[test]
#[should_panic(expected = "power of two")]
fn a_ring_that_is_not_a_power_of_two_is_refused() {
    let queue = HostQueue::new(12);
    let _producer = queue.producer(NoDoorbell);
}
