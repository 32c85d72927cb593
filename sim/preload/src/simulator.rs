//! The simulated machine this process sees, built on first use of a path it serves.
//!
//! The environment picks its shape ([`config`]). One model of the kernel driver, command
//! processor and shader core, two ways in: this machine is aqueduct's simulator.

use std::io::Write as _;
use std::sync::OnceLock;

use amdgpu_sim::Machine;
use kfd::Errno;

use crate::config;
use crate::doorbells::DoorbellUnit;
use crate::error::PreloadError;
use crate::fds::FdTable;
use crate::guard;
use crate::mirror::Mirror;

/// Everything the interposer serves.
#[derive(Debug)]
pub(crate) struct Simulator {
    pub machine: Machine,
    pub mirror: Mirror,
    pub fds: FdTable,
    pub doorbells: DoorbellUnit,
}

static SIMULATOR: OnceLock<Option<Simulator>> = OnceLock::new();

/// The simulator if it has been built (the fast path of calls on fds and addresses: none of
/// them can be simulated before it exists).
pub(crate) fn built() -> Option<&'static Simulator> {
    SIMULATOR.get().and_then(Option::as_ref)
}

/// The simulator, built now if needed. `Err(ENOENT)` if it cannot be built (said once on
/// stderr): then the program sees a machine without the GPU.
pub(crate) fn get() -> Result<&'static Simulator, Errno> {
    SIMULATOR
        .get_or_init(|| {
            let _inside = guard::enter();
            match build() {
                Ok(simulator) => Some(simulator),
                Err(message) => {
                    let _ = std::io::stderr()
                        .write_all(format!("amdgpu-sim-preload: {message}\n").as_bytes());
                    None
                }
            }
        })
        .as_ref()
        .ok_or(Errno::ENOENT)
}

fn build() -> Result<Simulator, PreloadError> {
    let machine = Machine::new(config::from_environment()?)?;
    let mirror = Mirror::build(&machine)?;
    // SAFETY: `remove_mirror` is an `extern "C"` function without arguments; atexit has no
    // other precondition. If registration fails the directory is merely left behind.
    unsafe {
        libc::atexit(remove_mirror);
    }
    Ok(Simulator {
        machine,
        mirror,
        fds: FdTable::default(),
        doorbells: DoorbellUnit::default(),
    })
}

extern "C" fn remove_mirror() {
    if let Some(simulator) = built() {
        let _inside = guard::enter();
        simulator.mirror.remove();
    }
}
