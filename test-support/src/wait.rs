//! Waiting for a state with a deadline: the replacement for "sleep, then look once".

use std::time::{Duration, Instant};

/// The first pause between two polls; it doubles up to [`LONGEST_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_micros(50);
/// The longest pause between two polls.
const LONGEST_PAUSE: Duration = Duration::from_millis(10);

/// Poll `condition` (with backoff, short sleeps allowed *inside* a poll loop) until true or
/// `timeout`; returns whether it became true. Tests use it instead of bare sleeps.
///
/// The condition is always evaluated at least once, and once more at or after the deadline,
/// so a state reached during the last pause is still seen.
pub fn until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    let mut pause = FIRST_PAUSE;
    loop {
        if condition() {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

/// [`until`], panicking with `what` (the state waited for) if it does not come in time.
#[track_caller]
pub fn assert_until(timeout: Duration, what: &str, condition: impl FnMut() -> bool) {
    assert!(until(timeout, condition), "not within {timeout:?}: {what}");
}
