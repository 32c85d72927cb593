//! The skip, wait and watchdog helpers do what they promise.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use test_support::{hardware, wait, watchdog};

#[test]
fn a_skip_fails_only_where_hardware_is_required() {
    // The environment is process-wide: both cases in one test, in a child each so the
    // variable never leaks into another test.
    test_support::fork::assert_child_passes(Duration::from_secs(20), || {
        // SAFETY: the child is single-threaded.
        unsafe { std::env::remove_var(hardware::REQUIRE_HW_ENV) };
        hardware::skip("t", "no GPU");
        // SAFETY: as above.
        unsafe { std::env::set_var(hardware::REQUIRE_HW_ENV, "") };
        hardware::skip("t", "an empty value does not require hardware");
        for value in ["1", "yes", "0"] {
            // SAFETY: as above.
            unsafe { std::env::set_var(hardware::REQUIRE_HW_ENV, value) };
            let skipped = std::panic::catch_unwind(|| hardware::skip("t", "no GPU"));
            if skipped.is_ok() {
                return Err(format!(
                    "{}={value} did not fail the skip",
                    hardware::REQUIRE_HW_ENV
                ));
            }
        }
        Ok(())
    });
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
