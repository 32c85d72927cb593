//! Queues: every validation row of CREATE_QUEUE / DESTROY_QUEUE / UPDATE_QUEUE and friends
//! (kfd.md §5, §10, §11.1–3, §11.5), the limits, the doorbell path to the command processor,
//! and eviction on a VM fault.

mod common;

use std::ptr::NonNull;

use amdgpu_sim::MachineConfig;
use amdgpu_sim::vm::{Access, FaultKind, MemoryFault};
use common::{PAGE, Session, ioctl, recording_session, small_config};
use kfd::Errno;
use kfd::abi::mmap_offset::{self, MmapType};
use kfd::abi::{
    AllocFlags, CreateQueueArgs, GetQueueWaveStateArgs, QueueType, SetCuMaskArgs, UpdateQueueArgs,
};
use kfd::ioctl::calls as ioctls;
use kfd::ioctl::requests as req;

fn pid() -> i32 {
    std::process::id() as i32
}

/// Native-endian u32 words of `bytes`.
fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
        .collect()
}

/// Expect CREATE_QUEUE to fail with `errno` after `change` is applied to good arguments.
fn refused(
    s: &Session,
    good: &CreateQueueArgs,
    errno: Errno,
    change: impl FnOnce(&mut CreateQueueArgs),
) {
    let mut args = *good;
    change(&mut args);
    assert_eq!(s.create_queue(&mut args), Err(errno), "{args:#x?}");
}

#[test]
fn create_queue_checks_its_arguments() {
    let s = Session::small();
    let b = s.queue_buffers(4096);
    let good = s.queue_args(&b);
    refused(&s, &good, Errno::EINVAL, |a| a.queue_percentage = 101);
    refused(&s, &good, Errno::EINVAL, |a| a.queue_priority = 16);
    refused(&s, &good, Errno::EFAULT, |a| {
        a.ring_base_address = 0x7FFF_FFFF_FFF8;
    });
    refused(&s, &good, Errno::EINVAL, |a| a.ring_size = 3000);
    refused(&s, &good, Errno::EFAULT, |a| {
        a.read_pointer_address = 1 << 47;
    });
    refused(&s, &good, Errno::EFAULT, |a| {
        a.write_pointer_address = u64::MAX - 2;
    });
    refused(&s, &good, Errno::EFAULT, |a| a.eop_buffer_address = 1 << 50);
    refused(&s, &good, Errno::EFAULT, |a| {
        a.ctx_save_restore_address = 1 << 50;
    });
    // Unknown queue types are the kernel-internal ENOTSUPP (524).
    refused(&s, &good, Errno::ENOTSUPP, |a| a.queue_type = 5);
    assert_eq!(Errno::ENOTSUPP.raw(), 524);
    refused(&s, &good, Errno::EINVAL, |a| a.gpu_id ^= 0x40);
    // Bits 8-15 of the percentage are the PM4 target XCC, not part of the check.
    let mut xcc = good;
    xcc.queue_percentage = 0x0164;
    s.create_queue(&mut xcc).unwrap();
}

