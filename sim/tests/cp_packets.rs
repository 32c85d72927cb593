//! The command processor in isolation: packet kinds, completion, signals, profiling and the
//! ordering rules of aql.md §7.

mod cp_support;

use std::collections::HashSet;

use aql::{FenceScope, Header, PacketType, QueueProperties, SignalCondition};
use cp_support::{
    Behaviour, Bench, Gate, Interrupt, LDS_BYTES, barrier, barrier_value, dispatch, raw,
    signal_field, wait_for,
};
use test_support::watchdog;

#[test]
fn a_dispatch_runs_completes_its_signal_and_fires_its_event() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let signal = bench.interrupt_signal(1);
    let packet = dispatch(bench.kernel(0), signal.handle);

    let index = queue.submit(&raw(&packet));
    bench.wait_value(signal, 0);
    bench.sink.wait_for(Interrupt::EndOfPipe(signal.event_id));

    assert_eq!(index, 0);
    assert_eq!(
        bench.vm.load_u64(signal.mailbox.unwrap()),
        u64::from(signal.event_id),
        "the event id is stored in the mailbox"
    );
    assert_eq!(queue.read_index(), 1);
    assert_eq!(queue.header(0), u16::from(PacketType::INVALID.0));
    let launches = bench.shader.launches();
    assert_eq!(launches.len(), 1);
    let request = launches[0].request;
    assert_eq!(request.packet, packet);
    assert_eq!(request.packet_va, queue.ring);
    assert_eq!(request.queue_va, queue.descriptor);
    assert_eq!(request.dispatch_id, 0);
    assert_eq!(request.lds_bytes_per_workgroup, LDS_BYTES);
    assert_eq!(request.target, amdgpu_sim::target::GfxTarget::Gfx90a);
    assert_eq!(
        launches[0].header_seen as u16, packet.header,
        "the packet is intact while its kernel runs"
    );
    // No timestamps unless the queue profiles.
    assert_eq!(bench.vm.load_u64(signal.handle + signal_field::START_TS), 0);
    assert_eq!(queue.inactive_value(), 0);
}

#[test]
fn the_scratch_fields_of_amd_queue_t_reach_the_shader_core() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let words = [0x1000_0000u32, 0x8000_0001, 0x0040_0000, 0x0002_7fac];
    for (i, word) in words.iter().enumerate() {
        bench
            .vm
            .store_u32(queue.descriptor + 0x90 + 4 * i as u64, *word);
    }
    bench.vm.store_u64(queue.descriptor + 0xA0, 0x7000_0000);
    bench.vm.store_u64(queue.descriptor + 0xA8, 0x40_0000);
    bench.vm.store_u32(queue.descriptor + 0xB0, 256);
    bench.vm.store_u32(queue.descriptor + 0x8C, 0x0040_3123);
    let signal = bench.signal(1);
    let mut packet = dispatch(bench.kernel(0), signal.handle);
    packet.private_segment_size = 256;

    queue.submit(&raw(&packet));
    bench.wait_value(signal, 0);

    let scratch = bench.shader.launches()[0].request.scratch;
    assert_eq!(scratch.resource_descriptor, words);
    assert_eq!(scratch.backing_memory_location, 0x7000_0000);
    assert_eq!(scratch.backing_memory_byte_size, 0x40_0000);
    assert_eq!(scratch.wave64_lane_byte_size, 256);
    assert_eq!(scratch.compute_tmpring_size, 0x0040_3123);
}

