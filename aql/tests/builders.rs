//! Packet builders: each rejection the CP makes (sim `cp::decode`, `cp::kernel_dispatch`) is
//! refused before a packet is written, with the error word the CP would have posted.

use aql::builder::{AqlPacket, MAX_BARRIER_DEPENDENCIES, PacketError};
use aql::packet::{dispatch_setup, setup_dimensions};
use aql::queue::queue_error;
use aql::{
    AmdFormat, Condition, DispatchBuilder, DispatchLimits, FenceScope, Header,
    KernelDispatchPacket, PacketType, SignalCondition, barrier_and, barrier_or, barrier_value,
    validate_dispatch,
};

const KERNEL: u64 = 0x7f00_0000_1000;
const KERNARG: u64 = 0x7f00_0000_2000;
const LIMITS: DispatchLimits = DispatchLimits::GFX9;

fn builder() -> DispatchBuilder {
    DispatchBuilder::new(KERNEL, KERNARG).grid_1d(256, 64)
}

fn refused(builder: DispatchBuilder) -> PacketError {
    builder
        .build(&LIMITS)
        .expect_err("the builder accepted a packet the CP rejects")
}

#[test]
fn a_valid_dispatch_has_the_fields_asked_for() {
    let packet = DispatchBuilder::new(KERNEL, KERNARG)
        .grid_3d([64, 32, 2], [8, 8, 2])
        .group_segment_size(1024)
        .private_segment_size(16)
        .completion_signal(0x7f00_0000_3000)
        .barrier(true)
        .acquire(FenceScope::Agent)
        .release(FenceScope::None)
        .build(&LIMITS)
        .unwrap();
    let header = Header(packet.header);
    assert_eq!(header.packet_type(), PacketType::KERNEL_DISPATCH);
    assert!(header.barrier());
    assert_eq!(header.acquire_fence_scope(), Some(FenceScope::Agent));
    assert_eq!(header.release_fence_scope(), Some(FenceScope::None));
    assert_eq!(setup_dimensions(packet.setup), 3);
    assert_eq!(
        (packet.grid_size_x, packet.grid_size_y, packet.grid_size_z),
        (64, 32, 2)
    );
    assert_eq!(
        (
            packet.workgroup_size_x,
            packet.workgroup_size_y,
            packet.workgroup_size_z
        ),
        (8, 8, 2)
    );
    assert_eq!(packet.group_segment_size, 1024);
    assert_eq!(packet.private_segment_size, 16);
    assert_eq!(packet.kernel_object, KERNEL);
    assert_eq!(packet.kernarg_address, KERNARG);
    assert_eq!(packet.completion_signal, 0x7f00_0000_3000);
    assert_eq!((packet.reserved0, packet.reserved2), (0, 0));

    // The slot image: the first word is header | setup << 16, the rest the packet's bytes.
    let raw = packet.to_raw();
    assert_eq!(raw.0[0] as u32, header.first_word(packet.setup));
    assert_eq!(raw.0[4], KERNEL);
    assert_eq!(raw.completion_signal(), 0x7f00_0000_3000);

    // Defaults: barrier clear, system-scope fences; a grid smaller than its workgroup is a
    // partial workgroup, which HSA allows.
    let packet = DispatchBuilder::new(KERNEL, 0)
        .grid_1d(3, 64)
        .build(&LIMITS)
        .unwrap();
    let header = Header(packet.header);
    assert!(!header.barrier());
    assert_eq!(header.acquire_fence_scope(), Some(FenceScope::System));
    assert_eq!(header.release_fence_scope(), Some(FenceScope::System));
}

#[test]
fn dimension_errors_are_refused_as_invalid_dimensions() {
    let cases = [
        builder().geometry(0, [1, 1, 1], [1, 1, 1]),
        builder().geometry(4, [1, 1, 1], [1, 1, 1]),
        builder().grid_1d(0, 64),
        builder().grid_1d(64, 0),
        builder().grid_2d([64, 0], [64, 1]),
        builder().grid_3d([64, 4, 4], [16, 4, 0]),
        // Unused dimensions must be exactly 1.
        builder().geometry(1, [64, 2, 1], [64, 1, 1]),
        builder().geometry(2, [64, 2, 1], [64, 1, 2]),
        builder().geometry(1, [64, 1, 0], [64, 1, 1]),
    ];
    for case in cases {
        let err = refused(case);
        assert!(
            matches!(
                err,
                PacketError::Dimensions { .. }
                    | PacketError::EmptyDimension { .. }
                    | PacketError::UnusedDimension { .. }
            ),
            "{err}"
        );
        assert_eq!(err.queue_error(), Some(queue_error::INVALID_DIMENSIONS));
    }
    assert_eq!(
        refused(builder().grid_2d([64, 0], [64, 1])).to_string(),
        "dimension y: workgroup size 1 and grid size 0 must be non-zero"
    );
    // setup bits above the dimension count are reserved.
    let mut packet = builder().build(&LIMITS).unwrap();
    packet.setup |= 0x10;
    assert!(matches!(
        validate_dispatch(&packet, &LIMITS),
        Err(PacketError::Dimensions { setup: 0x11, .. })
    ));
}

