//! System events: GPU memory faults (and, on the same thread, the CP's requests for scratch:
//! `scratch_requests`), handed to the handlers the program registered with
//! `hsa_amd_register_system_event_handler` (with the agent, the address and the reason) and to
//! the error callbacks of the queues on that GPU. A monitor thread watches the device's fault
//! stream from the first registration or queue on; the last `hsa_shut_down` stops and joins
//! it.
//!
//! As ROCr: with no handler registered, a memory fault is reported on stderr and the process
//! aborts; with one, the process goes on (the faulting GPU's queues stay stopped, as the kernel
//! keeps them).

use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;
use unload_safe_thread::UnloadSafeThread;

use aqueduct::{Device, MemoryFault};

use crate::model::{Machine, handle_of};
use crate::objects::queue::HsaQueue;
use crate::status::Status;
use crate::table::Table;

/// `hsa_amd_system_event_callback_t`.
pub type EventCallback = Option<unsafe extern "C" fn(*const Event, *mut c_void) -> Status>;

/// `hsa_amd_event_t` holding `hsa_amd_gpu_memory_fault_info_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// `HSA_AMD_GPU_MEMORY_FAULT_EVENT` (0).
    pub event_type: u32,
    /// The agent (`memory_fault.agent`).
    pub agent: u64,
    /// The faulting address.
    pub virtual_address: u64,
    /// `HSA_AMD_MEMORY_FAULT_*` bits.
    pub fault_reason_mask: u32,
}

/// How often the monitor looks for a new fault. Between looks it sleeps on [`Stop`], so that
/// `hsa_shut_down` wakes it at once: joining a monitor that slept out its poll made every shut
/// down after a queue wait up to this long (`aqueduct bench --rocr --rocr-library`).
const MONITOR_POLL: Duration = Duration::from_millis(10);

/// The monitor's stop request, and the condition variable that wakes it for one.
#[derive(Debug, Default)]
struct Stop {
    stopped: Mutex<bool>,
    wake: Condvar,
}

impl Stop {
    /// Ask the monitor to stop, waking it.
    fn request(&self) {
        *self.stopped.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.wake.notify_all();
    }

    /// Whether a stop was asked.
    fn requested(&self) -> bool {
        *self.stopped.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sleep for up to `poll`; whether a stop was asked.
    fn wait(&self, poll: Duration) -> bool {
        let stopped = self.stopped.lock().unwrap_or_else(PoisonError::into_inner);
        let (stopped, _) = self
            .wake
            .wait_timeout_while(stopped, poll, |stopped| !*stopped)
            .unwrap_or_else(PoisonError::into_inner);
        *stopped
    }
}

/// The registered handlers and their data (addresses).
pub type Handlers = Mutex<
    Vec<(
        unsafe extern "C" fn(*const Event, *mut c_void) -> Status,
        usize,
    )>,
>;

/// Handlers and the monitor thread of a runtime.
#[derive(Debug, Default)]
pub struct SystemEvents {
    /// Registered handlers and their data (addresses), shared with the monitor.
    pub handlers: Arc<Handlers>,
    monitor: Mutex<Option<(UnloadSafeThread, Arc<Stop>)>>,
}

/// A queue's error callback: (callback, data, hsa_queue_t address, GPU).
pub type QueueCallback = (
    unsafe extern "C" fn(Status, *mut c_void, *mut c_void),
    usize,
    u64,
    u32,
);

impl SystemEvents {
    /// Start the monitor if it is not running: it watches `device`'s faults and the queues of
    /// `queues` (the runtime's table).
    pub fn start(&self, device: &Device, machine: &Machine, queues: &Arc<Table<HsaQueue>>) {
        let mut monitor = self.monitor.lock().unwrap_or_else(PoisonError::into_inner);
        if monitor.is_some() {
            return;
        }
        let stop = Arc::new(Stop::default());
        let (device, machine, flag) = (device.clone(), machine.clone(), Arc::clone(&stop));
        let (queues, handlers) = (Arc::clone(queues), Arc::clone(&self.handlers));
        // A pthread, not std's spawn: std leaves a thread-local destructor on the calling
        // (program) thread, which keeps this library mapped after dlclose.
        let spawned = UnloadSafeThread::spawn("hsa-events", move || {
            watch(&device, &machine, &queues, &handlers, &flag);
        });
        match spawned {
            Ok(thread) => *monitor = Some((thread, stop)),
            Err(error) => tracing::warn!(%error, "cannot start the memory-fault monitor"),
        }
    }

