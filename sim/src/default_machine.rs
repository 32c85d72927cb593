//! The process-wide simulated machine that aqueduct's `Device::open()` uses when no GPU exists.
//!
//! It is created on first use and lives for the rest of the process. `AQUEDUCT_SIM_MACHINE`
//! chooses its shape: `mi210` (the default), `mi300x`, `mi210-hive` (four MI210 in an XGMI
//! hive) or `mi300x-platform` (eight MI300X).

use std::sync::OnceLock;

use crate::config::MachineConfig;
use crate::error::SimError;
use crate::machine::Machine;

/// Environment variable choosing the default machine's shape.
pub const SIM_MACHINE_ENV: &str = "AQUEDUCT_SIM_MACHINE";

static DEFAULT: OnceLock<Result<Machine, String>> = OnceLock::new();

/// The configuration named by `name` (see the module documentation).
pub fn preset(name: &str) -> Result<MachineConfig, SimError> {
    match name.trim() {
        "" | "mi210" => Ok(MachineConfig::mi210()),
        "mi300x" => Ok(MachineConfig::mi300x()),
        "mi210-hive" => Ok(MachineConfig::mi210_hive(4)),
        "mi300x-platform" => Ok(MachineConfig::mi300x_platform()),
        other => Err(SimError::Config(format!(
            "{SIM_MACHINE_ENV}={other:?}: expected mi210, mi300x, mi210-hive or mi300x-platform"
        ))),
    }
}

/// The process-wide machine, created on first call from `AQUEDUCT_SIM_MACHINE`. Every call
/// returns a handle to the same machine.
pub fn default_machine() -> Result<Machine, SimError> {
    DEFAULT
        .get_or_init(|| {
            let name = std::env::var(SIM_MACHINE_ENV).unwrap_or_default();
            preset(&name)
                .and_then(Machine::new)
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(SimError::Config)
}

#[cfg(test)]
mod tests {
    use kfd::sys::Sys;

    use super::*;

    #[test]
    fn presets_by_name_and_one_default_machine() {
        assert_eq!(preset("").unwrap().gpus.len(), 1);
        assert_eq!(preset("mi300x").unwrap().gpus[0].xccs, 8);
        assert_eq!(preset("mi210-hive").unwrap().gpus.len(), 4);
        assert_eq!(preset("mi300x-platform").unwrap().gpus.len(), 8);
        assert!(matches!(preset("h100"), Err(SimError::Config(_))));
        let a = default_machine().unwrap();
        let b = default_machine().unwrap();
        assert_eq!(a.kernel_id(), b.kernel_id());
        assert_ne!(a.kernel_id(), kfd::sys::HOST_KERNEL);
    }
}
