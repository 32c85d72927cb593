//! Queue errors other than memory faults: when the command processor stops a queue (an
//! illegal instruction, a trap, a malformed packet), the queue's `hsa_queue_create` error
//! callback is called once with the matching status, as ROCr's queue event handler does.
//! Without it a client waiting on a completion signal of the stopped queue waits forever
//! (libomptarget's callback reports the error and ends the process; ROCr over the same
//! simulated GPU does that). Memory faults reach the callbacks through `system_events`, with
//! their address.
//!
//! The system-event monitor thread looks at every queue with a callback once per slice of its
//! fault wait (`poll`), so an error reaches the callback within that slice.

use std::collections::HashSet;
use std::ffi::c_void;

use aqueduct::QueueError;

use crate::objects::queue::HsaQueue;
use crate::status::Status;
use crate::table::Table;

/// The status a queue's error callback gets for `cause`; `None` where the callback is not
/// called from here (memory faults go through `system_events`; an abort is the program's own
/// `hsa_queue_inactivate` or destruction).
///
/// The codes: ROCr reports an illegal instruction as `HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION`
/// (seen over the interposer: libomptarget prints it); the packet errors follow the
/// CP-error-bit ↔ status table of ROCr-compatible queue models (`ComputeQueue::HandleError`
/// in a libhsakmt model read 2026-11: dimensions → INCOMPATIBLE_ARGUMENTS, group memory →
/// INVALID_ALLOCATION, code object → INVALID_CODE_OBJECT, packet format → INVALID_PACKET_FORMAT,
/// work-group size → INVALID_ARGUMENT, anything else → EXCEPTION). Not checked against ROCr's
/// own handler for every code.
pub fn status_of(cause: &QueueError) -> Option<Status> {
    Some(match cause {
        QueueError::MemoryFault { .. } | QueueError::Aborted => return None,
        QueueError::IllegalInstruction => Status::ILLEGAL_INSTRUCTION,
        QueueError::InvalidDimensions => Status::INCOMPATIBLE_ARGUMENTS,
        QueueError::InvalidGroupMemory => Status::INVALID_ALLOCATION,
        QueueError::InvalidCodeObject => Status::INVALID_CODE_OBJECT,
        QueueError::InvalidPacketFormat | QueueError::UnsupportedVendorPacket => {
            Status::INVALID_PACKET_FORMAT
        }
        QueueError::WorkgroupTooLarge => Status::INVALID_ARGUMENT,
        QueueError::OutOfScratch => Status::OUT_OF_RESOURCES,
        _ => Status::EXCEPTION,
    })
}

/// The queues whose error was already handed to their callback, by `hsa_queue_t` address.
#[derive(Debug, Default)]
pub struct Reported(HashSet<u64>);

impl Reported {
    /// Call the error callback of every queue that stopped since the last look, once per
    /// queue. A queue halted for scratch is reported only if it is in `scratch_failed` (the
    /// queues `scratch_requests::serve` could not grow): otherwise the halt is recoverable
    /// and being served, and may even have been raised after this slice's `serve`.
    pub fn poll(&mut self, queues: &Table<HsaQueue>, scratch_failed: &HashSet<u64>) {
        poll(&mut self.0, queues, scratch_failed);
    }
}

/// [`Reported::poll`] over the set of reported queues.
fn poll(reported: &mut HashSet<u64>, queues: &Table<HsaQueue>, scratch_failed: &HashSet<u64>) {
    // A destroyed queue's address may come back for a new queue: forget the gone ones.
    let live: HashSet<u64> = queues
        .collect(|address, _| Some(address))
        .into_iter()
        .collect();
    reported.retain(|address| live.contains(address));
    let stopped = queues.collect(|address, q| {
        let (Some(callback), data) = q.callback else {
            return None;
        };
        if reported.contains(&address) {
            return None;
        }
        let cause = q.queue.error().ok().flatten()?;
        if matches!(cause, QueueError::OutOfScratch) && !scratch_failed.contains(&address) {
            return None;
        }
        Some((address, callback, data, cause))
    });
    for (address, callback, data, cause) in stopped {
        reported.insert(address);
        let Some(status) = status_of(&cause) else {
            continue;
        };
        tracing::warn!(queue = address, %cause, "queue error");
        // SAFETY: the program's queue error callback, with the queue and the program's data,
        // called outside the runtime's locks (the callback may call back into the runtime).
        unsafe { callback(status, address as *mut c_void, data as *mut c_void) };
    }
}
