//! Choosing between the real kernel driver and the built-in simulator.
//!
//! `/dev/kfd` is used when it exists; otherwise the simulator is the embedded default.
//! `AQUEDUCT_BACKEND=hw` or `=sim` forces one.

use std::path::Path;

/// Environment variable that forces a backend.
pub const BACKEND_ENV: &str = "AQUEDUCT_BACKEND";

/// Which side of the `Sys` seam a program will talk to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendChoice {
    /// The real amdkfd driver at `/dev/kfd`.
    Hardware,
    /// The built-in simulator.
    Simulator,
}

/// Why no backend could be chosen.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The environment variable holds something else.
    #[error("{BACKEND_ENV}={0:?}: expected \"hw\" or \"sim\"")]
    BadEnvironment(String),
}

/// Decide from `AQUEDUCT_BACKEND` and the presence of `/dev/kfd`.
pub fn choose() -> Result<BackendChoice, BackendError> {
    choose_from(
        std::env::var(BACKEND_ENV).ok().as_deref(),
        Path::new(kfd::abi::sysfs::KFD_DEVICE_PATH).exists(),
    )
}

/// The decision itself, for tests.
pub fn choose_from(env: Option<&str>, kfd_exists: bool) -> Result<BackendChoice, BackendError> {
    match env.map(str::trim) {
        None | Some("") => Ok(if kfd_exists {
            BackendChoice::Hardware
        } else {
            BackendChoice::Simulator
        }),
        Some("hw") => Ok(BackendChoice::Hardware),
        Some("sim") => Ok(BackendChoice::Simulator),
        Some(other) => Err(BackendError::BadEnvironment(other.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_overrides_detection() {
        assert_eq!(choose_from(None, true).unwrap(), BackendChoice::Hardware);
        assert_eq!(choose_from(None, false).unwrap(), BackendChoice::Simulator);
        assert_eq!(
            choose_from(Some("sim"), true).unwrap(),
            BackendChoice::Simulator
        );
        assert_eq!(
            choose_from(Some("hw"), false).unwrap(),
            BackendChoice::Hardware
        );
        assert!(
            matches!(choose_from(Some("gpu"), true), Err(BackendError::BadEnvironment(v)) if v == "gpu")
        );
    }
}