#[test]
fn profiling_queues_stamp_start_and_end_into_completion_signals() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    queue.set_properties((QueueProperties::ENABLE_PROFILING | QueueProperties::IS_PTR64).bits());
    let signal = bench.signal(1);
    let before = amdgpu_sim::clock::gpu_timestamp();

    queue.submit(&raw(&dispatch(bench.kernel(0), signal.handle)));
    bench.wait_value(signal, 0);

    let after = amdgpu_sim::clock::gpu_timestamp();
    let start = bench.vm.load_u64(signal.handle + signal_field::START_TS);
    let end = bench.vm.load_u64(signal.handle + signal_field::END_TS);
    assert!(
        before <= start && start <= end && end <= after,
        "{before} <= {start} <= {end} <= {after}"
    );

    // Barrier packets get them too.
    let barrier_signal = bench.signal(1);
    queue.submit(&raw(&barrier(
        PacketType::BARRIER_AND,
        [0; 5],
        barrier_signal.handle,
    )));
    bench.wait_value(barrier_signal, 0);
    let start = bench
        .vm
        .load_u64(barrier_signal.handle + signal_field::START_TS);
    assert!(start >= end);
    assert!(
        bench
            .vm
            .load_u64(barrier_signal.handle + signal_field::END_TS)
            >= start
    );
}

#[test]
fn signal_handle_hint_bits_are_ignored() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let signal = bench.interrupt_signal(2);

    queue.submit(&raw(&dispatch(bench.kernel(0), signal.handle | 0x3F)));
    bench.wait_value(signal, 1);
    bench.sink.wait_for(Interrupt::EndOfPipe(signal.event_id));
}

#[test]
fn packets_without_a_completion_signal_complete_silently() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    queue.submit(&raw(&dispatch(bench.kernel(0), 0)));
    queue.submit(&raw(&barrier(PacketType::BARRIER_AND, [0; 5], 0)));
    queue.wait_read_index(2);
    assert_eq!(bench.shader.launch_count(), 1);
    assert!(bench.sink.log().is_empty());
}

#[test]
fn barrier_and_waits_for_every_dependency_and_blocks_later_packets() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let a = bench.signal(1);
    let b = bench.signal(2);
    let done = bench.interrupt_signal(1);
    let after = bench.signal(1);

    // Null entries count as satisfied.
    queue.submit(&raw(&barrier(
        PacketType::BARRIER_AND,
        [a.handle, 0, b.handle, 0, 0],
        done.handle,
    )));
    queue.submit(&raw(&dispatch(bench.kernel(0), after.handle)));
    queue.settle();
    assert_eq!(queue.read_index(), 0, "the barrier waits");
    assert_eq!(
        bench.shader.launch_count(),
        0,
        "and blocks the dispatch after it"
    );

    bench.set_value(a, 0);
    queue.settle();
    assert_eq!(queue.read_index(), 0, "one dependency is not enough");

    bench.set_value(b, 0);
    bench.wait_value(done, 0);
    bench.wait_value(after, 0);
    bench.sink.wait_for(Interrupt::EndOfPipe(done.event_id));
    assert_eq!(queue.read_index(), 2);
}

#[test]
fn barrier_and_with_only_null_dependencies_completes_at_once() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let done = bench.signal(1);
    queue.submit(&raw(&barrier(PacketType::BARRIER_AND, [0; 5], done.handle)));
    bench.wait_value(done, 0);
}

#[test]
fn barrier_or_waits_for_any_dependency_and_nulls_never_satisfy_it() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let a = bench.signal(1);
    let b = bench.signal(1);
    let done = bench.signal(1);

    queue.submit(&raw(&barrier(
        PacketType::BARRIER_OR,
        [0, a.handle, 0, b.handle, 0],
        done.handle,
    )));
    queue.settle();
    assert_eq!(
        bench.value(done),
        1,
        "null entries do not satisfy a barrier-OR"
    );

    bench.set_value(b, 0);
    bench.wait_value(done, 0);
    assert_eq!(bench.value(a), 1);
}

#[test]
fn barrier_or_with_only_nulls_waits_until_the_queue_is_destroyed() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let done = bench.signal(1);
    queue.submit(&raw(&barrier(PacketType::BARRIER_OR, [0; 5], done.handle)));
    queue.settle();
    queue.running.stop();
    assert_eq!(bench.value(done), 1);
    assert_eq!(queue.read_index(), 0);
}

