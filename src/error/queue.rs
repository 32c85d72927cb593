//! Queue errors: what the command processor posts to a queue's `queue_inactive_signal` when it
//! stops (aql.md §5A), with the faulting address KFD reports for memory faults.

use aql::queue::queue_error;

/// Why a queue stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueueError {
    /// A kernel accessed memory that is not mapped (or not writable) on the GPU.
    #[error("memory fault{}", match .address { Some(a) => format!(" at {a:#x}"), None => String::new() })]
    MemoryFault {
        /// The faulting page's GPU address, where KFD reported it.
        address: Option<u64>,
    },
    /// A wave executed an illegal instruction.
    #[error("illegal instruction")]
    IllegalInstruction,
    /// A dispatch packet had bad grid or work-group dimensions.
    #[error("invalid dispatch dimensions")]
    InvalidDimensions,
    /// A dispatch asked for more group (LDS) memory than a work-group has.
    #[error("invalid group segment size")]
    InvalidGroupMemory,
    /// A dispatch's kernel object was null or not a valid kernel descriptor.
    #[error("invalid or null code object")]
    InvalidCodeObject,
    /// A packet header had an unknown type or format.
    #[error("invalid packet format")]
    InvalidPacketFormat,
    /// A vendor-specific packet of a format the CP does not know.
    #[error("unsupported vendor packet")]
    UnsupportedVendorPacket,
    /// A work-group larger than the GPU takes.
    #[error("work-group too large")]
    WorkgroupTooLarge,
    /// The kernel needs more registers than a wave has.
    #[error("out of registers")]
    OutOfRegisters,
    /// A wave hit a debug trap.
    #[error("debug trap")]
    DebugTrap,
    /// The kernel needs scratch (private) memory the queue does not provide.
    #[error("the kernel needs scratch memory the queue does not have")]
    OutOfScratch,
    /// [`Queue::abort`](crate::Queue::abort) destroyed the queue (after a launch timed out,
    /// say): make a new queue.
    #[error("the queue was aborted (destroyed with its kernels); create a new queue")]
    Aborted,
    /// A GPU reset destroyed the queue.
    #[error("GPU reset{}", if *.memory_lost { " (device memory lost)" } else { "" })]
    GpuReset {
        /// Whether device memory contents were lost.
        memory_lost: bool,
    },
    /// An error word this driver does not know.
    #[error("unknown queue error word {0:#x}")]
    Unknown(i64),
}

impl QueueError {
    /// Decode the word the CP stored into `queue_inactive_signal` (0: no error, `None`).
    /// `fault_address` is the address of a memory fault KFD reported on this GPU, if any.
    pub fn from_word(word: i64, fault_address: Option<u64>) -> Option<Self> {
        use queue_error as e;
        if word == 0 {
            return None;
        }
        // The most specific cause first: a word may carry several bits.
        let table: [(i64, Self); 11] = [
            (
                e::MEMORY_VIOLATION,
                Self::MemoryFault {
                    address: fault_address,
                },
            ),
            (e::ILLEGAL_INSTRUCTION, Self::IllegalInstruction),
            (e::DEBUG_TRAP, Self::DebugTrap),
            (e::INVALID_DIMENSIONS, Self::InvalidDimensions),
            (e::INVALID_GROUP_MEMORY, Self::InvalidGroupMemory),
            (e::INVALID_CODE_OBJECT, Self::InvalidCodeObject),
            (e::INVALID_PACKET_FORMAT, Self::InvalidPacketFormat),
            (e::UNSUPPORTED_VENDOR_PACKET, Self::UnsupportedVendorPacket),
            (e::WORKGROUP_TOO_LARGE, Self::WorkgroupTooLarge),
            (e::OUT_OF_REGISTERS, Self::OutOfRegisters),
            (e::SCRATCH_WAVE64 | e::SCRATCH_WAVE32, Self::OutOfScratch),
        ];
        Some(
            table
                .into_iter()
                .find(|(bits, _)| word & bits != 0)
                .map_or(Self::Unknown(word), |(_, error)| error),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_decode_to_their_causes() {
        assert_eq!(QueueError::from_word(0, None), None);
        assert_eq!(
            QueueError::from_word(queue_error::MEMORY_VIOLATION, Some(0x1000)),
            Some(QueueError::MemoryFault {
                address: Some(0x1000)
            })
        );
        assert_eq!(
            QueueError::from_word(queue_error::ILLEGAL_INSTRUCTION, None),
            Some(QueueError::IllegalInstruction)
        );
        assert_eq!(
            QueueError::from_word(queue_error::SCRATCH_WAVE32, None),
            Some(QueueError::OutOfScratch)
        );
        assert_eq!(
            QueueError::from_word(0x10, None),
            Some(QueueError::Unknown(0x10))
        );
        assert_eq!(
            QueueError::from_word(queue_error::MEMORY_VIOLATION, None)
                .unwrap()
                .to_string(),
            "memory fault"
        );
    }
}
