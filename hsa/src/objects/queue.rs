//! The runtime's queues, by `hsa_queue_t` address: aqueduct's queue, the doorbell signal the
//! descriptor names, and the program's error callback (`api::queue` makes and destroys them).

use std::ffi::c_void;

use aqueduct::Queue;
use aqueduct::aql::AmdSignal;

use crate::status::Status;

/// The callback a program gives `hsa_queue_create` for queue errors.
pub type ErrorCallback = Option<unsafe extern "C" fn(Status, *mut c_void, *mut c_void)>;

/// A queue the runtime made, by descriptor address.
#[derive(Debug)]
pub struct HsaQueue {
    /// aqueduct's queue.
    pub queue: Queue,
    /// The doorbell signal (its address is the handle in `hsa_queue_t::doorbell_signal`).
    pub doorbell: Box<AmdSignal>,
    /// The agent it runs on (index).
    pub agent: usize,
    /// The program's error callback and its data (an address, to keep the entry `Send`).
    pub callback: (ErrorCallback, usize),
}