#[test]
fn barrier_value_compares_the_masked_value_signed() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let watched = bench.signal(0x0F_05);

    // Each case: (condition, comparand, mask, value that satisfies it).
    let cases = [
        (SignalCondition::EQ, 0x07, 0xFF, 0x0F_07),
        (SignalCondition::NE, 0x05, 0xFF, 0x0F_06),
        (SignalCondition::LT, 0, -1, -3),
        (SignalCondition::GTE, 0x10, 0xFF, 0x00_10),
    ];
    for (condition, comparand, mask, satisfying) in cases {
        // Start from a value that does not satisfy the condition.
        bench.set_value(watched, 0x0F_05);
        let done = bench.signal(1);
        queue.submit(&raw(&barrier_value(
            watched.handle,
            condition,
            comparand,
            mask,
            done.handle,
        )));
        queue.settle();
        assert_eq!(
            bench.value(done),
            1,
            "{condition:?} {comparand:#x} must wait"
        );
        bench.set_value(watched, satisfying);
        bench.wait_value(done, 0);
    }

    // A null signal counts as satisfied.
    let done = bench.signal(1);
    queue.submit(&raw(&barrier_value(
        0,
        SignalCondition::EQ,
        1,
        -1,
        done.handle,
    )));
    bench.wait_value(done, 0);
}

#[test]
fn a_barrier_and_chains_two_queues() {
    let bench = Bench::new();
    let first = bench.queue(64);
    let second = bench.queue(64);
    let gate = Gate::new();
    bench
        .shader
        .set(bench.kernel(1), Behaviour::Gate(gate.clone()));
    let first_done = bench.signal(1);
    let second_done = bench.signal(1);
    let marker = bench.vm.alloc(64);
    bench.shader.set(
        bench.kernel(2),
        Behaviour::Store {
            va: marker,
            value: 42,
        },
    );

    // Queue 2 waits for queue 1's kernel, then runs its own.
    second.submit(&raw(&barrier(
        PacketType::BARRIER_AND,
        [first_done.handle, 0, 0, 0, 0],
        0,
    )));
    second.submit(&raw(&dispatch(bench.kernel(2), second_done.handle)));
    first.submit(&raw(&dispatch(bench.kernel(1), first_done.handle)));
    wait_for("the first kernel to start", || gate.arrived() == 1);
    second.settle();
    assert_eq!(
        bench.vm.load_u64(marker),
        0,
        "the second queue waits for the first"
    );

    gate.open();
    bench.wait_value(second_done, 0);
    assert_eq!(bench.vm.load_u64(marker), 42);
    let launches = bench.shader.launches();
    assert!(launches[0].ended < launches[1].started);
}

#[test]
fn headers_with_fence_scopes_and_the_barrier_bit_run_in_order_without_overlap() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let signal = bench.signal(8);
    for i in 0..8u16 {
        let mut packet = dispatch(bench.kernel(u64::from(i)), signal.handle);
        packet.header = Header::new(PacketType::KERNEL_DISPATCH)
            .with_barrier(i % 2 == 1)
            .with_acquire(FenceScope::from_bits(i % 3).unwrap())
            .with_release(FenceScope::from_bits((i + 1) % 3).unwrap())
            .0;
        queue.submit(&raw(&packet));
    }
    bench.wait_value(signal, 0);
    let launches = bench.shader.launches();
    assert_eq!(launches.len(), 8);
    for pair in launches.windows(2) {
        assert!(pair[0].request.dispatch_id < pair[1].request.dispatch_id);
        assert!(
            pair[0].ended < pair[1].started,
            "a packet never overlaps an earlier one"
        );
    }
    assert_eq!(bench.shader.max_active(), 1);
}

