//! Queue errors as the command processor reports them (aql.md §5A, §7.3, §7.9): the error
//! word in `queue_inactive_signal`, its event, the halt, and recovery from scratch errors.

mod cp_support;

use amdgpu_sim::vm::{Access, FaultKind, MemoryFault};
use aql::queue::queue_error;
use aql::{AmdFormat, Header, PacketType, QueueProperties, RawPacket};
use cp_support::{
    Behaviour, Bench, Interrupt, LDS_BYTES, TestQueue, barrier, dispatch, field, raw,
};

/// Submit `packet` followed by a harmless dispatch; check that the queue halts on the first
/// with `word`, fires the queue's event, keeps its read index on the bad packet and never
/// runs the second.
fn expect_halt(bench: &Bench, queue: &TestQueue, packet: &RawPacket, word: i64) {
    let completion = packet.completion_signal();
    let completion_before = (completion != 0).then(|| bench.vm.load_i64(completion + 8));
    let next = bench.signal(1);
    let index = queue.submit(packet);
    queue.submit(&raw(&dispatch(bench.kernel(63), next.handle)));

    assert_eq!(queue.wait_error(), word);
    bench
        .sink
        .wait_for(Interrupt::EndOfPipe(queue.inactive.event_id));
    queue.settle();
    assert_eq!(
        queue.read_index(),
        index,
        "the read index stays on the failing packet"
    );
    assert_eq!(
        queue.header(index),
        packet.0[0] as u16,
        "the slot is not consumed"
    );
    assert_eq!(bench.value(next), 1, "nothing after it runs");
    if let Some(before) = completion_before {
        assert_eq!(bench.vm.load_i64(completion + 8), before, "no completion");
    }
}

fn with_header(mut packet: RawPacket, word: u32) -> RawPacket {
    packet.0[0] = (packet.0[0] & !0xFFFF_FFFF) | u64::from(word);
    packet
}

#[test]
fn unknown_and_agent_dispatch_packet_types_are_invalid_formats() {
    for kind in [4u32, 6, 0x7F] {
        let bench = Bench::new();
        let queue = bench.queue(64);
        let signal = bench.signal(1);
        let packet = with_header(raw(&dispatch(bench.kernel(0), signal.handle)), kind);
        expect_halt(&bench, &queue, &packet, queue_error::INVALID_PACKET_FORMAT);
        assert_eq!(bench.shader.launch_count(), 0);
    }
}

#[test]
fn reserved_header_bits_and_fields_are_invalid_formats() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let mut packet = dispatch(bench.kernel(0), 0);
    packet.reserved2 = 5;
    expect_halt(
        &bench,
        &queue,
        &raw(&packet),
        queue_error::INVALID_PACKET_FORMAT,
    );

    let bench = Bench::new();
    let queue = bench.queue(64);
    let mut packet = barrier(PacketType::BARRIER_AND, [0; 5], 0);
    packet.header |= 3 << 11; // reserved release scope
    expect_halt(
        &bench,
        &queue,
        &raw(&packet),
        queue_error::INVALID_PACKET_FORMAT,
    );
}

#[test]
fn unknown_vendor_formats_are_unsupported() {
    for format in [0u8, 3, 0x80, 0xFE] {
        let bench = Bench::new();
        let queue = bench.queue(64);
        let header = u32::from(Header::new(PacketType::VENDOR_SPECIFIC).0);
        let mut packet = RawPacket::default();
        packet.0[0] = u64::from(header | u32::from(format) << 16);
        expect_halt(
            &bench,
            &queue,
            &packet,
            queue_error::UNSUPPORTED_VENDOR_PACKET,
        );
    }
    // And a PM4 stream with an opcode the model does not execute (DISPATCH_DIRECT).
    let bench = Bench::new();
    let queue = bench.queue(64);
    let ib = bench.vm.alloc(4096);
    bench.vm.store_u32(ib, 3 << 30 | 3 << 16 | 0x15 << 8);
    let mut packet = RawPacket::default();
    let dwords = [
        u32::from(Header::new(PacketType::VENDOR_SPECIFIC).0)
            | u32::from(AmdFormat::PM4_IB.0) << 16,
        3 << 30 | 2 << 16 | 0x3F << 8,
        ib as u32,
        (ib >> 32) as u32,
        1 << 23 | 5,
    ];
    for (i, d) in dwords.iter().enumerate() {
        packet.0[i / 2] |= u64::from(*d) << (32 * (i % 2));
    }
    expect_halt(
        &bench,
        &queue,
        &packet,
        queue_error::UNSUPPORTED_VENDOR_PACKET,
    );
}

