//! Hardware-gated tests: a skip is said out loud, and can be made a failure.
//!
//! Where there is no GPU a hardware test has nothing to run and passes after saying so. In a
//! run that is meant to exercise hardware (CI under the interposer, a machine with a GPU)
//! [`REQUIRE_HW_ENV`] set to any non-empty value makes every such skip fail the test instead.

use std::ffi::OsStr;
use std::io::Write;

/// Env var: any non-empty value turns every hardware skip into a failure.
pub const REQUIRE_HW_ENV: &str = "AQUEDUCT_REQUIRE_HW";

/// Whether [`REQUIRE_HW_ENV`] is set to a non-empty value.
pub fn required() -> bool {
    required_by(std::env::var_os(REQUIRE_HW_ENV).as_deref())
}

/// Whether a value of [`REQUIRE_HW_ENV`] (`None` where it is unset) requires hardware: any
/// non-empty value does.
pub fn required_by(value: Option<&OsStr>) -> bool {
    value.is_some_and(|value| !value.is_empty())
}

/// Report a skipped hardware test on stderr ("skipped: {test}: {reason}"), or panic if
/// AQUEDUCT_REQUIRE_HW is set non-empty.
#[track_caller]
pub fn skip(test: &str, reason: &str) {
    skip_unless_required(required(), test, reason);
}

/// [`skip`] with the requirement given instead of read from the environment: panics if
/// `required`, else reports the skip on stderr.
#[track_caller]
pub fn skip_unless_required(required: bool, test: &str, reason: &str) {
    assert!(
        !required,
        "{test}: cannot skip ({reason}): {REQUIRE_HW_ENV} is set"
    );
    // Straight to the stderr file: libtest captures eprint! of passing tests, which would
    // hide the skip.
    let _ = std::io::stderr().write_all(format!("skipped: {test}: {reason}\n").as_bytes());
}
