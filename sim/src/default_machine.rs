//! The process-wide simulated machine that aqueduct's `Device::open()` uses when no GPU exists.
//!
//! It is created on first use and lives until the process ends, or until the library that
//! holds it is unloaded ([`release_default_machine`]). `AQUEDUCT_SIM_MACHINE` chooses its
//! shape: `mi210` (the default), `mi300x`, `mi210-hive` (four MI210 in an XGMI
//! hive), `mi300x-platform` (eight MI300X), `mi210-small-bar` (one MI210 whose VRAM
//! the CPU sees only 256 MiB of), `rx7900xtx` (one Radeon RX 7900 XTX, gfx1100, with
//! resizable BAR) or `rx7900xtx-small-bar` (the same card without it).

use std::sync::{Mutex, PoisonError};

use crate::config::MachineConfig;
use crate::error::SimError;
use crate::machine::Machine;

/// Environment variable choosing the default machine's shape.
pub const SIM_MACHINE_ENV: &str = "AQUEDUCT_SIM_MACHINE";

/// The machine, or why it could not be built; empty until the first call (a `const`
/// initialiser: a fresh copy of this library starts empty too) and after a release.
static DEFAULT: Mutex<Option<Result<Machine, String>>> = Mutex::new(None);

/// The configuration named by `name` (see the module documentation).
pub fn preset(name: &str) -> Result<MachineConfig, SimError> {
    match name.trim() {
        "" | "mi210" => Ok(MachineConfig::mi210()),
        "mi300x" => Ok(MachineConfig::mi300x()),
        "mi210-hive" => Ok(MachineConfig::mi210_hive(4)),
        "mi300x-platform" => Ok(MachineConfig::mi300x_platform()),
        "mi210-small-bar" => Ok(MachineConfig::mi210_small_bar()),
        "rx7900xtx" => Ok(MachineConfig::rx7900xtx()),
        "rx7900xtx-small-bar" => Ok(MachineConfig::rx7900xtx_small_bar()),
        other => Err(SimError::Config(format!(
            "{SIM_MACHINE_ENV}={other:?}: expected mi210, mi300x, mi210-hive, mi300x-platform, mi210-small-bar, rx7900xtx or rx7900xtx-small-bar"
        ))),
    }
}

/// The process-wide machine, created on first call from `AQUEDUCT_SIM_MACHINE`. Every call
/// returns a handle to the same machine.
pub fn default_machine() -> Result<Machine, SimError> {
    DEFAULT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(|| {
            let name = std::env::var(SIM_MACHINE_ENV).unwrap_or_default();
            preset(&name)
                .and_then(Machine::new)
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(SimError::Config)
}

/// Drop this library's reference to the process-wide machine; the next [`default_machine`]
/// builds a new one. Returns whether there was one.
///
/// For a library being unloaded (`dlclose`) while the program goes on: the machine's memory
/// file and mappings would otherwise outlive the only code that can reach them. The machine
/// itself goes (its processes exit, its files close, its memory is unmapped) when the last
/// handle to it does: whoever still holds one keeps a working machine.
pub fn release_default_machine() -> bool {
    let machine = DEFAULT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    // Dropped outside the lock: the last handle's drop ends the machine's processes.
    machine.is_some()
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
        assert_eq!(
            preset("rx7900xtx").unwrap().gpus[0].target,
            crate::gpu::target::GfxTarget::Gfx1100
        );
        assert!(!preset("rx7900xtx-small-bar").unwrap().gpus[0].large_bar);
        assert!(matches!(preset("h100"), Err(SimError::Config(_))));
        let a = default_machine().unwrap();
        let b = default_machine().unwrap();
        assert_eq!(a.kernel_id(), b.kernel_id());
        assert_ne!(a.kernel_id(), kfd::sys::HOST_KERNEL);
    }
}
