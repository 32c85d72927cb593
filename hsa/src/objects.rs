//! What a program creates through the API, kept by the runtime until it is destroyed or the
//! runtime shuts down.

use crate::executable::Executables;
use crate::memory::Allocations;
use crate::queue::HsaQueue;
use crate::signal::Signals;
use crate::table::Table;

/// The tables of live objects.
#[derive(Debug, Default)]
pub struct Objects {
    /// Signals and doorbells.
    pub signals: Signals,
    /// Queues by `hsa_queue_t` address.
    pub queues: Table<HsaQueue>,
    /// Memory the program allocated or locked.
    pub memory: Allocations,
    /// Code-object readers, executables and symbols.
    pub executables: Executables,
}

impl Objects {
    /// Drop everything (the last `hsa_shut_down`): queues first, then what they used.
    pub fn close(&self) {
        drop(self.queues.drain());
        drop(self.signals.doorbells.drain());
        drop(self.signals.signals.drain());
        self.executables.close();
        self.memory.close();
    }
}