#[test]
fn an_invalid_header_stalls_until_it_is_published() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let signal = bench.signal(2);

    // Two producers reserve 0 and 1; the second publishes and rings first.
    let first = queue.reserve();
    let second = queue.reserve();
    queue.publish(second, &raw(&dispatch(bench.kernel(1), signal.handle)));
    queue.ring_doorbell(second);
    queue.settle();
    assert_eq!(queue.read_index(), 0, "the CP stalls on the INVALID slot 0");
    assert_eq!(bench.shader.launch_count(), 0, "and never skips it");
    assert_eq!(
        queue.inactive_value(),
        0,
        "an INVALID header is not an error"
    );

    queue.publish(first, &raw(&dispatch(bench.kernel(0), signal.handle)));
    queue.ring_doorbell(first); // a backward doorbell still wakes the CP
    bench.wait_value(signal, 0);
    let ids: Vec<u64> = bench
        .shader
        .launches()
        .iter()
        .map(|l| l.request.packet.kernel_object)
        .collect();
    assert_eq!(ids, [bench.kernel(0), bench.kernel(1)]);
}

#[test]
fn a_published_packet_is_found_by_polling_even_without_a_new_doorbell() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let signal = bench.signal(1);
    // The doorbell announces packet 0 before it is written (an early doorbell): the CP
    // stalls on the INVALID header and re-reads it.
    let index = queue.reserve();
    queue.ring_doorbell(index);
    queue.settle();
    queue.publish(index, &raw(&dispatch(bench.kernel(0), signal.handle)));
    bench.wait_value(signal, 0);
}

#[test]
fn the_write_index_is_also_polled_from_write_dispatch_id() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let signal = bench.signal(3);
    let indices: Vec<u64> = (0..3).map(|_| queue.reserve()).collect();
    for &i in &indices {
        queue.publish(i, &raw(&dispatch(bench.kernel(i), signal.handle)));
    }
    // One doorbell for the first packet: write_dispatch_id says there are three.
    queue.ring_doorbell(indices[0]);
    bench.wait_value(signal, 0);
    assert_eq!(queue.read_index(), 3);
}

#[test]
fn a_doorbell_beyond_the_published_packets_processes_nothing_unpublished() {
    let bench = Bench::new();
    let queue = bench.queue(16);
    let signal = bench.signal(1);
    queue.submit(&raw(&dispatch(bench.kernel(0), signal.handle)));
    bench.wait_value(signal, 0);
    // A garbage doorbell far ahead of anything written.
    queue.ring_doorbell(1_000_000);
    queue.settle();
    assert_eq!(queue.read_index(), 1);
    assert_eq!(bench.shader.launch_count(), 1);
    assert_eq!(queue.inactive_value(), 0);
}

#[test]
fn the_ring_wraps_many_times_and_every_packet_is_consumed_once_in_order() {
    const PACKETS: u64 = 600;
    let bench = Bench::new();
    let queue = bench.queue(16);
    let signal = bench.signal(PACKETS as i64);
    for i in 0..PACKETS {
        let mut packet = dispatch(bench.kernel(i % 64), signal.handle);
        packet.kernarg_address = 0x10_0000 + 16 * i;
        queue.submit(&raw(&packet));
    }
    bench.wait_value(signal, 0);
    queue.wait_read_index(PACKETS);
    let launches = bench.shader.launches();
    assert_eq!(launches.len() as u64, PACKETS);
    for (i, launch) in launches.iter().enumerate() {
        let i = i as u64;
        assert_eq!(launch.request.dispatch_id, i);
        assert_eq!(launch.request.packet.kernarg_address, 0x10_0000 + 16 * i);
        assert_eq!(launch.request.packet_va, queue.slot(i));
    }
    for i in 0..16 {
        assert_eq!(queue.header(i), u16::from(PacketType::INVALID.0));
    }
    assert_eq!(queue.read_index(), PACKETS);
    assert_eq!(
        bench.value(signal),
        0,
        "decremented exactly once per packet"
    );
}

