//! The fork helper reports every way a child can fail, and only a real pass as a pass.

use std::time::Duration;

use test_support::fork::{ChildFailure, assert_child_passes, run_in_child};

const TIMEOUT: Duration = Duration::from_secs(20);

#[test]
fn a_child_that_passes_is_ok() {
    assert_eq!(run_in_child(TIMEOUT, || Ok(())), Ok(()));
    assert_child_passes(TIMEOUT, || Ok(()));
}

#[test]
fn a_child_that_panics_is_reported_as_panicked_with_its_message() {
    let outcome = run_in_child(TIMEOUT, || {
        assert_eq!(1 + 1, 3, "arithmetic on purpose");
        Ok(())
    });
    match outcome {
        Err(ChildFailure::Panicked(message)) => {
            assert!(message.contains("arithmetic on purpose"), "{message}");
            assert!(message.contains("tests/fork.rs"), "no location: {message}");
        }
        other => panic!("expected Panicked, got {other:?}"),
    }
}

#[test]
#[should_panic(expected = "the forked child panicked: ")]
fn assert_child_passes_fails_the_test_when_the_child_panics() {
    assert_child_passes(TIMEOUT, || panic!("on purpose"));
}

#[test]
fn a_child_whose_check_fails_is_reported_as_failed() {
    assert_eq!(
        run_in_child(TIMEOUT, || Err("errno EINVAL, expected EBADF".to_owned())),
        Err(ChildFailure::Failed(
            "errno EINVAL, expected EBADF".to_owned()
        ))
    );
}

#[test]
fn a_child_that_hangs_is_reported_as_timed_out() {
    let timeout = Duration::from_millis(200);
    let outcome = run_in_child(timeout, || {
        // Sleep far past the watchdog (sleep is interrupted by nothing but the alarm).
        std::thread::sleep(Duration::from_secs(60));
        Ok(())
    });
    assert_eq!(outcome, Err(ChildFailure::TimedOut(timeout)));
}

#[test]
fn a_child_that_blocks_the_alarm_is_still_timed_out_by_the_parent() {
    let timeout = Duration::from_millis(100);
    let started = std::time::Instant::now();
    let outcome = run_in_child(timeout, || {
        // SAFETY: blocking one signal for this thread only.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&raw mut set);
            libc::sigaddset(&raw mut set, libc::SIGALRM);
            libc::pthread_sigmask(libc::SIG_BLOCK, &raw const set, std::ptr::null_mut());
        }
        std::thread::sleep(Duration::from_secs(60));
        Ok(())
    });
    assert_eq!(outcome, Err(ChildFailure::TimedOut(timeout)));
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_child_killed_by_a_signal_is_reported_as_signalled() {
    let outcome = run_in_child(TIMEOUT, || {
        // SAFETY: raise has no preconditions; SIGSEGV's default action ends the child.
        unsafe {
            libc::signal(libc::SIGSEGV, libc::SIG_DFL);
            libc::raise(libc::SIGSEGV);
        }
        Ok(())
    });
    assert_eq!(outcome, Err(ChildFailure::Signalled(libc::SIGSEGV)));
    assert!(outcome.unwrap_err().to_string().contains("SIGSEGV"));
}

#[test]
fn a_child_that_exits_on_its_own_is_not_a_pass() {
    // The hole this helper closes: a child that leaves with status 0 without the helper's
    // report (as a panicking child under libtest does) must not count as a pass.
    let outcome = run_in_child(TIMEOUT, || {
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(0) }
    });
    assert_eq!(outcome, Err(ChildFailure::ExitCode(0)));
    let outcome = run_in_child(TIMEOUT, || {
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(3) }
    });
    assert_eq!(outcome, Err(ChildFailure::ExitCode(3)));
}

#[test]
fn a_long_message_is_cut_not_lost() {
    let outcome = run_in_child(TIMEOUT, || Err("é".repeat(100_000)));
    match outcome {
        Err(ChildFailure::Failed(message)) => {
            assert!(message.len() > 1000 && message.len() <= 4096);
            assert!(message.chars().all(|c| c == 'é'));
        }
        other => panic!("expected Failed, got {other:?}"),
    }
}
