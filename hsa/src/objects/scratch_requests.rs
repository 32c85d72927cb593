//! Scratch on the CP's request. HIP and other clients create queues with no scratch hint
//! (`private_segment_size` UINT32_MAX) and write dispatch packets into the ring themselves, so
//! the library cannot size scratch before a kernel that needs it runs. As on ROCr, the CP halts
//! such a queue with the recoverable insufficient-scratch error in `queue_inactive_signal`;
//! the fault monitor (`system_events`) then grows the queue's scratch to what the halted packet
//! asks for and resumes it (ROCr's `DynamicScratchHandler`).
//!
//! The monitor looks once per slice of its fault wait (20 ms), so the first dispatch that
//! needs more scratch on a queue waits up to that long; later ones find it in place.

use std::collections::HashSet;

use crate::objects::queue::HsaQueue;
use crate::table::Table;

/// Grow and resume every queue the CP halted for scratch. Returns the queues (by
/// `hsa_queue_t` address) whose scratch could not be grown: they stay halted, and
/// `queue_errors` hands their error to the queue's callback, as ROCr does when its
/// `DynamicScratchHandler` fails. A halted queue not in the set is left alone by
/// `queue_errors` (it is served here, on this slice or the next).
pub fn serve(queues: &Table<HsaQueue>) -> HashSet<u64> {
    let queues = queues.collect(|address, q| Some((address, q.queue.clone())));
    let mut failed = HashSet::new();
    for (address, queue) in queues {
        match queue.serve_scratch_request() {
            Ok(true) => tracing::debug!(queue = queue.queue_id(), "scratch grown on request"),
            Ok(false) => {}
            Err(error) => {
                tracing::warn!(%error, "cannot grow scratch on the CP's request");
                failed.insert(address);
            }
        }
    }
    failed
}