#[test]
fn group_memory_code_object_and_workgroup_size_errors() {
    let err = refused(builder().group_segment_size(64 * 1024 + 1));
    assert_eq!(
        err,
        PacketError::GroupSegmentTooLarge {
            size: 65537,
            limit: 65536
        }
    );
    assert_eq!(err.queue_error(), Some(queue_error::INVALID_GROUP_MEMORY));
    assert!(
        builder()
            .group_segment_size(64 * 1024)
            .build(&LIMITS)
            .is_ok()
    );
    let small = DispatchLimits {
        max_group_segment_size: 1024,
        ..LIMITS
    };
    assert!(builder().group_segment_size(2048).build(&small).is_err());

    let err = refused(DispatchBuilder::new(0, KERNARG).grid_1d(64, 64));
    assert_eq!(err, PacketError::NullKernelObject);
    assert_eq!(err.queue_error(), Some(queue_error::INVALID_CODE_OBJECT));
    let err = refused(DispatchBuilder::new(KERNEL + 32, KERNARG).grid_1d(64, 64));
    assert_eq!(err, PacketError::MisalignedKernelObject(KERNEL + 32));
    assert_eq!(err.queue_error(), Some(queue_error::INVALID_CODE_OBJECT));

    let err = refused(builder().grid_3d([64, 64, 64], [16, 16, 8]));
    assert_eq!(
        err,
        PacketError::WorkgroupTooLarge {
            size: 2048,
            limit: 1024
        }
    );
    assert_eq!(err.queue_error(), Some(queue_error::WORKGROUP_TOO_LARGE));
    assert!(
        builder()
            .grid_3d([64, 64, 64], [16, 16, 4])
            .build(&LIMITS)
            .is_ok()
    );
    // 1025 in one dimension.
    assert!(matches!(
        refused(builder().grid_1d(2048, 1025)),
        PacketError::WorkgroupTooLarge { size: 1025, .. }
    ));
}

#[test]
fn the_cp_order_decides_which_error_is_reported() {
    // Bad dimensions, LDS, kernel object and workgroup size at once: the CP (and ROCr's
    // decoder) reports dimensions first, then group memory, then the code object.
    let all_bad = DispatchBuilder::new(KERNEL + 8, KERNARG)
        .geometry(2, [0, 1, 1], [2048, 1, 1])
        .group_segment_size(u32::MAX);
    assert_eq!(
        refused(all_bad).queue_error(),
        Some(queue_error::INVALID_DIMENSIONS)
    );
    let lds_and_more = all_bad.grid_1d(64, 2048);
    assert_eq!(
        refused(lds_and_more).queue_error(),
        Some(queue_error::INVALID_GROUP_MEMORY)
    );
    let code_and_size = lds_and_more.group_segment_size(0);
    assert_eq!(
        refused(code_and_size).queue_error(),
        Some(queue_error::INVALID_CODE_OBJECT)
    );
}

#[test]
fn abi_rules_the_cp_does_not_check() {
    let err = refused(DispatchBuilder::new(KERNEL, KERNARG + 8).grid_1d(64, 64));
    assert_eq!(err, PacketError::MisalignedKernarg(KERNARG + 8));
    assert_eq!(err.queue_error(), None);
    let err = refused(builder().private_segment_size(LIMITS.max_private_segment_size + 1));
    assert!(matches!(err, PacketError::PrivateSegmentTooLarge { .. }));
    assert!(
        builder()
            .private_segment_size(LIMITS.max_private_segment_size)
            .build(&LIMITS)
            .is_ok()
    );
}

