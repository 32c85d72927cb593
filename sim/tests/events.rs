//! Events: ids and slots, limits, SET/RESET/DESTROY, WAIT_EVENTS (timeouts, all/any, ages,
//! auto-reset, FAIL), the interrupt rule the GPU fires events by, exception data, GPU resets,
//! and interrupted waits (kfd.md §6, §10, §11.6–7).

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use amdgpu_sim::ResetCause;
use common::{Session, ioctl};
use kfd::Errno;
use kfd::abi::mmap_offset::MmapType;
use kfd::abi::{
    CreateEventArgs, EventData, EventType, KFD_EVENT_TIMEOUT_INFINITE, WaitEventsArgs, WaitResult,
    exception,
};
use kfd::ioctl::calls as ioctls;
use kfd::ioctl::requests as req;
use test_support::{wait, watchdog};

fn pid() -> i32 {
    std::process::id() as i32
}

/// Block until a WAIT_EVENTS caller sleeps on event `id` (the simulated driver counts them).
fn wait_until_asleep(s: &Session, id: u32) {
    wait::assert_until(
        Duration::from_secs(30),
        "a waiter asleep on the event",
        || s.machine.sleeping_event_waiters(pid(), id) > 0,
    );
}

fn wait(s: &Session, ids: &[u32], all: bool, timeout_ms: u32) -> (Result<WaitResult, Errno>, u32) {
    let mut events: Vec<EventData> = ids.iter().map(|&id| EventData::new(id)).collect();
    let mut timeout = timeout_ms;
    let result =
        ioctls::wait_events(s.sys(), s.kfd, &mut events, all, &mut timeout).map_err(|e| e.errno);
    (result, timeout)
}

/// WAIT_EVENTS returning the raw struct (result and outputs even on failure).
fn wait_raw(
    s: &Session,
    events: &mut [EventData],
    all: bool,
    timeout: u32,
) -> (Result<(), Errno>, WaitEventsArgs) {
    let mut args = WaitEventsArgs {
        events_ptr: events.as_mut_ptr() as u64,
        num_events: events.len() as u32,
        wait_for_all: u32::from(all),
        timeout,
        wait_result: 77,
    };
    let result = ioctl::<req::WaitEvents>(s.sys(), s.kfd, &mut args);
    (result, args)
}

