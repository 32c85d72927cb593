//! A machine with the default engines runs a real kernel end to end through raw ioctls: the
//! code object and its operands in BOs the host maps at their GPU addresses, an AQL queue from
//! CREATE_QUEUE, the doorbell, the command processor, the GFX9 shader core, the completion
//! signal's interrupt and WAIT_EVENTS.

mod common;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use amdgpu_loader::{CodeObject, HiddenArg, NoExternals};
use aql::packet::dispatch_setup;
use aql::{FenceScope, Header, KernelDispatchPacket, PacketType};
use common::{Bo, Session};
use kfd::abi::mmap_offset::split_doorbell_offset;
use kfd::abi::{EventData, EventType, WaitResult};
use kfd::ioctl::calls as ioctls;
use zerocopy::IntoBytes;

/// Elements of the vectors.
const N: u32 = 1000;

fn word(va: u64) -> &'static AtomicU64 {
    // SAFETY: every address passed is 8-byte aligned inside a BO the test mapped for the CPU at
    // its GPU address; the machine (and so the BO) outlives every use.
    unsafe { AtomicU64::from_ptr(va as *mut u64) }
}

fn store_u32(va: u64, value: u32, order: Ordering) {
    // SAFETY: as in `word`, 4-byte aligned.
    unsafe { AtomicU32::from_ptr(va as *mut u32) }.store(value, order);
}

fn bytes(bo: &Bo) -> &'static mut [u8] {
    // SAFETY: the BO is mapped read-write for the CPU at its VA for its whole size and lives as
    // long as the test's machine.
    unsafe { std::slice::from_raw_parts_mut(bo.va as *mut u8, bo.size as usize) }
}