#[test]
fn create_queue_checks_the_buffers_are_exact_gpu_mappings() {
    let s = Session::small();
    let b = s.queue_buffers(8192);
    let good = s.queue_args(&b);
    // rptr/wptr: anywhere in a mapping that is exactly one page, starting at that page.
    let two_pages = s.gtt(2 * PAGE);
    refused(&s, &good, Errno::EINVAL, |a| {
        a.write_pointer_address = two_pages.va;
    });
    refused(&s, &good, Errno::EINVAL, |a| {
        a.read_pointer_address = two_pages.va + PAGE;
    });
    refused(&s, &good, Errno::EINVAL, |a| {
        a.read_pointer_address = s.reserve_va(PAGE);
    });
    // The ring: a mapping of exactly ring_size bytes that starts at the ring.
    refused(&s, &good, Errno::EINVAL, |a| a.ring_size = 4096);
    refused(&s, &good, Errno::EINVAL, |a| a.ring_size = 16384);
    refused(&s, &good, Errno::EINVAL, |a| a.ring_base_address = 0);
    let big = s.gtt(4 * PAGE);
    refused(&s, &good, Errno::EINVAL, |a| {
        a.ring_base_address = big.va + PAGE;
    });
    // EOP: the node's size, one mapping of it.
    refused(&s, &good, Errno::EINVAL, |a| a.eop_buffer_size = 2 * PAGE);
    refused(&s, &good, Errno::EINVAL, |a| {
        a.eop_buffer_address = b.cwsr.va;
    });
    // CWSR: the node's control stack size, at least the node's CWSR size, one mapping of
    // (size + debug) x XCCs.
    refused(&s, &good, Errno::EINVAL, |a| a.ctl_stack_size += 4096);
    refused(&s, &good, Errno::EINVAL, |a| {
        a.ctx_save_restore_size -= 4096;
    });
    refused(&s, &good, Errno::EINVAL, |a| {
        a.ctx_save_restore_size += 4096;
    });
    refused(&s, &good, Errno::EINVAL, |a| a.ctx_save_restore_address = 0);
    refused(&s, &good, Errno::EINVAL, |a| {
        a.ctx_save_restore_address = b.ring.va;
    });
    // A GPU mapping is what counts: a CPU-only mapping of the right size is not enough.
    let unmapped = s
        .alloc(AllocFlags::GTT | AllocFlags::WRITABLE, PAGE)
        .unwrap();
    s.cpu_map(&unmapped).unwrap();
    refused(&s, &good, Errno::EINVAL, |a| {
        a.write_pointer_address = unmapped.va;
    });
    // Without an EOP buffer the queue is accepted (not every ASIC needs one).
    let mut no_eop = good;
    no_eop.eop_buffer_address = 0;
    no_eop.eop_buffer_size = 0;
    s.create_queue(&mut no_eop).unwrap();
    let mut args = good;
    s.create_queue(&mut args).unwrap();
    assert_eq!(args.queue_id, no_eop.queue_id + 1);
}

#[test]
fn a_small_ring_is_raised_to_1024_bytes_and_not_size_checked() {
    let s = Session::small();
    let b = s.queue_buffers(4096);
    let mut args = s.queue_args(&b);
    args.ring_size = 0;
    s.create_queue(&mut args).unwrap();
    assert_eq!(args.ring_size, 1024);
    let other = amdgpu_sim::Machine::new(small_config()).unwrap();
    let kfd = common::open_kfd(&other);
    let mut args = CreateQueueArgs {
        gpu_id: other.gpus()[0].gpu_id,
        ring_size: 4096,
        queue_type: QueueType::COMPUTE_AQL.0,
        ..CreateQueueArgs::default()
    };
    // A GPU not bound with ACQUIRE_VM: ESRCH.
    assert_eq!(
        ioctl::<req::CreateQueue>(&other, kfd, &mut args),
        Err(Errno::ESRCH)
    );
}

#[test]
fn create_queue_reports_the_doorbell_and_starts_a_processor() {
    let (s, engine) = recording_session();
    let b = s.queue_buffers(4096);
    let mut args = s.queue_args(&b);
    s.create_queue(&mut args).unwrap();
    assert_eq!(args.queue_id, 0);
    assert_eq!(
        args.doorbell_offset,
        mmap_offset::encode(MmapType::Doorbell, s.gpu_id, 0)
    );
    let mut second = s.queue_args(&s.queue_buffers(4096));
    s.create_queue(&mut second).unwrap();
    assert_eq!(second.queue_id, 1);
    // The second queue's doorbell is the next 8 bytes of the slice.
    let (slice_offset, in_slice) = mmap_offset::split_doorbell_offset(second.doorbell_offset);
    assert_eq!((slice_offset, in_slice), (args.doorbell_offset, 8));

    let queues = engine.queues.lock().unwrap();
    let spec = queues[1].lock().unwrap().spec.unwrap();
    assert_eq!(spec.queue_id, 1);
    assert_eq!(spec.gpu_id, s.gpu_id);
    assert_eq!(spec.ring_bytes, 4096);
    assert_eq!(spec.read_pointer_va, second.read_pointer_address);
    assert_eq!(spec.write_pointer_va, second.write_pointer_address);
    assert_eq!((spec.percentage, spec.priority), (100, 7));
    drop(queues);

    // A doorbell store plus the notification reaches that queue's processor, and the
    // processor's doorbell pointer sees the stored value.
    let page = s.doorbells();
    let doorbell = NonNull::new(page.as_ptr().cast::<u64>().wrapping_add(1)).unwrap();
    // SAFETY: the doorbell page is a live 8 KiB shared mapping.
    unsafe { doorbell.write_volatile(41) };
    s.sys().notify_doorbell(doorbell, 41);
    let queues = engine.queues.lock().unwrap();
    assert_eq!(queues[1].lock().unwrap().doorbells, [41]);
    assert!(queues[0].lock().unwrap().doorbells.is_empty());
    let spec_doorbell = queues[1].lock().unwrap().spec.unwrap().doorbell as *const u64;
    // SAFETY: the spec's doorbell points into the simulator's mapping of the same slice.
    assert_eq!(unsafe { spec_doorbell.read_volatile() }, 41);
    drop(queues);
    // Notifications for addresses that are no doorbell reach no queue.
    let elsewhere = 0u64;
    s.sys().notify_doorbell(NonNull::from(&elsewhere), 9);
    let queues = engine.queues.lock().unwrap();
    assert_eq!(queues[1].lock().unwrap().doorbells, [41]);
    assert!(queues[0].lock().unwrap().doorbells.is_empty());
}