#[test]
fn raw_headers_and_reserved_fields_are_format_errors() {
    let good = builder().build(&LIMITS).unwrap();
    let cases: [(KernelDispatchPacket, &str); 5] = [
        (
            KernelDispatchPacket {
                header: good.header | 0x2000,
                ..good
            },
            "reserved header bit",
        ),
        (
            KernelDispatchPacket {
                header: good.header | 3 << 9,
                ..good
            },
            "reserved acquire scope",
        ),
        (
            KernelDispatchPacket {
                header: (good.header & !0xFF) | u16::from(PacketType::AGENT_DISPATCH.0),
                ..good
            },
            "wrong type",
        ),
        (
            KernelDispatchPacket {
                reserved0: 1,
                ..good
            },
            "reserved0",
        ),
        (
            KernelDispatchPacket {
                reserved2: 1,
                ..good
            },
            "reserved2",
        ),
    ];
    for (packet, what) in cases {
        let err = validate_dispatch(&packet, &LIMITS).expect_err(what);
        assert_eq!(
            err.queue_error(),
            Some(queue_error::INVALID_PACKET_FORMAT),
            "{what}: {err}"
        );
    }
}

#[test]
fn header_settings_keep_the_packet_type() {
    let packet = barrier_and(&[], 0)
        .unwrap()
        .barrier(true)
        .acquire(FenceScope::None)
        .release(FenceScope::Agent);
    let header = packet.header();
    assert_eq!(header.packet_type(), PacketType::BARRIER_AND);
    assert!(header.barrier());
    assert_eq!(header.acquire_fence_scope(), Some(FenceScope::None));
    assert_eq!(header.release_fence_scope(), Some(FenceScope::Agent));
    assert!(!packet.barrier(false).header().barrier());
}

#[test]
fn barrier_and_or_packets() {
    let deps = [0x1000, 0, 0x3000];
    let and = barrier_and(&deps, 0x9000).unwrap();
    assert_eq!(and.header().packet_type(), PacketType::BARRIER_AND);
    assert_eq!(and.dep_signal, [0x1000, 0, 0x3000, 0, 0]);
    assert_eq!(and.completion_signal, 0x9000);
    assert_eq!((and.reserved0, and.reserved1, and.reserved2), (0, 0, 0));
    assert_eq!(and.to_raw().0[0] as u32, u32::from(and.header));

    let or = barrier_or(&deps, 0).unwrap();
    assert_eq!(or.header().packet_type(), PacketType::BARRIER_OR);
    assert_eq!(or.dep_signal, and.dep_signal);

    let six = [0x40; MAX_BARRIER_DEPENDENCIES + 1];
    assert_eq!(
        barrier_and(&six, 0),
        Err(PacketError::TooManyDependencies(6))
    );
    assert_eq!(
        barrier_or(&six, 0),
        Err(PacketError::TooManyDependencies(6))
    );
    assert!(barrier_and(&six[..5], 0).is_ok());
    // An OR whose dependencies are all null waits until its queue is destroyed.
    assert_eq!(barrier_or(&[], 0), Err(PacketError::NoDependency));
    assert_eq!(barrier_or(&[0, 0], 0), Err(PacketError::NoDependency));
    // An AND without dependencies completes at once: a harmless marker.
    assert_eq!(barrier_and(&[], 0).unwrap().dep_signal, [0; 5]);
}

#[test]
fn barrier_value_packets() {
    let packet = barrier_value(0x1000, Condition::Lt, -5, 0xFF, 0x2000).release(FenceScope::Agent);
    assert_eq!(packet.header().packet_type(), PacketType::VENDOR_SPECIFIC);
    assert_eq!(packet.header.amd_format, AmdFormat::BARRIER_VALUE.0);
    assert_eq!(packet.header.reserved, 0);
    assert_eq!(packet.signal, 0x1000);
    assert_eq!(packet.value, -5);
    assert_eq!(packet.mask, 0xFF);
    assert_eq!(SignalCondition(packet.cond), SignalCondition::LT);
    assert_eq!(packet.completion_signal, 0x2000);
    assert_eq!(
        (
            packet.reserved0,
            packet.reserved1,
            packet.reserved2,
            packet.reserved3
        ),
        (0, 0, 0, 0)
    );
    // The published word is header | format << 16.
    let raw = packet.to_raw();
    assert_eq!(
        raw.0[0] as u32,
        u32::from(packet.header.header) | u32::from(AmdFormat::BARRIER_VALUE.0) << 16
    );
    for condition in [Condition::Eq, Condition::Ne, Condition::Lt, Condition::Gte] {
        let cond = barrier_value(0, condition, 0, -1, 0).cond;
        assert_eq!(Condition::try_from(SignalCondition(cond)), Ok(condition));
    }
    assert_eq!(Condition::try_from(SignalCondition(4)), Err(4));
}

#[test]
fn setup_helpers_agree_with_the_builder() {
    for dimensions in 1..=3 {
        let packet = builder()
            .geometry(dimensions, [1, 1, 1], [1, 1, 1])
            .build(&LIMITS)
            .unwrap();
        assert_eq!(packet.setup, dispatch_setup(dimensions));
    }
}
