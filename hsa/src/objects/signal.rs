//! The runtime's signals and doorbells, by handle (a signal's handle is the address of its
//! `amd_signal_t`). A queue's doorbell signal is in the table of doorbells: a store to it rings
//! that queue's doorbell (`api::signal`).

use aqueduct::{Queue, Signal};

/// The live signals and doorbells of the runtime.
#[derive(Debug, Default)]
pub struct Signals {
    /// Signals by handle.
    pub signals: crate::table::Table<Signal>,
    /// Doorbell signals by handle: the queue each rings.
    pub doorbells: crate::table::Table<Queue>,
}