#[test]
fn queue_buffers_stay_mapped_while_the_queue_lives() {
    let (s, engine) = recording_session();
    let b = s.queue_buffers(4096);
    let mut args = s.queue_args(&b);
    s.create_queue(&mut args).unwrap();
    for bo in [&b.ring, &b.pointers, &b.eop, &b.cwsr] {
        assert_eq!(s.unmap_gpu(bo, &[s.gpu_id]), Err((Errno::EBUSY, 0)));
    }
    // XNACK and RUNTIME_ENABLE need a process without queues.
    assert_eq!(
        ioctls::set_xnack_mode(s.sys(), s.kfd, 1).unwrap_err().errno,
        Errno::EBUSY
    );
    assert_eq!(
        ioctls::runtime_enable(s.sys(), s.kfd, 0, 1)
            .unwrap_err()
            .errno,
        Errno::EEXIST
    );
    ioctls::destroy_queue(s.sys(), s.kfd, args.queue_id).unwrap();
    assert!(engine.queues.lock().unwrap()[0].lock().unwrap().stopped);
    assert_eq!(
        ioctls::destroy_queue(s.sys(), s.kfd, args.queue_id)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    for bo in [&b.ring, &b.pointers, &b.eop, &b.cwsr] {
        s.unmap_gpu(bo, &[s.gpu_id]).unwrap();
        s.free(bo).unwrap();
    }
    ioctls::set_xnack_mode(s.sys(), s.kfd, 1).unwrap();
    assert_eq!(s.machine.process_counts(pid()).queues, 0);
}

#[test]
fn each_device_takes_127_queues_per_process() {
    let s = Session::small();
    let b = s.queue_buffers(4096);
    // Many queues may share buffers: only the mappings are checked.
    let mut ids = Vec::new();
    for _ in 0..127 {
        let mut args = s.queue_args(&b);
        s.create_queue(&mut args).unwrap();
        ids.push(args.queue_id);
    }
    assert_eq!(ids, (0..127).collect::<Vec<_>>());
    let mut one_more = s.queue_args(&b);
    assert_eq!(s.create_queue(&mut one_more), Err(Errno::ENOSPC));
    ioctls::destroy_queue(s.sys(), s.kfd, 42).unwrap();
    let mut again = s.queue_args(&b);
    s.create_queue(&mut again).unwrap();
    // The lowest free queue id, and the lowest free doorbell.
    assert_eq!(again.queue_id, 42);
    assert_eq!(
        mmap_offset::split_doorbell_offset(again.doorbell_offset).1,
        42 * 8
    );
}

#[test]
fn gfx942_takes_255_queues() {
    let s = Session::new(
        MachineConfig::mi300x()
            .with_compute_units(8)
            .with_vram(1 << 30),
    );
    let b = s.queue_buffers(4096);
    for _ in 0..255 {
        s.create_queue(&mut s.queue_args(&b)).unwrap();
    }
    assert_eq!(s.create_queue(&mut s.queue_args(&b)), Err(Errno::ENOSPC));
}

#[test]
fn sdma_queues_need_no_cwsr_and_run_out_of_engine_slots() {
    let (s, engine) = recording_session();
    let ring = s.gtt(4096);
    let pointers = s.gtt(PAGE);
    let sdma = |kind: QueueType, engine_id: u32| CreateQueueArgs {
        ring_base_address: ring.va,
        write_pointer_address: pointers.va,
        read_pointer_address: pointers.va + 8,
        ring_size: 4096,
        gpu_id: s.gpu_id,
        queue_type: kind.0,
        queue_percentage: 100,
        sdma_engine_id: engine_id,
        ..CreateQueueArgs::default()
    };
    // MI210: 2 SDMA engines x 8 queues (plus 3 XGMI engines).
    for _ in 0..16 {
        s.create_queue(&mut sdma(QueueType::SDMA, 0)).unwrap();
    }
    assert_eq!(
        s.create_queue(&mut sdma(QueueType::SDMA, 0)),
        Err(Errno::ENOMEM)
    );
    s.create_queue(&mut sdma(QueueType::SDMA_XGMI, 0)).unwrap();
    assert_eq!(
        s.create_queue(&mut sdma(QueueType::SDMA_BY_ENG_ID, 5)),
        Err(Errno::EINVAL)
    );
    // SDMA queues go to the SDMA engine, not to the command processor.
    assert!(engine.queues.lock().unwrap().is_empty());
    // Queue 0 held engine 0's first slot: asked for by engine id, only engine 0 has room.
    ioctls::destroy_queue(s.sys(), s.kfd, 0).unwrap();
    assert_eq!(
        s.create_queue(&mut sdma(QueueType::SDMA_BY_ENG_ID, 1)),
        Err(Errno::ENOMEM)
    );
    s.create_queue(&mut sdma(QueueType::SDMA_BY_ENG_ID, 0))
        .unwrap();
}

#[test]
fn update_queue_checks_and_forwards() {
    let (s, engine) = recording_session();
    let b = s.queue_buffers(4096);
    let mut args = s.queue_args(&b);
    s.create_queue(&mut args).unwrap();
    let update = |a: &mut UpdateQueueArgs| {
        // SAFETY: every ring named in these tests is a live GPU-mapped BO.
        unsafe { ioctls::update_queue(s.sys(), s.kfd, a) }.map_err(|e| e.errno)
    };
    let good = UpdateQueueArgs {
        ring_base_address: b.ring.va,
        queue_id: args.queue_id,
        ring_size: 4096,
        queue_percentage: 50,
        queue_priority: 3,
    };
    let mut bad = good;
    bad.queue_percentage = 200;
    assert_eq!(update(&mut bad), Err(Errno::EINVAL));
    let mut bad = good;
    bad.queue_priority = 99;
    assert_eq!(update(&mut bad), Err(Errno::EINVAL));
    let mut bad = good;
    bad.ring_size = 5000;
    assert_eq!(update(&mut bad), Err(Errno::EINVAL));
    let mut bad = good;
    bad.ring_base_address = 1 << 47;
    assert_eq!(update(&mut bad), Err(Errno::EFAULT));
    // An unknown queue is EFAULT, and so is a new ring that is not mapped at that size.
    let mut bad = good;
    bad.queue_id = 9;
    assert_eq!(update(&mut bad), Err(Errno::EFAULT));
    let mut bad = good;
    bad.ring_size = 8192;
    assert_eq!(update(&mut bad), Err(Errno::EFAULT));

    let new_ring = s.gtt(8192);
    let mut ok = good;
    ok.ring_base_address = new_ring.va;
    ok.ring_size = 8192;
    update(&mut ok).unwrap();
    // The old ring is free now, the new one is held.
    s.unmap_gpu(&b.ring, &[s.gpu_id]).unwrap();
    assert_eq!(s.unmap_gpu(&new_ring, &[s.gpu_id]), Err((Errno::EBUSY, 0)));
    // A NULL ring disables the queue: the processor runs with percentage 0.
    let mut off = good;
    off.ring_base_address = 0;
    update(&mut off).unwrap();
    let record = engine.queues.lock().unwrap()[0].clone();
    assert_eq!(
        record.lock().unwrap().updates,
        [(new_ring.va, 8192, 50, 3), (0, 4096, 0, 3)]
    );
}

#[test]
fn cu_masks_wave_state_and_gws() {
    let s = Session::small();
    let b = s.queue_buffers(4096);
    let mut args = s.queue_args(&b);
    s.create_queue(&mut args).unwrap();
    let mask = [0xFFu32, 0];
    let cu = |num: u32, ptr: u64, queue_id: u32| {
        let mut a = SetCuMaskArgs {
            queue_id,
            num_cu_mask: num,
            cu_mask_ptr: ptr,
        };
        ioctl::<req::SetCuMask>(s.sys(), s.kfd, &mut a)
    };
    let ptr = mask.as_ptr() as u64;
    assert_eq!(cu(0, ptr, 0), Err(Errno::EINVAL));
    assert_eq!(cu(33, ptr, 0), Err(Errno::EINVAL));
    assert_eq!(cu(64, 8, 0), Err(Errno::EFAULT));
    assert_eq!(cu(64, ptr, 7), Err(Errno::EFAULT));
    cu(64, ptr, 0).unwrap();
    // More than 1024 bits are truncated to 1024: exactly 128 bytes are read. The mask ends
    // where a CPU-mapped page meets the PROT_NONE rest of its reservation, so reading one
    // byte more would fault.
    let page = s.gtt(PAGE);
    let tail = page.va + PAGE - 128;
    cu(4096, tail, 0).unwrap();
    assert_eq!(cu(4096, tail + 4, 0), Err(Errno::EFAULT));

    let mut wave = GetQueueWaveStateArgs {
        queue_id: 5,
        ..Default::default()
    };
    assert_eq!(
        ioctl::<req::GetQueueWaveState>(s.sys(), s.kfd, &mut wave),
        Err(Errno::EFAULT)
    );
    // An active queue's state belongs to the CP: EINVAL (get_wave_state wants it inactive).
    // The buffer is as large as the control stack CREATE_QUEUE was given (one XCC here).
    let mut stack = vec![0xAAu8; args.ctl_stack_size as usize];
    // SAFETY: `stack` holds the queue's whole ctl_stack_size.
    let state = unsafe { ioctls::get_queue_wave_state(s.sys(), s.kfd, args.queue_id, &mut stack) };
    assert_eq!(state.unwrap_err().errno, Errno::EINVAL);
    assert!(stack.iter().all(|&b| b == 0xAA));
    // Suspended (percentage 0): the header of an empty control stack, nothing in use.
    let mut suspend = UpdateQueueArgs {
        ring_base_address: b.ring.va,
        queue_id: args.queue_id,
        ring_size: 4096,
        queue_percentage: 0,
        queue_priority: 0,
    };
    // SAFETY: the ring is a live GPU-mapped BO.
    unsafe { ioctls::update_queue(s.sys(), s.kfd, &mut suspend) }.unwrap();
    // SAFETY: as above.
    let state = unsafe { ioctls::get_queue_wave_state(s.sys(), s.kfd, args.queue_id, &mut stack) };
    assert_eq!(state.unwrap(), (0, 0));
    assert_eq!(
        words(&stack[..16]),
        [b.ctl_stack_size, 0, b.ctl_stack_size, 0]
    );
    assert!(stack[16..].iter().all(|&b| b == 0xAA));
    wave.queue_id = args.queue_id;
    wave.ctl_stack_address = 64;
    assert_eq!(
        ioctl::<req::GetQueueWaveState>(s.sys(), s.kfd, &mut wave),
        Err(Errno::EFAULT)
    );

    let gws = |queue_id: u32| {
        let mut buf = [queue_id, 1, 0, 0];
        let request = kfd::ioctl::Opcode::new(kfd::ioctl::Direction::ReadWrite, b'K', 0x1E, 16);
        // SAFETY: a 16-byte buffer for a 16-byte request.
        unsafe { s.sys().ioctl(s.kfd, request, buf.as_mut_ptr().cast()) }.map(drop)
    };
    assert_eq!(gws(9), Err(Errno::EINVAL));
    assert_eq!(gws(args.queue_id), Err(Errno::ENODEV));
}

#[test]
fn wave_state_headers_go_to_every_xcc_save_area() {
    // GC 9.4.3 (get_wave_state_v9_4_3): one header per XCC, ctx_save_restore_size apart.
    let s = Session::new(
        MachineConfig::mi300x()
            .with_compute_units(8)
            .with_vram(1 << 30),
    );
    let b = s.queue_buffers(4096);
    let mut args = s.queue_args(&b);
    args.queue_percentage = 0;
    s.create_queue(&mut args).unwrap();
    let mut wave = GetQueueWaveStateArgs {
        ctl_stack_address: b.cwsr.va,
        queue_id: args.queue_id,
        ..Default::default()
    };
    ioctl::<req::GetQueueWaveState>(s.sys(), s.kfd, &mut wave).unwrap();
    let xccs = s.machine.gpus()[0].xccs;
    assert_eq!(xccs, 8);
    for xcc in 0..u64::from(xccs) {
        let at = xcc * u64::from(b.cwsr_size);
        let header = [b.cwsr.word(at), b.cwsr.word(at + 8)]
            .map(|w| w.load(std::sync::atomic::Ordering::Acquire).to_ne_bytes());
        assert_eq!(
            words(&header.concat()),
            [b.ctl_stack_size, 0, b.ctl_stack_size, 0],
            "XCC {xcc}"
        );
    }
}

#[test]
fn a_vm_fault_evicts_the_process_queues_on_that_gpu() {
    let (s, engine) = recording_session();
    s.event_page();
    let memory_event = s.create_event(kfd::abi::EventType::MEMORY, false).unwrap();
    let b = s.queue_buffers(4096);
    let mut args = s.queue_args(&b);
    s.create_queue(&mut args).unwrap();
    let fault = MemoryFault {
        va: 0x1234_5678,
        access: Access::Write,
        kind: FaultKind::NotPresent,
    };
    s.machine.inject_vm_fault(pid(), s.gpu_id, fault).unwrap();
    let record = engine.queues.lock().unwrap()[0].clone();
    assert_eq!(record.lock().unwrap().updates, [(b.ring.va, 4096, 0, 7)]);
    // Evicted queues stay stopped: an UPDATE_QUEUE does not restart them, and a new queue
    // starts suspended.
    let mut update = UpdateQueueArgs {
        ring_base_address: b.ring.va,
        queue_id: args.queue_id,
        ring_size: 4096,
        queue_percentage: 100,
        queue_priority: 7,
    };
    // SAFETY: the ring is a live GPU-mapped BO.
    unsafe { ioctls::update_queue(s.sys(), s.kfd, &mut update) }.unwrap();
    assert_eq!(record.lock().unwrap().updates.last().unwrap().2, 0);
    s.create_queue(&mut s.queue_args(&b)).unwrap();
    let second = engine.queues.lock().unwrap()[1].clone();
    assert_eq!(second.lock().unwrap().spec.unwrap().percentage, 0);
    // The MEMORY event carries the fault.
    let mut data = [kfd::abi::EventData::new(memory_event.event_id)];
    let mut timeout = 0;
    assert_eq!(
        ioctls::wait_events(s.sys(), s.kfd, &mut data, false, &mut timeout).unwrap(),
        kfd::abi::WaitResult::COMPLETE
    );
    let exception = data[0].memory_exception();
    assert_eq!(exception.va, 0x1234_5000);
    assert_eq!(exception.gpu_id, s.gpu_id);
    assert_eq!(exception.failure.not_present, 1);
    assert_eq!(
        exception.failure.read_only + exception.failure.no_execute,
        0
    );
}

#[test]
fn queue_ids_run_out_at_1024_per_process() {
    // 127 queues per device: the 1024 process-wide slots are reached on the ninth GPU.
    let engine = std::sync::Arc::new(common::RecordingEngine::default());
    let s = Session::new(small_config().with_gpu_count(9).with_engine(engine));
    let mut created = 0;
    let result = 'outer: {
        for &gpu_id in &s.gpu_ids.clone() {
            let on = Session {
                machine: s.machine.clone(),
                kfd: s.kfd,
                render: s.render,
                gpu_id,
                gpu_ids: s.gpu_ids.clone(),
            };
            let b = on.queue_buffers(4096);
            for _ in 0..127 {
                if let Err(e) = on.create_queue(&mut on.queue_args(&b)) {
                    break 'outer e;
                }
                created += 1;
            }
        }
        Errno::EPERM
    };
    assert_eq!((result, created), (Errno::ENOMEM, 1024));
}
