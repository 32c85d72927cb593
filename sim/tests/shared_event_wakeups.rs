//! One auto-reset event shared by two waiting threads: the interleaving that left ROCr 5.2 stuck
//! in `hsa_queue_destroy` under the interposer (issue 27), replayed step by step through raw
//! ioctls, deterministically (each step waits for the state the previous one must reach).
//!
//! The cause is ROCr's, not the simulated kernel's. ROCr 5.2 fires every queue's
//! `queue_inactive_signal` through one auto-reset KFD event (`AqlQueue::queue_event_`, made
//! with `CreateEvent(HSA_EVENTTYPE_SIGNAL, false)`); its async-events thread sleeps on it for
//! the utility queue's signal, and the thread destroying a user queue sleeps on it in
//! `~AqlQueue` (store 0x8000…, `WaitRelaxed(NE 0x8000…)`) for the async thread's handler to
//! answer. When the destroying thread has checked the signal's value and is preempted before
//! its WAIT_EVENTS, the handler's SET_EVENT finds no waiter and leaves the event signaled; the
//! async thread's own next WAIT_EVENTS on the same event consumes that (auto-reset), finds
//! nothing to do and sleeps; then the destroying thread sleeps too, and nothing will ever set
//! the event again. `kfd_events.c` does exactly this (`init_event_waiter`: `activated =
//! signaled; signaled = signaled && !auto_reset`; `set_event`: `signaled = !auto_reset ||
//! !waitqueue_active`): the kernel does not promise a wake-up to a waiter that was not yet on
//! the wait queue when the event was set and consumed. The simulator must not promise more.
//! Event ages (KFD 1.14, used by ROCr from 2023 on: "Enable sleep for all waiters") close the
//! hole for waiters that pass the age they last saw; ROCr 5.2's thunk passes none (age 0).
//!
//! The trace that showed it: `../shared/evidence/rocr-queue-destroy-stolen-wakeup.txt`.

mod common;

use std::time::Duration;

use common::{Session, ioctl};
use kfd::Errno;
use kfd::abi::{EventData, EventType, KFD_EVENT_TIMEOUT_INFINITE, WaitEventsArgs, WaitResult};
use kfd::ioctl::calls as ioctls;
use kfd::ioctl::requests as req;
use test_support::wait;

fn pid() -> i32 {
    std::process::id() as i32
}

/// WAIT_EVENTS on `events` (ids, each with the age it last saw; 0 = no age), returning the
/// result and the events as written back.
fn wait_on(
    s: &Session,
    events: &[(u32, u64)],
    all: bool,
    timeout: u32,
) -> (Result<WaitResult, Errno>, Vec<EventData>) {
    let mut data: Vec<EventData> = events
        .iter()
        .map(|&(id, age)| {
            let mut e = EventData::new(id);
            e.set_last_event_age(age);
            e
        })
        .collect();
    let mut args = WaitEventsArgs {
        events_ptr: data.as_mut_ptr() as u64,
        num_events: data.len() as u32,
        wait_for_all: u32::from(all),
        timeout,
        wait_result: 77,
    };
    let result =
        ioctl::<req::WaitEvents>(s.sys(), s.kfd, &mut args).map(|()| WaitResult(args.wait_result));
    (result, data)
}

/// Block until a WAIT_EVENTS caller sleeps on event `id`.
fn until_asleep(s: &Session, id: u32, who: &str) {
    wait::assert_until(Duration::from_secs(30), who, || {
        s.machine.sleeping_event_waiters(pid(), id) > 0
    });
}

/// The two events of ROCr's async-events thread: its wake signal's and the queues' shared one.
struct Rocr {
    wake: u32,
    queue_event: u32,
}

fn rocr(s: &Session) -> Rocr {
    s.event_page();
    Rocr {
        wake: s.create_event(EventType::SIGNAL, true).unwrap().event_id,
        queue_event: s.create_event(EventType::SIGNAL, true).unwrap().event_id,
    }
}

/// Steps 1–5 of the interleaving, with the destroying thread's age (`main_age`) of what it
/// last saw; returns what the destroying thread's WAIT_EVENTS (bounded here at 200 ms where
/// ROCr waits 0xFFFFFFFE ms) gets.
fn replay(s: &Session, r: &Rocr, async_age: u64, main_age: u64) -> Result<WaitResult, Errno> {
    let async_events = [(r.wake, async_age), (r.queue_event, async_age)];
    std::thread::scope(|scope| {
        // 1. The async-events thread sleeps on its events (the utility queue's signal among
        //    them, through the shared event).
        let sleeping = scope.spawn(|| wait_on(s, &async_events, false, KFD_EVENT_TIMEOUT_INFINITE));
        until_asleep(s, r.queue_event, "the async-events thread asleep");
        // 2. hsa_queue_create registers the new queue's handler: SET_EVENT on the wake event.
        //    hsa_queue_destroy then stores 0x8000… to the queue's inactive signal (no SET: the
        //    async thread does not wait on that signal yet), checks it, decides to sleep, and is
        //    preempted before its WAIT_EVENTS.
        ioctls::set_event(s.sys(), s.kfd, r.wake).unwrap();
        assert_eq!(sleeping.join().unwrap().0, Ok(WaitResult::COMPLETE));
        // 3. The async thread runs the handler: DONE, store -1, SET_EVENT on the shared event
        //    for the destroying thread, which is not on the wait queue yet.
        assert_eq!(s.machine.sleeping_event_waiters(pid(), r.queue_event), 0);
        ioctls::set_event(s.sys(), s.kfd, r.queue_event).unwrap();
        // 4. Its next wait consumes the set (auto-reset), finds nothing to handle, and it
        //    sleeps again.
        assert_eq!(
            wait_on(s, &async_events, false, 0).0,
            Ok(WaitResult::COMPLETE),
            "the async thread's wait consumes the set meant for the destroying thread"
        );
        let asleep_again =
            scope.spawn(|| wait_on(s, &async_events, false, KFD_EVENT_TIMEOUT_INFINITE));
        until_asleep(s, r.queue_event, "the async-events thread asleep again");
        // 5. The destroying thread's WAIT_EVENTS (hsaKmtWaitOnEvent: wait for all, one event).
        let main = wait_on(s, &[(r.queue_event, main_age)], true, 200).0;
        // Let the async thread go.
        ioctls::set_event(s.sys(), s.kfd, r.wake).unwrap();
        assert_eq!(asleep_again.join().unwrap().0, Ok(WaitResult::COMPLETE));
        main
    })
}

/// Without ages (ROCr 5.2's thunk), the set was consumed by the other waiter: the destroying
/// thread sleeps until its timeout, which in ROCr is 49 days. This is the kernel's behaviour,
/// kept on purpose.
#[test]
fn without_event_ages_the_other_waiter_consumes_the_wake_up() {
    let s = Session::small();
    let r = rocr(&s);
    assert_eq!(replay(&s, &r, 0, 0), Ok(WaitResult::TIMEOUT));
}

/// With ages (KFD 1.14 and later), the destroying thread passes the age it saw before it was
/// preempted (1: the event was never set while it looked); the set moved the age on, so its
/// wait completes at once although the other waiter consumed the signaled state.
#[test]
fn with_event_ages_the_destroying_thread_is_not_stranded() {
    let s = Session::small();
    let r = rocr(&s);
    assert_eq!(replay(&s, &r, 0, 1), Ok(WaitResult::COMPLETE));
}