#[test]
fn invalid_dimensions() {
    let cases: [fn(&mut aql::KernelDispatchPacket); 6] = [
        // No dimension.
        |p| p.setup = 0,
        // Three dimensions, a zero-sized z grid.
        |p| {
            p.setup = 3;
            p.grid_size_z = 0;
        },
        |p| p.workgroup_size_x = 0,
        |p| p.grid_size_x = 0,
        // Unused dimensions must be 1.
        |p| p.grid_size_y = 2,
        |p| p.workgroup_size_z = 4,
    ];
    for change in cases {
        let bench = Bench::new();
        let queue = bench.queue(64);
        let mut packet = dispatch(bench.kernel(0), 0);
        change(&mut packet);
        expect_halt(
            &bench,
            &queue,
            &raw(&packet),
            queue_error::INVALID_DIMENSIONS,
        );
    }
}

#[test]
fn workgroups_above_1024_work_items_are_too_large() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let mut packet = dispatch(bench.kernel(0), 0);
    packet.setup = aql::packet::dispatch_setup(3);
    (
        packet.workgroup_size_x,
        packet.workgroup_size_y,
        packet.workgroup_size_z,
    ) = (32, 16, 4);
    (packet.grid_size_x, packet.grid_size_y, packet.grid_size_z) = (32, 16, 4);
    expect_halt(
        &bench,
        &queue,
        &raw(&packet),
        queue_error::WORKGROUP_TOO_LARGE,
    );

    // Exactly 1024 is fine.
    let bench = Bench::new();
    let queue = bench.queue(64);
    let signal = bench.signal(1);
    packet.workgroup_size_z = 2;
    packet.kernel_object = bench.kernel(0);
    packet.completion_signal = signal.handle;
    queue.submit(&raw(&packet));
    bench.wait_value(signal, 0);
}

#[test]
fn group_segments_beyond_the_lds_are_invalid_group_memory() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let mut packet = dispatch(bench.kernel(0), 0);
    packet.group_segment_size = LDS_BYTES + 1;
    expect_halt(
        &bench,
        &queue,
        &raw(&packet),
        queue_error::INVALID_GROUP_MEMORY,
    );
}

#[test]
fn null_misaligned_or_unmapped_kernel_objects_are_invalid_code_objects() {
    let bench = Bench::new();
    let unmapped = bench.vm.alloc(4096);
    bench.vm.unmap(unmapped);
    // Null, misaligned, unmapped, and a descriptor whose 64 bytes run off its 32-byte mapping.
    let short = bench.vm.alloc(32);
    for kernel_object in [0, bench.kernel(1) + 8, unmapped, short] {
        let queue = bench.queue(64);
        let packet = dispatch(kernel_object, 0);
        expect_halt(
            &bench,
            &queue,
            &raw(&packet),
            queue_error::INVALID_CODE_OBJECT,
        );
    }
    assert_eq!(bench.shader.launch_count(), 0);
}

