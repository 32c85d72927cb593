//! Choosing between the real kernel driver and the built-in simulator.
//!
//! `/dev/kfd` is used when it exists; otherwise the simulator's process-wide default machine is
//! the embedded default, and the program says so once on stderr. `AQUEDUCT_BACKEND=hw` or
//! `=sim` forces one; `AQUEDUCT_SIM_MACHINE` picks the simulated machine. Built without the
//! `sim` feature, choosing the simulator is an error ([`BackendError::SimulatorNotBuilt`]).

use std::path::Path;
use std::sync::Arc;
#[cfg(feature = "sim")]
use std::sync::Once;

use kfd::Sys;

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
    /// The simulator's default machine could not be built.
    #[cfg(feature = "sim")]
    #[error("cannot start the simulator: {0}")]
    Simulator(#[from] amdgpu_sim::SimError),
    /// The simulator was chosen (no `/dev/kfd`, or `AQUEDUCT_BACKEND=sim`), but this build of
    /// aqueduct has none (built without its `sim` feature).
    #[error(
        "no /dev/kfd here (or {BACKEND_ENV}=sim), and this aqueduct was built without the simulator (cargo feature `sim`)"
    )]
    SimulatorNotBuilt,
}

/// Decide from `AQUEDUCT_BACKEND` and the presence of `/dev/kfd`.
pub fn choose() -> Result<BackendChoice, BackendError> {
    choose_from(
        std::env::var(BACKEND_ENV).ok().as_deref(),
        Path::new(kfd::abi::sysfs::KFD_DEVICE_PATH).exists(),
    )
}

/// Whether the simulator stand-in has been announced on stderr in this process.
#[cfg(feature = "sim")]
static SIMULATOR_ANNOUNCED: Once = Once::new();

/// The system interface of the chosen backend: the real kernel ([`kfd::Linux`]), or the
/// simulator's default machine, announced once per process on stderr.
pub fn system() -> Result<Arc<dyn Sys>, BackendError> {
    system_for(choose()?)
}

/// The system interface of `choice`.
fn system_for(choice: BackendChoice) -> Result<Arc<dyn Sys>, BackendError> {
    match choice {
        BackendChoice::Hardware => Ok(Arc::new(kfd::Linux)),
        // `choose` never picks what was not built.
        #[cfg(not(feature = "sim"))]
        BackendChoice::Simulator => Err(BackendError::SimulatorNotBuilt),
        #[cfg(feature = "sim")]
        BackendChoice::Simulator => {
            let machine = amdgpu_sim::default_machine()?;
            SIMULATOR_ANNOUNCED.call_once(|| {
                eprintln!(
                    "aqueduct: using the simulator (no /dev/kfd here, or {BACKEND_ENV}=sim): {}",
                    machine.description()
                );
            });
            Ok(Arc::new(machine))
        }
    }
}

/// The decision itself, for tests. Without the `sim` feature, a decision for the simulator is
/// [`BackendError::SimulatorNotBuilt`].
pub fn choose_from(env: Option<&str>, kfd_exists: bool) -> Result<BackendChoice, BackendError> {
    let choice = decide(env, kfd_exists)?;
    if choice == BackendChoice::Simulator && !cfg!(feature = "sim") {
        return Err(BackendError::SimulatorNotBuilt);
    }
    Ok(choice)
}

fn decide(env: Option<&str>, kfd_exists: bool) -> Result<BackendChoice, BackendError> {
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
    #[cfg(feature = "sim")]
    fn the_same_simulated_machine_serves_every_caller() {
        // Whatever the environment would choose: the simulator's side of `system`.
        let (a, b) = (
            system_for(BackendChoice::Simulator).unwrap(),
            system_for(BackendChoice::Simulator).unwrap(),
        );
        assert!(matches!(a.backend(), kfd::Backend::Simulator(_)));
        assert_eq!(
            a.kernel_id(),
            b.kernel_id(),
            "one default machine per process"
        );
        assert_ne!(a.kernel_id(), kfd::sys::HOST_KERNEL);
    }

    #[test]
    #[cfg(not(feature = "sim"))]
    fn without_the_simulator_only_hardware_is_chosen() {
        assert_eq!(choose_from(None, true).unwrap(), BackendChoice::Hardware);
        assert!(matches!(
            choose_from(None, false),
            Err(BackendError::SimulatorNotBuilt)
        ));
        assert!(matches!(
            choose_from(Some("sim"), true),
            Err(BackendError::SimulatorNotBuilt)
        ));
    }

    #[test]
    #[cfg(feature = "sim")]
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