fn vector_add_on(config: amdgpu_sim::MachineConfig, code_object: &str) {
    let s = Session::new(config);
    let (event_page, _) = s.event_page();

    let code = std::fs::read(format!(
        "{}/../tests/kernels/bin/{code_object}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("committed test kernel");
    let code = CodeObject::parse(&code).expect("parse");
    let image_bo = s.gtt(code.image_size().next_multiple_of(4096));
    let image = code
        .load(bytes(&image_bo), image_bo.va, &NoExternals)
        .expect("load");
    let kernel = image.kernel("vector_add").expect("vector_add");

    // Operands in VRAM, written and read by the host through its render-node mappings.
    let (lhs, rhs, sum) = (s.vram(4096), s.vram(4096), s.vram(4096));
    for i in 0..N as usize {
        bytes(&lhs)[4 * i..4 * i + 4].copy_from_slice(&(i as i32).to_le_bytes());
        bytes(&rhs)[4 * i..4 * i + 4].copy_from_slice(&(3 * i as i32 - 7).to_le_bytes());
    }
    bytes(&sum).fill(0xAB);

    let kernarg = s.gtt(4096);
    let mut explicit = kernel.explicit_args();
    for value in [lhs.va, rhs.va, sum.va] {
        let arg = explicit.next().expect("pointer argument");
        bytes(&kernarg)[arg.offset as usize..][..8].copy_from_slice(&value.to_le_bytes());
    }
    let n = explicit.next().expect("n");
    bytes(&kernarg)[n.offset as usize..][..4].copy_from_slice(&N.to_le_bytes());
    let (group, groups) = (64u32, N.div_ceil(64));
    let implicit = kernel
        .implicit_args
        .expect("code object V5 implicit arguments");
    for (kind, value) in [
        (HiddenArg::BlockCountX, u64::from(groups)),
        (HiddenArg::GroupSizeX, u64::from(group)),
        (HiddenArg::GroupSizeY, 1),
        (HiddenArg::GroupSizeZ, 1),
        (HiddenArg::BlockCountY, 1),
        (HiddenArg::BlockCountZ, 1),
        (HiddenArg::GridDims, 1),
    ] {
        if let Some(offset) = implicit.offset_of(kind) {
            let (_, size) = implicit.layout.slot(kind).expect("slot");
            bytes(&kernarg)[offset as usize..][..size as usize]
                .copy_from_slice(&value.to_le_bytes()[..size as usize]);
        }
    }

    // The completion signal: value 1, its mailbox a SIGNAL event's slot.
    let done = s.create_event(EventType::SIGNAL, false).unwrap();
    let signal = s.gtt(4096).va;
    word(signal).store(1, Ordering::Relaxed); // AMD_SIGNAL_KIND_USER
    word(signal + 8).store(1, Ordering::Relaxed);
    word(signal + 0x10).store(
        event_page.va + 8 * u64::from(done.event_slot_index),
        Ordering::Relaxed,
    );
    store_u32(signal + 0x18, done.event_id, Ordering::Release);

    // The queue: amd_queue_t in the pointer page, every ring slot INVALID.
    let buffers = s.queue_buffers(4096);
    let slots = buffers.ring.size / 64;
    for i in 0..slots {
        store_u32(buffers.ring.va + 64 * i, 1, Ordering::Relaxed);
    }
    word(buffers.pointers.va + 0x08).store(buffers.ring.va, Ordering::Relaxed);
    store_u32(buffers.pointers.va + 0x18, slots as u32, Ordering::Relaxed);
    store_u32(buffers.pointers.va + 0x88, 0x80, Ordering::Release);
    let mut args = s.queue_args(&buffers);
    s.create_queue(&mut args).expect("CREATE_QUEUE");
    let (_, in_slice) = split_doorbell_offset(args.doorbell_offset);
    // SAFETY: the slice mapping is 8 KiB and `in_slice` is a doorbell inside it.
    let doorbell = unsafe { s.doorbells().cast::<u8>().add(in_slice) }.cast::<u64>();

    let packet = KernelDispatchPacket {
        header: Header::new(PacketType::KERNEL_DISPATCH)
            .with_barrier(true)
            .with_acquire(FenceScope::System)
            .with_release(FenceScope::System)
            .0,
        setup: dispatch_setup(1),
        workgroup_size_x: group as u16,
        workgroup_size_y: 1,
        workgroup_size_z: 1,
        grid_size_x: groups * group,
        grid_size_y: 1,
        grid_size_z: 1,
        group_segment_size: kernel.group_segment_size,
        private_segment_size: kernel.private_segment_size,
        kernel_object: kernel.descriptor_address,
        kernarg_address: kernarg.va,
        completion_signal: signal,
        ..KernelDispatchPacket::default()
    };
    let raw = packet.as_bytes();
    let index = word(buffers.pointers.va + 0x38).fetch_add(1, Ordering::AcqRel);
    let slot = buffers.ring.va + 64 * (index % slots);
    bytes(&buffers.ring)[(slot - buffers.ring.va) as usize + 4..][..60].copy_from_slice(&raw[4..]);
    store_u32(
        slot,
        u32::from_le_bytes(raw[..4].try_into().unwrap()),
        Ordering::Release,
    );
    // SAFETY: the doorbell is inside the live doorbell mapping.
    unsafe { doorbell.write_volatile(index) };
    s.sys().notify_doorbell(doorbell, index);

    let mut wait = [EventData::new(done.event_id)];
    let mut timeout = 60_000;
    assert_eq!(
        ioctls::wait_events(s.sys(), s.kfd, &mut wait, false, &mut timeout).unwrap(),
        WaitResult::COMPLETE
    );
    assert_eq!(word(signal + 8).load(Ordering::Acquire), 0);
    assert_eq!(word(buffers.pointers.va + 0x80).load(Ordering::Acquire), 1);
    for i in 0..N as usize {
        let got = i32::from_le_bytes(bytes(&sum)[4 * i..4 * i + 4].try_into().unwrap());
        assert_eq!(got, i as i32 + (3 * i as i32 - 7), "c[{i}]");
    }
    assert!(
        bytes(&sum)[4 * N as usize..].iter().all(|&x| x == 0xAB),
        "past n untouched"
    );
}

#[test]
fn vector_add_runs_on_a_default_mi210() {
    vector_add_on(common::small_config(), "gfx90a/vector_add.co5");
}

#[test]
fn vector_add_runs_on_a_default_mi300x() {
    vector_add_on(
        amdgpu_sim::MachineConfig::mi300x()
            .with_compute_units(8)
            .with_vram(1 << 30),
        "gfx942/vector_add.co5",
    );
}