#[test]
fn ids_slots_and_page_offsets() {
    let s = Session::small();
    let (_page, first) = s.event_page();
    let second = s.create_event(EventType::SIGNAL, false).unwrap();
    assert_eq!((second.event_id, second.event_slot_index), (2, 2));
    assert_eq!(second.event_trigger_data, 2);
    assert_eq!(second.event_page_offset, MmapType::Events.bits());
    let debug = s.create_event(EventType::DEBUG_EVENT, false).unwrap();
    assert_eq!(debug.event_slot_index, 3);
    // Other types: ids from 0x40000000, no page offset, the slot index left as passed.
    let mut memory = CreateEventArgs {
        event_type: EventType::MEMORY.0,
        event_slot_index: 0xABCD,
        event_page_offset: 0,
        ..Default::default()
    };
    ioctls::create_event(s.sys(), s.kfd, &mut memory).unwrap();
    assert_eq!(memory.event_id, 0x4000_0000);
    assert_eq!(memory.event_trigger_data, 0x4000_0000);
    assert_eq!(memory.event_slot_index, 0xABCD);
    assert_eq!(memory.event_page_offset, 0);
    // The type is not validated: an unknown one is a non-signal event.
    let odd = s.create_event(EventType(99), false).unwrap();
    assert_eq!(odd.event_id, 0x4000_0001);
    // Ids are reused lowest-first.
    ioctls::destroy_event(s.sys(), s.kfd, second.event_id).unwrap();
    assert_eq!(
        s.create_event(EventType::SIGNAL, false).unwrap().event_id,
        2
    );
    assert_eq!(
        ioctls::destroy_event(s.sys(), s.kfd, 0x4000_0005)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    // Id 0 is reserved and is no event.
    assert_eq!(
        ioctls::destroy_event(s.sys(), s.kfd, 0).unwrap_err().errno,
        Errno::EINVAL
    );
    assert_eq!(first.event_id, 1);
    assert_eq!(s.machine.process_counts(pid()).events, 5);
}

#[test]
fn a_user_page_holds_4095_signal_events() {
    let s = Session::small();
    s.event_page();
    for id in 2..4096 {
        assert_eq!(
            s.create_event(EventType::SIGNAL, false).unwrap().event_id,
            id
        );
    }
    assert_eq!(s.create_event(EventType::SIGNAL, false), Err(Errno::ENOSPC));
    // Non-signal events are not limited by slots.
    s.create_event(EventType::HW_EXCEPTION, false).unwrap();
    ioctls::destroy_event(s.sys(), s.kfd, 100).unwrap();
    assert_eq!(
        s.create_event(EventType::SIGNAL, false).unwrap().event_id,
        100
    );
}

#[test]
fn a_kernel_page_holds_255_events_until_it_is_mapped() {
    let s = Session::small();
    for id in 1..256 {
        assert_eq!(
            s.create_event(EventType::SIGNAL, false).unwrap().event_id,
            id
        );
    }
    assert_eq!(s.create_event(EventType::SIGNAL, false), Err(Errno::ENOSPC));
    // Mapping the whole page raises the limit to its 4096 slots.
    s.kfd_mmap(MmapType::Events.bits(), 32 << 10).unwrap();
    assert_eq!(
        s.create_event(EventType::SIGNAL, false).unwrap().event_id,
        256
    );
}

#[test]
fn event_page_bos_must_be_kernel_mappable_and_big_enough() {
    let s = Session::small();
    let small = s.gtt(16 << 10);
    let mut args = CreateEventArgs {
        event_page_offset: small.handle,
        event_type: EventType::SIGNAL.0,
        ..Default::default()
    };
    assert_eq!(
        ioctls::create_event(s.sys(), s.kfd, &mut args)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    args.event_page_offset = kfd::abi::make_handle(s.gpu_id, 999);
    assert_eq!(
        ioctls::create_event(s.sys(), s.kfd, &mut args)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    args.event_page_offset = kfd::abi::make_handle(s.gpu_id ^ 0x7, 0);
    assert_eq!(
        ioctls::create_event(s.sys(), s.kfd, &mut args)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    let mut user = vec![0u64; 8192];
    let addr = (user.as_mut_ptr() as u64).next_multiple_of(4096);
    let mut userptr = kfd::abi::AllocMemoryOfGpuArgs {
        va_addr: s.reserve_va(32 << 10),
        size: 32 << 10,
        gpu_id: s.gpu_id,
        flags: kfd::abi::AllocFlags::USERPTR.bits(),
        mmap_offset: addr,
        ..Default::default()
    };
    ioctl::<req::AllocMemoryOfGpu>(s.sys(), s.kfd, &mut userptr).unwrap();
    args.event_page_offset = userptr.handle;
    assert_eq!(
        ioctls::create_event(s.sys(), s.kfd, &mut args)
            .unwrap_err()
            .errno,
        Errno::EINVAL
    );
    // None of these set a page: a good one still can.
    s.event_page();
    drop(user);
}

#[test]
fn the_event_page_gpu_must_be_bound() {
    let m = amdgpu_sim::Machine::new(common::small_config().with_gpu_count(2)).unwrap();
    let gpus = m.gpus();
    let kfd = common::open_kfd(&m);
    let render = common::open_render(&m, gpus[0].render_minor);
    kfd::ioctl::calls::acquire_vm(&m, kfd, render, gpus[0].gpu_id).unwrap();
    let mut args = CreateEventArgs {
        event_page_offset: kfd::abi::make_handle(gpus[1].gpu_id, 0),
        event_type: EventType::SIGNAL.0,
        ..Default::default()
    };
    assert_eq!(
        ioctls::create_event(&m, kfd, &mut args).unwrap_err().errno,
        Errno::ENODEV
    );
}

#[test]
fn set_reset_and_wait_timeouts() {
    let s = Session::small();
    s.event_page();
    let e = s.create_event(EventType::SIGNAL, false).unwrap().event_id;
    let memory = s.create_event(EventType::MEMORY, false).unwrap().event_id;
    let debug = s
        .create_event(EventType::DEBUG_EVENT, false)
        .unwrap()
        .event_id;
    // Only signal events can be set or reset from the CPU.
    for bad in [memory, debug, 0, 77] {
        assert_eq!(
            ioctls::set_event(s.sys(), s.kfd, bad).unwrap_err().errno,
            Errno::EINVAL
        );
        assert_eq!(
            ioctls::reset_event(s.sys(), s.kfd, bad).unwrap_err().errno,
            Errno::EINVAL
        );
    }
    // Poll: TIMEOUT with return 0.
    assert_eq!(wait(&s, &[e], false, 0), (Ok(WaitResult::TIMEOUT), 0));
    // A finite timeout really waits.
    let start = Instant::now();
    assert_eq!(wait(&s, &[e], false, 30).0, Ok(WaitResult::TIMEOUT));
    assert!(start.elapsed() >= Duration::from_millis(30));
    // A set event completes; a manual-reset event stays signaled until reset.
    ioctls::set_event(s.sys(), s.kfd, e).unwrap();
    assert_eq!(wait(&s, &[e], false, 0).0, Ok(WaitResult::COMPLETE));
    assert_eq!(wait(&s, &[e], false, 0).0, Ok(WaitResult::COMPLETE));
    ioctls::reset_event(s.sys(), s.kfd, e).unwrap();
    assert_eq!(wait(&s, &[e], false, 0).0, Ok(WaitResult::TIMEOUT));
    // An unknown id: EINVAL and FAIL (written back although the ioctl failed).
    let mut events = [EventData::new(e), EventData::new(12345)];
    let (result, args) = wait_raw(&s, &mut events, false, 0);
    assert_eq!(result, Err(Errno::EINVAL));
    assert_eq!(args.wait_result, WaitResult::FAIL.0);
    // A bad array pointer: EFAULT and FAIL.
    let mut args = WaitEventsArgs {
        events_ptr: 64,
        num_events: 1,
        wait_for_all: 0,
        timeout: 0,
        wait_result: 0,
    };
    assert_eq!(
        ioctl::<req::WaitEvents>(s.sys(), s.kfd, &mut args),
        Err(Errno::EFAULT)
    );
    assert_eq!(args.wait_result, WaitResult::FAIL.0);
    // Zero events: trivially complete.
    assert_eq!(wait(&s, &[], true, 0).0, Ok(WaitResult::COMPLETE));
}

#[test]
fn infinite_waits_end_when_another_thread_sets_the_event() {
    let s = Session::small();
    s.event_page();
    let a = s.create_event(EventType::SIGNAL, true).unwrap().event_id;
    let b = s.create_event(EventType::SIGNAL, true).unwrap().event_id;
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "the infinite wait to end once both events are set",
    );
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| wait(&s, &[a, b], true, KFD_EVENT_TIMEOUT_INFINITE));
        wait_until_asleep(&s, a);
        ioctls::set_event(s.sys(), s.kfd, a).unwrap();
        // wait_for_all: one of two is not enough; the waiter goes back to sleep on b.
        assert_eq!(s.machine.sleeping_event_waiters(pid(), a), 0);
        wait_until_asleep(&s, b);
        assert!(!waiter.is_finished());
        ioctls::set_event(s.sys(), s.kfd, b).unwrap();
        assert_eq!(
            waiter.join().unwrap(),
            (Ok(WaitResult::COMPLETE), KFD_EVENT_TIMEOUT_INFINITE)
        );
    });
    // Auto-reset: the waiter consumed both signals.
    assert_eq!(wait(&s, &[a], false, 0).0, Ok(WaitResult::TIMEOUT));
    assert_eq!(wait(&s, &[b], false, 0).0, Ok(WaitResult::TIMEOUT));
    // An auto-reset event set while nobody waits stays signaled for the next wait only.
    ioctls::set_event(s.sys(), s.kfd, a).unwrap();
    assert_eq!(wait(&s, &[a], false, 0).0, Ok(WaitResult::COMPLETE));
    assert_eq!(wait(&s, &[a], false, 0).0, Ok(WaitResult::TIMEOUT));
}

