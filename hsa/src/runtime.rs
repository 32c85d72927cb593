//! The runtime's life: `hsa_init` and `hsa_shut_down`, reference counted. The first init opens
//! aqueduct's device and reads the machine; the last shut down tears everything down (queues,
//! signals, memory, executables: the safe API's `Device::shutdown`). Any other call while the
//! count is zero finds no runtime and returns `HSA_STATUS_ERROR_NOT_INITIALIZED`.

use std::sync::{Arc, Mutex, PoisonError};

use aqueduct::Device;

use crate::error::{Error, Result, entry};
use crate::model::Machine;
use crate::objects::Objects;
use crate::status::Status;

/// A live runtime: the device and what it shows.
#[derive(Debug)]
pub struct Runtime {
    /// aqueduct's device: the one driver underneath.
    pub device: Device,
    /// Agents, pools and ISAs.
    pub machine: Machine,
    /// What the program created through the API.
    pub objects: Objects,
}

struct State {
    count: u32,
    runtime: Option<Arc<Runtime>>,
}

static STATE: Mutex<State> = Mutex::new(State {
    count: 0,
    runtime: None,
});

/// The live runtime, or `HSA_STATUS_ERROR_NOT_INITIALIZED`.
pub fn runtime() -> Result<Arc<Runtime>> {
    STATE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .runtime
        .clone()
        .ok_or_else(|| Error::new(Status::NOT_INITIALIZED, "the runtime is not initialised"))
}

/// The number of `hsa_init`s not yet matched by `hsa_shut_down`.
pub fn reference_count() -> u32 {
    STATE.lock().unwrap_or_else(PoisonError::into_inner).count
}

/// `hsa_init`: open the runtime, or count one more user of it.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_init() -> Status {
    entry("hsa_init", || {
        let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
        if state.count == u32::MAX {
            return Err(Error::new(
                Status::REFCOUNT_OVERFLOW,
                "hsa_init called 2^32 - 1 times",
            ));
        }
        if state.runtime.is_none() {
            let device = Device::open()?;
            let machine = Machine::read(&device)?;
            tracing::debug!(agents = machine.agents.len(), "HSA runtime opened");
            state.runtime = Some(Arc::new(Runtime {
                device,
                machine,
                objects: Objects::default(),
            }));
        }
        state.count += 1;
        Ok(Status::SUCCESS)
    })
}

/// `hsa_shut_down`: count one user less; the last one closes the runtime.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_shut_down() -> Status {
    entry("hsa_shut_down", || {
        // The teardown happens under the lock: an `hsa_init` racing with the last shut down
        // opens a fresh device only after the old one is gone.
        let threads = {
            let mut state = STATE.lock().unwrap_or_else(PoisonError::into_inner);
            if state.count == 0 {
                return Err(Error::new(
                    Status::NOT_INITIALIZED,
                    "hsa_shut_down without hsa_init",
                ));
            }
            state.count -= 1;
            let last = state.count == 0;
            match state.runtime.take_if(|_| last) {
                Some(runtime) => {
                    let threads = runtime.objects.close();
                    runtime.device.shutdown()?;
                    threads
                }
                None => Vec::new(),
            }
        };
        // The runtime's threads may be inside a program's callback that calls the API (and so
        // takes the lock): they are joined after it is released. None outlives this call.
        for thread in threads {
            if !thread.join() {
                tracing::warn!("a runtime thread panicked");
            }
        }
        Ok(Status::SUCCESS)
    })
}
