//! What a program creates through the API and the runtime keeps until it is destroyed or the
//! runtime shuts down.

use std::sync::{Mutex, PoisonError};

/// The tables of live objects.
#[derive(Debug, Default)]
pub struct Objects {
    closed: Mutex<bool>,
}

impl Objects {
    /// Drop everything (the last `hsa_shut_down`).
    pub fn close(&self) {
        *self.closed.lock().unwrap_or_else(PoisonError::into_inner) = true;
    }
}
