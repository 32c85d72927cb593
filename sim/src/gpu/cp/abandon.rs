//! Why a processor stopped working on a packet or command before its end, shared by the AQL
//! and PM4 processors.

use super::queue_error::QueueError;
use crate::gpu::vm::MemoryFault;

/// Why a packet (or PM4 command) was not completed.
#[derive(Debug)]
pub(crate) enum Abandon {
    /// A queue error: report it and halt.
    Error(QueueError),
    /// The queue is being destroyed: touch nothing more.
    Destroyed,
}

impl From<QueueError> for Abandon {
    fn from(error: QueueError) -> Self {
        Self::Error(error)
    }
}

impl From<MemoryFault> for Abandon {
    fn from(fault: MemoryFault) -> Self {
        Self::Error(QueueError::MemoryViolation(fault))
    }
}
