//! Signal async handlers (`hsa_amd_signal_async_handler`): a thread of the runtime watches the
//! registered signals and calls each handler once its condition holds; a handler that returns
//! true stays registered (and is called again when the condition holds again), false removes
//! it. The thread starts with the first handler and stops at the last `hsa_shut_down`.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;
use unload_safe_thread::UnloadSafeThread;

use aqueduct::{Condition, MemoryOrder, Signal};

/// `hsa_amd_signal_handler`.
pub type Handler = Option<unsafe extern "C" fn(i64, *mut c_void) -> bool>;

/// A handler waiting for its signal's condition.
#[derive(Debug)]
pub struct Registration {
    /// The signal watched.
    pub signal: Signal,
    /// The condition on its value.
    pub condition: Condition,
    /// The value compared with.
    pub value: i64,
    /// The program's handler.
    pub handler: unsafe extern "C" fn(i64, *mut c_void) -> bool,
    /// Its argument (an address, to keep the registration `Send`).
    pub arg: usize,
}

#[derive(Debug, Default)]
struct Pending {
    registrations: Vec<Registration>,
    stop: bool,
}

/// The registered handlers and their thread.
#[derive(Debug, Default)]
pub struct AsyncHandlers {
    pending: Arc<(Mutex<Pending>, Condvar)>,
    thread: Mutex<Option<UnloadSafeThread>>,
    started: AtomicBool,
}

/// The longest nap between looks while handlers wait (the shortest is a few microseconds).
const LONGEST_NAP: Duration = Duration::from_millis(1);

impl AsyncHandlers {
    /// Register a handler; the thread starts with the first.
    pub fn register(&self, registration: Registration) {
        let (lock, wake) = &*self.pending;
        lock.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .registrations
            .push(registration);
        wake.notify_all();
        if !self.started.swap(true, Ordering::AcqRel) {
            let pending = Arc::clone(&self.pending);
            // A pthread, not std's spawn (see system_events).
            match UnloadSafeThread::spawn("hsa-async", move || serve(&pending)) {
                Ok(thread) => {
                    *self.thread.lock().unwrap_or_else(PoisonError::into_inner) = Some(thread);
                }
                Err(error) => tracing::warn!(%error, "cannot start the async-handler thread"),
            }
        }
    }

    /// Stop the thread; it is to be joined outside the runtime's lock.
    pub fn stop(&self) -> Option<UnloadSafeThread> {
        let (lock, wake) = &*self.pending;
        {
            let mut pending = lock.lock().unwrap_or_else(PoisonError::into_inner);
            pending.stop = true;
            pending.registrations.clear();
        }
        wake.notify_all();
        self.thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

fn serve(pending: &(Mutex<Pending>, Condvar)) {
    let (lock, wake) = pending;
    let mut nap = Duration::from_micros(2);
    loop {
        let ready: Vec<Registration> = {
            let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
            while state.registrations.is_empty() && !state.stop {
                state = wake.wait(state).unwrap_or_else(PoisonError::into_inner);
            }
            if state.stop {
                return;
            }
            let (ready, waiting): (Vec<_>, Vec<_>) = state.registrations.drain(..).partition(|r| {
                r.signal
                    .load(MemoryOrder::Acquire)
                    .map_or(true, |v| r.condition.holds(v, r.value))
            });
            state.registrations = waiting;
            ready
        };
        if ready.is_empty() {
            std::thread::sleep(nap);
            nap = (nap * 2).min(LONGEST_NAP);
            continue;
        }
        nap = Duration::from_micros(2);
        for registration in ready {
            let value = registration.signal.load(MemoryOrder::Acquire).unwrap_or(0);
            // SAFETY: the program's handler with its argument.
            let keep = unsafe { (registration.handler)(value, registration.arg as *mut c_void) };
            if keep {
                let mut state = lock.lock().unwrap_or_else(PoisonError::into_inner);
                if !state.stop {
                    state.registrations.push(registration);
                }
            }
        }
    }
}
