//! Scratch on the CP's request. HIP and other clients create queues with no scratch hint
//! (`private_segment_size` UINT32_MAX) and write dispatch packets into the ring themselves, so
//! the library cannot size scratch before a kernel that needs it runs. As on ROCr, the CP halts
//! such a queue with the recoverable insufficient-scratch error in `queue_inactive_signal`;
//! the fault monitor (`system_events`) then grows the queue's scratch to what the halted packet
//! asks for and resumes it (ROCr's `DynamicScratchHandler`).
//!
//! The monitor looks once per slice of its fault wait (20 ms), so the first dispatch that
//! needs more scratch on a queue waits up to that long; later ones find it in place.

use crate::objects::Objects;

/// Grow and resume every queue the CP halted for scratch.
pub fn serve(objects: &Objects) {
    let queues = objects.queues.collect(|_, q| Some(q.queue.clone()));
    for queue in queues {
        match queue.serve_scratch_request() {
            Ok(true) => tracing::debug!(queue = queue.queue_id(), "scratch grown on request"),
            Ok(false) => {}
            // The queue stays halted; its waits then run into their own limits.
            Err(error) => tracing::warn!(%error, "cannot grow scratch on the CP's request"),
        }
    }
}
