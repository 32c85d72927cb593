//! An idle machine uses no CPU: no thread polls (the driver model has none; the default command
//! processor's queue threads park until their doorbell rings; a blocked WAIT_EVENTS sleeps on a
//! condition variable).
//!
//! In a test binary of its own, so that no other test's work is counted.

mod common;

use std::time::Duration;

use amdgpu_sim::MachineConfig;
use common::Session;
use kfd::abi::{EventData, EventType, KFD_EVENT_TIMEOUT_INFINITE, WaitResult};
use kfd::ioctl::calls as ioctls;
use test_support::{cpu_time, watchdog};

#[test]
fn an_idle_machine_with_queues_and_a_blocked_waiter_uses_no_cpu() {
    // The default engines, as Device::open() gets them.
    let s = Session::new(
        MachineConfig::mi210()
            .with_compute_units(8)
            .with_vram(1 << 30),
    );
    s.event_page();
    let buffers = s.queue_buffers(4096);
    for _ in 0..4 {
        s.create_queue(&mut s.queue_args(&buffers)).unwrap();
    }
    s.doorbells();
    let event = s.create_event(EventType::SIGNAL, false).unwrap().event_id;
    let _watchdog = watchdog::arm(
        watchdog::HANG_DEADLINE,
        "the infinite wait to complete once the event is set",
    );
    std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            let mut events = [EventData::new(event)];
            let mut timeout = KFD_EVENT_TIMEOUT_INFINITE;
            ioctls::wait_events(&s.machine, s.kfd, &mut events, false, &mut timeout)
        });
        // Measure once the waiter sleeps (the queues' processors park at creation; a little
        // time for their threads to get there is within the margin below).
        let asleep = test_support::wait::until(Duration::from_secs(30), || {
            s.machine
                .sleeping_event_waiters(std::process::id() as i32, event)
                > 0
        });
        assert!(asleep, "the waiter never slept");
        let before = cpu_time::of_process();
        std::thread::sleep(Duration::from_millis(500));
        let used = cpu_time::of_process().checked_sub(before).unwrap();
        ioctls::set_event(&s.machine, s.kfd, event).unwrap();
        assert_eq!(waiter.join().unwrap().unwrap(), WaitResult::COMPLETE);
        // A spinning thread would use ~500 ms; allow a generous margin for timer noise.
        assert!(
            used < Duration::from_millis(50),
            "idle machine used {used:?} of CPU"
        );
    });
}