    /// Ask the monitor to stop; the returned thread is to be joined outside the runtime's lock.
    pub fn stop(&self) -> Option<UnloadSafeThread> {
        let (thread, stop) = self
            .monitor
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()?;
        stop.request();
        Some(thread)
    }
}

/// The monitor: deliver each new fault, serve the CP's scratch requests (`scratch_requests`)
/// and hand each queue's error to its callback (`queue_errors`), until stopped or the device
/// closes. Each look takes no time (a zero timeout); the sleep between looks is
/// [`Stop::wait`], which a stop ends. Once a stop is asked (the last `hsa_shut_down`, which
/// empties `queues` next) nothing more is delivered.
fn watch(
    device: &Device,
    machine: &Machine,
    queues: &Table<HsaQueue>,
    handlers: &Handlers,
    stop: &Stop,
) {
    let mut seen = 0;
    let mut reported = crate::objects::queue_errors::Reported::default();
    loop {
        let Ok(faults) = device.memory_faults_since(seen, Duration::ZERO) else {
            return;
        };
        seen += faults.len();
        for fault in faults {
            if stop.requested() {
                return;
            }
            deliver(machine, queues, handlers, &fault);
        }
        if stop.requested() {
            return;
        }
        let scratch_failed = crate::objects::scratch_requests::serve(queues);
        reported.poll(queues, &scratch_failed);
        if stop.wait(MONITOR_POLL) {
            return;
        }
    }
}

/// Hand one fault to the handlers and the queues' callbacks.
fn deliver(machine: &Machine, queues: &Table<HsaQueue>, handlers: &Handlers, fault: &MemoryFault) {
    let agent = machine.gpu_agent(fault.gpu_id).map_or(0, handle_of);
    let mut reasons = 0u32;
    for (on, bit) in [
        (fault.not_present, 1),
        (fault.read_only, 2),
        (fault.no_execute, 4),
        (fault.imprecise, 32),
    ] {
        if on {
            reasons |= bit;
        }
    }
    let event = Event {
        event_type: 0,
        agent,
        virtual_address: fault.address,
        fault_reason_mask: reasons,
    };
    let handlers = handlers
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let queues = queue_callbacks(queues, fault.gpu_id);
    tracing::warn!(
        gpu_id = fault.gpu_id,
        address = fault.address,
        "GPU memory fault"
    );
    for (callback, data, queue, _) in queues {
        // SAFETY: the program's queue error callback, with its data and queue.
        unsafe {
            callback(
                Status::MEMORY_APERTURE_VIOLATION,
                queue as *mut c_void,
                data as *mut c_void,
            );
        }
    }
    if handlers.is_empty() {
        // ROCr's words and behaviour when nobody handles a fault.
        eprintln!(
            "Memory access fault by GPU node-{} on address {:#x}. Reason: {}.",
            machine
                .gpu_agent(fault.gpu_id)
                .map_or(0, |i| machine.agents[i].node),
            fault.address,
            if fault.not_present {
                "Page not present or supervisor privilege"
            } else if fault.read_only {
                "Write access to a read-only page"
            } else {
                "Unknown"
            }
        );
        std::process::abort();
    }
    for (handler, data) in handlers {
        // SAFETY: the program's handler, with its data; `event` lives for the call.
        unsafe { handler(&raw const event, data as *mut c_void) };
    }
}

/// The error callbacks of the queues on GPU `gpu_id`.
fn queue_callbacks(queues: &Table<HsaQueue>, gpu_id: u32) -> Vec<QueueCallback> {
    queues.collect(|address, q| match q.callback {
        (Some(callback), data) if q.queue.gpu_id() == gpu_id => {
            Some((callback, data, address, gpu_id))
        }
        _ => None,
    })
}
