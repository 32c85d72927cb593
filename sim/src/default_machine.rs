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

/// The process-wide machine, created on first call from `AQUEDUCT_SIM_MACHINE`.
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