#[test]
fn many_producers_share_a_small_ring() {
    const PRODUCERS: u64 = 4;
    const EACH: u64 = 150;
    let bench = Bench::new();
    let queue = bench.queue(8);
    let signals: Vec<_> = (0..PRODUCERS)
        .map(|_| bench.interrupt_signal(EACH as i64))
        .collect();

    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "the producers to submit every packet",
    );
    std::thread::scope(|scope| {
        for (p, signal) in signals.iter().enumerate() {
            let queue = &queue;
            let bench = &bench;
            scope.spawn(move || {
                for n in 0..EACH {
                    let mut packet = dispatch(bench.kernel(p as u64), signal.handle);
                    packet.kernarg_address = (p as u64) << 32 | n;
                    queue.submit(&raw(&packet));
                }
            });
        }
    });
    for &signal in &signals {
        bench.wait_value(signal, 0);
    }
    queue.wait_read_index(PRODUCERS * EACH);

    let launches = bench.shader.launches();
    assert_eq!(launches.len() as u64, PRODUCERS * EACH);
    let mut seen = HashSet::new();
    let mut next_per_producer = [0u64; PRODUCERS as usize];
    for (i, launch) in launches.iter().enumerate() {
        assert_eq!(
            launch.request.dispatch_id, i as u64,
            "consumed in index order"
        );
        let kernarg = launch.request.packet.kernarg_address;
        assert!(seen.insert(kernarg), "packet {kernarg:#x} consumed twice");
        let (producer, n) = ((kernarg >> 32) as usize, kernarg & 0xFFFF_FFFF);
        assert_eq!(
            n, next_per_producer[producer],
            "each producer's packets stay in order"
        );
        next_per_producer[producer] += 1;
    }
    for signal in &signals {
        assert_eq!(bench.value(*signal), 0);
        // A completion's interrupt follows its decrement: wait for the last one.
        let interrupt = Interrupt::EndOfPipe(signal.event_id);
        wait_for("every completion's interrupt", || {
            bench.sink.count(interrupt) >= EACH as usize
        });
        assert_eq!(
            bench.sink.count(interrupt),
            EACH as usize,
            "one interrupt per completion"
        );
    }
}

/// Sets a flag when dropped: stops a watcher thread even when the submitting side panics, so
/// a failure is reported instead of hanging.
struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn the_read_index_is_monotonic_and_never_passes_the_write_index() {
    const PACKETS: u64 = 300;
    let bench = Bench::new();
    let queue = bench.queue(16);
    let signal = bench.signal(PACKETS as i64);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let _watchdog = watchdog::arm(watchdog::HANG_DEADLINE, "the index watcher to stop");
    std::thread::scope(|scope| {
        let watcher = scope.spawn(|| {
            let mut last = 0;
            let mut samples = 0u64;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                // Read the read index first: the write index only grows, so one read later is
                // at least what it was when the read index was seen.
                let read = queue.read_index();
                let write = queue.write_index();
                assert!(read >= last, "read index went back from {last} to {read}");
                assert!(
                    read <= write,
                    "read index {read} passed write index {write}"
                );
                last = read;
                samples += 1;
            }
            samples
        });
        let stopper = StopOnDrop(&stop);
        for i in 0..PACKETS {
            queue.submit(&raw(&dispatch(bench.kernel(i % 64), signal.handle)));
        }
        bench.wait_value(signal, 0);
        drop(stopper);
        assert!(watcher.join().unwrap() > 0);
    });
}