#[test]
fn insufficient_scratch_halts_before_launch_and_resumes_when_the_host_stores_zero() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let signal = bench.signal(1);
    let mut packet = dispatch(bench.kernel(0), signal.handle);
    packet.private_segment_size = 400;
    let index = queue.submit(&raw(&packet));

    assert_eq!(queue.wait_error(), queue_error::SCRATCH_WAVE64);
    bench
        .sink
        .wait_for(Interrupt::EndOfPipe(queue.inactive.event_id));
    queue.settle();
    assert_eq!(bench.shader.launch_count(), 0, "halted before launch");
    assert_eq!(
        queue.read_index(),
        index,
        "the host reads the packet at the read index"
    );

    // What ROCr's handler does: size scratch from the packet, rewrite the fields, store 0.
    bench.vm.store_u64(queue.descriptor + 0xA0, 0x7700_0000);
    bench
        .vm
        .store_u32(queue.descriptor + field::SCRATCH_WAVE64_LANE_BYTE_SIZE, 400);
    bench.vm.store_i64(queue.inactive.handle + 8, 0);

    bench.wait_value(signal, 0);
    let launch = &bench.shader.launches()[0];
    assert_eq!(launch.request.dispatch_id, index);
    assert_eq!(launch.request.scratch.wave64_lane_byte_size, 400);
    assert_eq!(launch.request.scratch.backing_memory_location, 0x7700_0000);
    assert_eq!(queue.inactive_value(), 0);
}

#[test]
fn use_once_scratch_is_reported_after_the_dispatch_and_the_queue_waits_for_the_host() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    queue.set_properties(QueueProperties::USE_SCRATCH_ONCE.bits());
    bench.vm.store_u32(
        queue.descriptor + field::SCRATCH_WAVE64_LANE_BYTE_SIZE,
        1024,
    );
    let first = bench.signal(1);
    let second = bench.signal(1);
    let mut packet = dispatch(bench.kernel(0), first.handle);
    packet.private_segment_size = 1024;
    queue.submit(&raw(&packet));
    queue.submit(&raw(&dispatch(bench.kernel(1), second.handle)));

    bench.wait_value(first, 0);
    assert_eq!(queue.wait_error(), queue_error::SCRATCH_USE_ONCE_DONE);
    queue.settle();
    assert_eq!(bench.value(second), 1, "the queue waits for the reclaim");
    assert_eq!(queue.read_index(), 1, "the dispatch itself completed");

    // ROCr: free the scratch, store 0, clear USE_SCRATCH_ONCE.
    bench
        .vm
        .store_u32(queue.descriptor + field::SCRATCH_WAVE64_LANE_BYTE_SIZE, 0);
    bench.vm.store_i64(queue.inactive.handle + 8, 0);
    queue.set_properties(0);
    bench.wait_value(second, 0);
}

#[test]
fn minus_one_from_the_host_kills_a_halted_queue() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let signal = bench.signal(1);
    let mut packet = dispatch(bench.kernel(0), signal.handle);
    packet.private_segment_size = 16;
    queue.submit(&raw(&packet));
    assert_eq!(queue.wait_error(), queue_error::SCRATCH_WAVE64);

    // The host gives up on the queue. Even once the scratch would now suffice and a doorbell
    // rings, nothing runs. (A later 0 from the host is not tested: nothing shows when the CP
    // has seen the -1, so such a test would fail whenever the CP is slower than a sleep.)
    bench.set_value(queue.inactive, -1);
    bench
        .vm
        .store_u32(queue.descriptor + field::SCRATCH_WAVE64_LANE_BYTE_SIZE, 16);
    queue.ring_doorbell(0);
    queue.settle();
    assert_eq!(
        bench.shader.launch_count(),
        0,
        "a dead queue does not resume"
    );
    assert_eq!(queue.inactive_value(), -1, "and leaves the host's -1 alone");
}