#[test]
fn destroying_a_waited_event_fails_the_wait_with_eio() {
    let s = Session::small();
    s.event_page();
    // The destroy must land while the wait sleeps. Should the waiter be late (a loaded
    // machine), its WAIT_EVENTS finds no such id (EINVAL) and the attempt is repeated.
    let mut seen = Vec::new();
    for _ in 0..10 {
        let e = s.create_event(EventType::SIGNAL, false).unwrap().event_id;
        let _watchdog = watchdog::arm(
            watchdog::HANG_DEADLINE,
            "the waiter to fail once its event is destroyed",
        );
        let (result, args) = std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let mut events = [EventData::new(e)];
                wait_raw(&s, &mut events, false, 10_000)
            });
            // Destroy once the waiter sleeps (or, should it be late, once it has failed).
            wait::assert_until(Duration::from_secs(30), "the waiter asleep or done", || {
                s.machine.sleeping_event_waiters(pid(), e) > 0 || waiter.is_finished()
            });
            ioctls::destroy_event(s.sys(), s.kfd, e).unwrap();
            waiter.join().unwrap()
        });
        assert_eq!(args.wait_result, WaitResult::FAIL.0);
        seen.push(result);
        if result == Err(Errno::EIO) {
            break;
        }
        assert_eq!(result, Err(Errno::EINVAL));
    }
    assert_eq!(seen.last(), Some(&Err(Errno::EIO)), "{seen:?}");
}