#[test]
fn a_pm4_indirect_buffer_writes_waits_and_interrupts() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let ib = bench.vm.alloc(4096);
    let target = bench.vm.alloc(64);
    let flag = bench.vm.alloc(64);
    let done = bench.signal(1);
    let type3 = |opcode: u32, body: u32| 3u32 << 30 | (body - 1) << 16 | opcode << 8;
    let mut commands = vec![
        type3(0x10, 2),
        0,
        0,           // NOP
        0x8000_0000, // type-2 filler
        type3(0x58, 6),
        0,
        0,
        0,
        0,
        0,
        0, // ACQUIRE_MEM
        type3(0x3C, 6),
        0x13,
        flag as u32,
        (flag >> 32) as u32,
        7,
        0xFF,
        4, // WAIT_REG_MEM mem ==
        type3(0x37, 5),
        5 << 8,
        target as u32,
        (target >> 32) as u32,
        0xAAAA,
        0xBBBB, // WRITE_DATA
    ];
    // RELEASE_MEM: 64-bit data to target+8, then an interrupt with context id 77.
    let dest = target + 8;
    commands.extend([
        type3(0x49, 7),
        0,
        2 << 29 | 2 << 24,
        dest as u32,
        (dest >> 32) as u32,
        0x1234,
        0x5678,
        77,
    ]);
    for (i, word) in commands.iter().enumerate() {
        bench.vm.store_u32(ib + 4 * i as u64, *word);
    }
    let mut packet = aql::RawPacket::default();
    let dwords: [u32; 5] = [
        u32::from(Header::new(PacketType::VENDOR_SPECIFIC).0) | 1 << 16,
        type3(0x3F, 3),
        ib as u32,
        (ib >> 32) as u32 & 0xFFFF,
        1 << 23 | commands.len() as u32,
    ];
    for (i, d) in dwords.iter().enumerate() {
        packet.0[i / 2] |= u64::from(*d) << (32 * (i % 2));
    }
    packet.0[2] |= 0xA << 32; // dw_cnt_remain
    packet.0[7] = done.handle;

    queue.submit(&packet);
    queue.settle();
    assert_eq!(bench.value(done), 1, "WAIT_REG_MEM waits for the flag");
    assert_eq!(bench.vm.load_u64(target), 0);
    bench.vm.store_u32(flag, 0x307); // (0x307 & 0xFF) == 7
    bench.wait_value(done, 0);
    assert_eq!(bench.vm.load_u64(target), 0xBBBB_0000_AAAA);
    assert_eq!(bench.vm.load_u64(target + 8), 0x5678_0000_1234);
    assert!(bench.sink.log().contains(&Interrupt::EndOfPipe(77)));
}

/// Run `commands` as one PM4 indirect buffer (an AmdFormat-1 vendor packet) on `queue` and
/// wait for its completion signal.
fn run_pm4(bench: &Bench, queue: &cp_support::TestQueue, commands: &[u32]) {
    let ib = bench.vm.alloc(4096);
    for (i, word) in commands.iter().enumerate() {
        bench.vm.store_u32(ib + 4 * i as u64, *word);
    }
    let done = bench.signal(1);
    let type3 = |opcode: u32, body: u32| 3u32 << 30 | (body - 1) << 16 | opcode << 8;
    let mut packet = aql::RawPacket::default();
    let dwords: [u32; 5] = [
        u32::from(Header::new(PacketType::VENDOR_SPECIFIC).0) | 1 << 16,
        type3(0x3F, 3),
        ib as u32,
        (ib >> 32) as u32 & 0xFFFF,
        1 << 23 | commands.len() as u32,
    ];
    for (i, d) in dwords.iter().enumerate() {
        packet.0[i / 2] |= u64::from(*d) << (32 * (i % 2));
    }
    packet.0[7] = done.handle;
    queue.submit(&packet);
    bench.wait_value(done, 0);
}

#[test]
fn pred_exec_runs_a_block_only_when_it_names_an_xcc_of_the_queue() {
    let type3 = |opcode: u32, body: u32| 3u32 << 30 | (body - 1) << 16 | opcode << 8;
    // PRED_EXEC over one 4-dword WRITE_DATA of `value` to `va`.
    let predicated = |xcc_mask: u32, va: u64, value: u32| {
        [
            type3(0x23, 1),
            xcc_mask << 24 | 0x5,
            type3(0x37, 4),
            5 << 8,
            va as u32,
            (va >> 32) as u32,
            value,
        ]
    };
    for (xccs, masks) in [
        (8u32, [(0b1u32, true), (1 << 7, true), (0, false)]),
        (1, [(0b1, true), (0b10, false), (0b1000_0000, false)]),
    ] {
        let bench = Bench::new();
        let queue = bench.queue_on_xccs(16, xccs);
        let out = bench.vm.alloc(64);
        let mut commands = Vec::new();
        for (i, (mask, _)) in masks.iter().enumerate() {
            commands.extend(predicated(*mask, out + 4 * i as u64, 0x100 + i as u32));
        }
        // After the blocks: an unpredicated write, which every queue runs.
        commands.extend([
            type3(0x37, 4),
            5 << 8,
            (out + 12) as u32,
            (out >> 32) as u32,
            9,
        ]);
        run_pm4(&bench, &queue, &commands);
        for (i, (mask, runs)) in masks.iter().enumerate() {
            let expected = if *runs { 0x100 + i as u32 } else { 0 };
            assert_eq!(
                bench.vm.load_u32(out + 4 * i as u64),
                expected,
                "{xccs} XCCs, DEVICE_SELECT {mask:#x}"
            );
        }
        assert_eq!(
            bench.vm.load_u32(out + 12),
            9,
            "execution resumes after a skipped block"
        );
    }
}

