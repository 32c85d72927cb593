//! What a program creates through the API, kept by the runtime until it is destroyed or the
//! runtime shuts down.

use unload_safe_thread::UnloadSafeThread;

use crate::async_handlers::AsyncHandlers;
use crate::copy_engines::CopyEngines;
use crate::executable::Executables;
use crate::memory::Allocations;
use crate::queue::HsaQueue;
use crate::signal::Signals;
use crate::system_events::{QueueCallback, SystemEvents};
use crate::table::Table;

/// The tables of live objects.
#[derive(Debug, Default)]
pub struct Objects {
    /// Signals and doorbells.
    pub signals: Signals,
    /// Queues by `hsa_queue_t` address.
    pub queues: Table<HsaQueue>,
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

    /// The error callbacks of the queues on GPU `gpu_id`.
    pub fn queue_callbacks(&self, gpu_id: u32) -> Vec<QueueCallback> {
        self.queues.collect(|address, q| match q.callback {
            (Some(callback), data) if q.queue.gpu_id() == gpu_id => {
                Some((callback, data, address, gpu_id))
            }
            _ => None,
        })
    }
}