#[test]
fn event_ages_complete_waits_for_signals_already_seen() {
    let s = Session::small();
    s.event_page();
    let e = s.create_event(EventType::SIGNAL, true).unwrap().event_id;
    // A new event has age 1: waiting with age 1 does not complete, with another age it does
    // and reports the current age.
    let mut events = [EventData::new(e)];
    events[0].set_last_event_age(1);
    assert_eq!(
        wait_raw(&s, &mut events, false, 0).1.wait_result,
        WaitResult::TIMEOUT.0
    );
    ioctls::set_event(s.sys(), s.kfd, e).unwrap();
    ioctls::set_event(s.sys(), s.kfd, e).unwrap();
    let mut events = [EventData::new(e)];
    events[0].set_last_event_age(1);
    let (result, args) = wait_raw(&s, &mut events, false, 0);
    assert_eq!((result, args.wait_result), (Ok(()), WaitResult::COMPLETE.0));
    assert_eq!(events[0].last_event_age(), 3);
    // Age 3 is current: no completion (the signal was consumed by the previous wait).
    let (_, args) = wait_raw(&s, &mut events, false, 0);
    assert_eq!(args.wait_result, WaitResult::TIMEOUT.0);
    // Age 0 is the legacy behaviour: nothing is written back.
    ioctls::set_event(s.sys(), s.kfd, e).unwrap();
    let mut legacy = [EventData::new(e)];
    wait_raw(&s, &mut legacy, false, 0).0.unwrap();
    assert_eq!(legacy[0].last_event_age(), 0);
}

#[test]
fn gpu_interrupts_fire_events_by_their_slot() {
    let s = Session::small();
    let (page, first) = s.event_page();
    let second = s.create_event(EventType::SIGNAL, false).unwrap().event_id;
    let debug = s
        .create_event(EventType::DEBUG_EVENT, false)
        .unwrap()
        .event_id;
    let sink = s.machine.interrupt_sink(pid(), s.gpu_id).unwrap();
    let slot = |id: u32| page.word(u64::from(id) * 8);
    // An interrupt for an event whose slot is still UNSIGNALED does nothing.
    sink.end_of_pipe(second);
    assert_eq!(wait(&s, &[second], false, 0).0, Ok(WaitResult::TIMEOUT));
    // Writing anything but all-ones into the slot, plus the interrupt, fires it; the kernel
    // re-arms the slot.
    slot(second).store(u64::from(second), Ordering::Release);
    sink.end_of_pipe(second);
    assert_eq!(wait(&s, &[second], false, 0).0, Ok(WaitResult::COMPLETE));
    assert_eq!(slot(second).load(Ordering::Acquire), u64::MAX);
    // A wrong id in the interrupt: the kernel scans all slots.
    slot(first.event_id).store(0, Ordering::Release);
    sink.end_of_pipe(0xDEAD_BEEF);
    assert_eq!(
        wait(&s, &[first.event_id], false, 0).0,
        Ok(WaitResult::COMPLETE)
    );
    // s_sendmsg interrupts carry 24 bits; debug events can be fired by the GPU.
    slot(debug).store(1, Ordering::Release);
    sink.shader_message(0xFF00_0000 | debug);
    assert_eq!(wait(&s, &[debug], false, 0).0, Ok(WaitResult::COMPLETE));
    // A waiter sleeping on the event is woken by the interrupt. (The event is manual-reset and
    // still signaled from above: reset it, or the wait would complete without sleeping.)
    ioctls::reset_event(s.sys(), s.kfd, second).unwrap();
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "the sleeping waiter to be woken by the interrupt",
    );
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| wait(&s, &[second], false, 10_000));
        wait_until_asleep(&s, second);
        slot(second).store(7, Ordering::Release);
        sink.end_of_pipe(second);
        assert_eq!(waiter.join().unwrap().0, Ok(WaitResult::COMPLETE));
    });
}