#[test]
fn pred_exec_counting_past_the_buffer_halts_the_queue() {
    let bench = Bench::new();
    let queue = bench.queue_on_xccs(16, 1);
    let type3 = |opcode: u32, body: u32| 3u32 << 30 | (body - 1) << 16 | opcode << 8;
    let ib = bench.vm.alloc(4096);
    for (i, word) in [type3(0x23, 1), 0b10 << 24 | 0x28].iter().enumerate() {
        bench.vm.store_u32(ib + 4 * i as u64, *word);
    }
    let mut packet = aql::RawPacket::default();
    let dwords: [u32; 5] = [
        u32::from(Header::new(PacketType::VENDOR_SPECIFIC).0) | 1 << 16,
        type3(0x3F, 3),
        ib as u32,
        (ib >> 32) as u32 & 0xFFFF,
        1 << 23 | 2,
    ];
    for (i, d) in dwords.iter().enumerate() {
        packet.0[i / 2] |= u64::from(*d) << (32 * (i % 2));
    }
    queue.submit(&packet);
    assert_eq!(queue.wait_error(), 0x100, "UNSUPPORTED_VENDOR_PACKET");
    queue.settle();
    assert_eq!(queue.read_index(), 0, "the packet is not consumed");
}

#[test]
fn wait_reg_mem_write_then_wait_on_the_hdp_flush_registers_completes_and_others_halt() {
    let type3 = |opcode: u32, body: u32| 3u32 << 30 | (body - 1) << 16 | opcode << 8;
    // MEM_SPACE 0 (registers), OPERATION 1 (write, then wait), FUNCTION 5 (>=).
    let write_wait = |request: u32, done: u32| {
        [
            type3(0x3C, 6),
            1 << 6 | 0x5,
            request,
            done,
            0xFFFF_FFFF,
            0xFFFF_FFFF,
            4,
        ]
    };
    // NBIO segment 2 (0xD20) + BIF_BX_PF0_GPU_HDP_FLUSH_REQ / _DONE.
    let (request, done) = (0xE26, 0xE27);
    let bench = Bench::new();
    let queue = bench.queue(16);
    let out = bench.vm.alloc(64);
    let mut commands = write_wait(request, done).to_vec();
    commands.extend([type3(0x37, 4), 5 << 8, out as u32, (out >> 32) as u32, 0x77]);
    run_pm4(&bench, &queue, &commands);
    assert_eq!(
        bench.vm.load_u32(out),
        0x77,
        "the flush completes and the IB goes on"
    );

    // Any other register pair is not modelled: the queue halts on it.
    let ib = bench.vm.alloc(4096);
    for (i, word) in write_wait(request + 2, done + 2).iter().enumerate() {
        bench.vm.store_u32(ib + 4 * i as u64, *word);
    }
    let mut packet = aql::RawPacket::default();
    let dwords: [u32; 5] = [
        u32::from(Header::new(PacketType::VENDOR_SPECIFIC).0) | 1 << 16,
        type3(0x3F, 3),
        ib as u32,
        (ib >> 32) as u32 & 0xFFFF,
        1 << 23 | 7,
    ];
    for (i, d) in dwords.iter().enumerate() {
        packet.0[i / 2] |= u64::from(*d) << (32 * (i % 2));
    }
    queue.submit(&packet);
    assert_eq!(queue.wait_error(), 0x100, "UNSUPPORTED_VENDOR_PACKET");
}
