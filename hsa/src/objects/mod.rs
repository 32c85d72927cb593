//! What a program creates through the API, kept by the runtime until it is destroyed or the
//! runtime shuts down: one table (or set of tables) per kind of object, with the operations
//! on it, and the runtime's threads that serve them. Nothing here knows the runtime: what a
//! thread needs (the device, the machine, the queue table) is handed to it when it starts, and
//! the entry points (`api`) reach the tables through `runtime::runtime()`.
//!
//! - `signal`, `queue`, `memory`, `executable`: the objects' tables;
//! - `copy_engines`: the copy queues and copy profiling of the asynchronous copies;
//! - `async_handlers`: the signal handlers and the thread that calls them;
//! - `system_events`: the system-event handlers and the monitor thread, which serves the CP's
//!   scratch requests (`scratch_requests`) and hands queue errors to the queues' callbacks
//!   (`queue_errors`).

use std::sync::Arc;

use unload_safe_thread::UnloadSafeThread;

pub mod async_handlers;
pub mod copy_engines;
pub mod executable;
pub mod memory;
pub mod queue;
pub mod queue_errors;
pub mod scratch_requests;
pub mod signal;
pub mod system_events;

use crate::table::Table;
use async_handlers::AsyncHandlers;
use copy_engines::CopyEngines;
use executable::Executables;
use memory::Allocations;
use queue::HsaQueue;
use signal::Signals;
use system_events::SystemEvents;

/// The tables of live objects.
#[derive(Debug, Default)]
pub struct Objects {
    /// Signals and doorbells.
    pub signals: Signals,
    /// Queues by `hsa_queue_t` address (shared with the system-event monitor).
    pub queues: Arc<Table<HsaQueue>>,
    /// The copy engines' queues and copy profiling.
    pub copies: CopyEngines,
    /// Memory the program allocated or locked.
    pub memory: Allocations,
    /// Code-object readers, executables and symbols.
    pub executables: Executables,
    /// System event handlers and the fault monitor.
    pub events: SystemEvents,
    /// Signal async handlers and their thread.
    pub async_handlers: AsyncHandlers,
}

impl Objects {
    /// Drop everything (the last `hsa_shut_down`): queues first, then what they used.
    pub fn close(&self) -> Vec<UnloadSafeThread> {
        let threads = [self.events.stop(), self.async_handlers.stop()];
        drop(self.queues.drain());
        self.copies.close();
        drop(self.signals.doorbells.drain());
        drop(self.signals.signals.drain());
        self.executables.close();
        self.memory.close();
        threads.into_iter().flatten().collect()
    }
}