#[test]
fn gpu_resets_set_hw_exception_events() {
    let s = Session::small();
    s.event_page();
    let hw = s
        .create_event(EventType::HW_EXCEPTION, false)
        .unwrap()
        .event_id;
    let memory = s.create_event(EventType::MEMORY, false).unwrap().event_id;
    s.machine
        .inject_gpu_reset(s.gpu_id, ResetCause::Hang)
        .unwrap();
    let mut events = [EventData::new(hw), EventData::new(memory)];
    let (result, args) = wait_raw(&s, &mut events, false, 0);
    assert_eq!((result, args.wait_result), (Ok(()), WaitResult::COMPLETE.0));
    let data = events[0].hw_exception();
    assert_eq!(data.memory_lost, 1);
    assert_eq!(data.reset_cause, exception::GPU_HANG);
    assert_eq!(data.gpu_id, s.gpu_id);
    // A hang does not set MEMORY events; an ECC reset does.
    assert_eq!(wait(&s, &[memory], false, 0).0, Ok(WaitResult::TIMEOUT));
    s.machine
        .inject_gpu_reset(s.gpu_id, ResetCause::Ecc)
        .unwrap();
    let mut events = [EventData::new(memory)];
    wait_raw(&s, &mut events, false, 0).0.unwrap();
    assert_eq!(
        events[0].memory_exception().error_type,
        exception::MEM_ERR_SRAM_ECC
    );
    assert!(s.machine.inject_gpu_reset(1, ResetCause::Hang).is_err());
}

#[test]
fn interrupted_waits_return_eintr_with_the_time_left() {
    let s = Session::small();
    s.event_page();
    let e = s.create_event(EventType::SIGNAL, true).unwrap().event_id;
    s.machine
        .inject()
        .interrupt_waits(1, Duration::from_millis(30));
    let mut events = [EventData::new(e)];
    let start = Instant::now();
    let (result, args) = wait_raw(&s, &mut events, false, 5_000);
    assert_eq!(result, Err(Errno::EINTR));
    assert_eq!(args.wait_result, WaitResult::FAIL.0);
    assert!(start.elapsed() >= Duration::from_millis(30));
    // At least the 30 ms before the signal are gone from the 5 s (no upper bound on the time
    // spent: a loaded machine may take long to deliver it).
    assert!(args.timeout <= 4_970, "{}", args.timeout);
    // Only one wait was to be interrupted; an infinite timeout is never rewritten.
    s.machine
        .inject()
        .interrupt_waits(1, Duration::from_millis(10));
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "the infinite wait to end with the injected EINTR",
    );
    let (result, args) = wait_raw(&s, &mut events, false, KFD_EVENT_TIMEOUT_INFINITE);
    assert_eq!(
        (result, args.timeout),
        (Err(Errno::EINTR), KFD_EVENT_TIMEOUT_INFINITE)
    );
    ioctls::set_event(s.sys(), s.kfd, e).unwrap();
    assert_eq!(wait(&s, &[e], false, 1_000).0, Ok(WaitResult::COMPLETE));
}
