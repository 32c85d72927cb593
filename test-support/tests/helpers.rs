//! The skip, wait, process, task and watchdog helpers do what they promise.

use std::ffi::OsStr;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use test_support::fork::{ChildFailure, run_in_child};
use test_support::{hardware, process, task, wait, watchdog};

#[test]
fn a_skip_fails_only_where_hardware_is_required() {
    // The decision is tested on values, not by changing this process's environment: another
    // test thread may hold the environment's lock (a `Command` spawning), and a forked child
    // that set a variable could wait on that lock for ever (CI saw exactly that).
    assert!(!hardware::required_by(None));
    assert!(!hardware::required_by(Some(OsStr::new(""))));
    hardware::skip_unless_required(false, "t", "no GPU");
    for value in ["1", "yes", "0"] {
        assert!(
            hardware::required_by(Some(OsStr::new(value))),
            "{}={value} does not require hardware",
            hardware::REQUIRE_HW_ENV
        );
    }
    let refused = std::panic::catch_unwind(|| hardware::skip_unless_required(true, "t", "no GPU"));
    let message = refused.expect_err("a required skip did not fail");
    let message = message
        .downcast_ref::<String>()
        .expect("the skip's panic carries its message");
    assert!(
        message.contains(hardware::REQUIRE_HW_ENV) && message.contains("no GPU"),
        "{message}"
    );
    // And `required` reads the variable this test process was started with.
    assert_eq!(
        hardware::required(),
        hardware::required_by(std::env::var_os(hardware::REQUIRE_HW_ENV).as_deref())
    );
}

#[test]
fn until_sees_a_state_reached_later_and_gives_up_at_the_deadline() {
    let count = Arc::new(AtomicU32::new(0));
    let setter = {
        let count = count.clone();
        std::thread::spawn(move || count.store(7, Ordering::Release))
    };
    assert!(wait::until(Duration::from_secs(30), || count
        .load(Ordering::Acquire)
        == 7));
    setter.join().unwrap();

    let started = Instant::now();
    let mut polls = 0;
    assert!(!wait::until(Duration::from_millis(50), || {
        polls += 1;
        false
    }));
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert!(polls >= 2, "polled {polls} times");
}

#[test]
fn the_watchdog_passes_results_and_panics_through() {
    assert_eq!(watchdog::within(Duration::from_secs(30), || 42), 42);
    let caught = std::panic::catch_unwind(|| {
        watchdog::within(Duration::from_secs(30), || panic!("inner failure"));
    });
    let payload = caught.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"inner failure"));
}

#[test]
#[should_panic(expected = "did not finish within")]
fn the_watchdog_fails_a_hanging_test() {
    watchdog::within(Duration::from_millis(50), || {
        std::thread::park();
    });
}

#[test]
fn a_child_within_its_deadline_gives_its_output() {
    let out = process::run_with_deadline(
        Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
        Duration::from_secs(60),
        "a shell that exits 3",
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"out\n");
    assert_eq!(out.stderr, b"err\n");
}

#[test]
fn a_child_past_its_deadline_is_killed_with_its_group_and_named() {
    let marker = std::env::temp_dir().join(format!("deadline-grandchild-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let started = Instant::now();
    // The shell starts a grandchild that would leave a file after 1 s, says so, and hangs.
    let script = format!(
        "(sleep 1; touch {}) & echo started; echo waiting >&2; sleep 60",
        marker.display()
    );
    let failure = std::panic::catch_unwind(|| {
        process::run_with_deadline(
            Command::new("sh").args(["-c", &script]),
            Duration::from_millis(300),
            "a shell that never ends",
        )
    })
    .unwrap_err();
    let message = failure
        .downcast_ref::<String>()
        .expect("a formatted panic message");
    assert!(
        message.starts_with("a shell that never ends: not within 300ms"),
        "{message}"
    );
    assert!(
        message.contains("started") && message.contains("waiting"),
        "{message}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the time-out took {:?}",
        started.elapsed()
    );
    // The grandchild died with its group: no file, well after it would have written it.
    assert!(
        !wait::until(Duration::from_secs(3), || marker.exists()),
        "the grandchild outlived the kill"
    );
}

#[test]
fn an_armed_watchdog_ends_the_process_by_name_and_a_disarmed_one_does_not() {
    let fired = run_in_child(Duration::from_secs(30), || {
        let _watchdog = watchdog::arm(Duration::from_millis(50), "a wait that never ends");
        loop {
            std::thread::park();
        }
    });
    assert_eq!(fired, Err(ChildFailure::ExitCode(watchdog::FIRED_STATUS)));

    let disarmed = run_in_child(Duration::from_secs(30), || {
        drop(watchdog::arm(
            Duration::from_millis(50),
            "a wait that ends in time",
        ));
        // Well past the deadline it no longer has.
        std::thread::sleep(Duration::from_millis(300));
        Ok(())
    });
    assert_eq!(disarmed, Ok(()));
}

#[test]
fn a_thread_blocked_in_the_kernel_is_seen_asleep_and_a_running_one_is_not() {
    assert_eq!(
        task::state(task::id()),
        Some('R'),
        "the calling thread runs"
    );
    let tid = AtomicI32::new(0);
    let (wake, woken) = std::sync::mpsc::channel::<()>();
    let _watchdog = watchdog::arm(watchdog::DEFAULT_DEADLINE, "the sleeper thread to end");
    std::thread::scope(|scope| {
        let tid = &tid;
        scope.spawn(move || {
            tid.store(task::id(), Ordering::Release);
            woken.recv().unwrap();
        });
        wait::assert_until(Duration::from_secs(30), "the sleeper's id", || {
            tid.load(Ordering::Acquire) != 0
        });
        task::assert_asleep_within(
            tid.load(Ordering::Acquire),
            Duration::from_secs(30),
            "a channel receive",
        );
        wake.send(()).unwrap();
    });
    // Joined; the kernel lets its entry go a moment later.
    wait::assert_until(Duration::from_secs(30), "the joined thread gone", || {
        task::state(tid.load(Ordering::Acquire)).is_none()
    });
}