#[test]
fn a_faulting_kernel_raises_a_vm_fault_and_makes_the_queue_inactive() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let hole = bench.vm.alloc(4096);
    bench.vm.unmap(hole);
    bench
        .shader
        .set(bench.kernel(5), Behaviour::Fault { va: hole + 0x40 });
    let signal = bench.signal(1);
    let packet = dispatch(bench.kernel(5), signal.handle);

    expect_halt(&bench, &queue, &raw(&packet), queue_error::MEMORY_VIOLATION);
    let fault = MemoryFault {
        va: hole + 0x40,
        access: Access::Write,
        kind: FaultKind::NotPresent,
    };
    bench.sink.wait_for(Interrupt::VmFault(fault));
    queue.settle();
    assert_eq!(
        bench.sink.count(Interrupt::VmFault(fault)),
        1,
        "reported once"
    );
    assert_eq!(bench.shader.launch_count(), 1);
}

#[test]
fn illegal_instructions_traps_and_bad_descriptors_halt_with_their_codes() {
    for (behaviour, word) in [
        (Behaviour::Illegal, queue_error::ILLEGAL_INSTRUCTION),
        (Behaviour::Trap, queue_error::DEBUG_TRAP),
        (Behaviour::InvalidCode, queue_error::INVALID_CODE_OBJECT),
    ] {
        let bench = Bench::new();
        let queue = bench.queue(64);
        bench.shader.set(bench.kernel(3), behaviour);
        let signal = bench.signal(1);
        expect_halt(
            &bench,
            &queue,
            &raw(&dispatch(bench.kernel(3), signal.handle)),
            word,
        );
        assert!(
            !bench
                .sink
                .log()
                .iter()
                .any(|i| matches!(i, Interrupt::VmFault(_))),
            "not a memory fault"
        );
    }
}

#[test]
fn an_unmapped_completion_signal_is_a_gpu_fault_not_a_host_crash() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let signal = bench.signal(1);
    bench.vm.unmap(signal.handle);
    queue.submit(&raw(&dispatch(bench.kernel(0), signal.handle)));

    assert_eq!(queue.wait_error(), queue_error::MEMORY_VIOLATION);
    bench
        .sink
        .wait_for_match("a VM fault", |i| matches!(i, Interrupt::VmFault(_)));
    queue.settle();
    let faults: Vec<_> = bench
        .sink
        .log()
        .into_iter()
        .filter_map(|i| match i {
            Interrupt::VmFault(f) => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(faults.len(), 1);
    assert_eq!(faults[0].va & !0x3F, signal.handle);
    assert_eq!(faults[0].kind, FaultKind::NotPresent);
}

#[test]
fn an_unmapped_dependency_signal_is_a_gpu_fault() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let dep = bench.signal(1);
    bench.vm.unmap(dep.handle);
    queue.submit(&raw(&barrier(
        PacketType::BARRIER_AND,
        [dep.handle, 0, 0, 0, 0],
        0,
    )));
    assert_eq!(queue.wait_error(), queue_error::MEMORY_VIOLATION);
    bench.sink.wait_for_match(
        "a VM fault on the dependency",
        |i| matches!(i, Interrupt::VmFault(f) if f.va & !0x3F == dep.handle),
    );
}

#[test]
fn an_unmapped_ring_is_a_gpu_fault() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    bench.vm.unmap(queue.ring);
    queue.ring_doorbell(0);
    bench
        .vm
        .store_u64(queue.descriptor + field::WRITE_DISPATCH_ID, 1);
    assert_eq!(queue.wait_error(), queue_error::MEMORY_VIOLATION);
    bench.sink.wait_for_match(
        "a VM fault on the ring",
        |i| matches!(i, Interrupt::VmFault(f) if f.va == queue.ring),
    );
}

#[test]
fn a_read_only_completion_signal_faults_on_the_decrement() {
    let bench = Bench::new();
    let queue = bench.queue(64);
    let read_only = bench.vm.alloc_with(64, false);
    queue.submit(&raw(&dispatch(bench.kernel(0), read_only)));
    assert_eq!(queue.wait_error(), queue_error::MEMORY_VIOLATION);
    bench.sink.wait_for_match("a read-only VM fault", |i| {
        matches!(i, Interrupt::VmFault(f) if f.kind == FaultKind::ReadOnly && f.va & !0x3F == read_only)
    });
}
