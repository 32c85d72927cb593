//! Queue errors as the CP reports them: an error word stored into `queue_inactive_signal`
//! (aql.md §5A, decoded by ROCr's `DynamicScratchHandler`), its mailbox posted like any signal
//! update, and the queue halted.
//!
//! Two kinds of halt:
//! - *recoverable* (insufficient scratch, use-once scratch done): the queue waits, without
//!   advancing its read index, until the host stores 0 to `queue_inactive_signal` (resume: the
//!   same packet is fetched and validated again) or −1 (the queue is dead);
//! - *fatal* (every other error): the queue processes nothing more until it is destroyed.
//!   ROCr answers these by suspending the queue and storing −1; the model does not need either.

use aql::queue::queue_error;

use crate::gpu::dispatch::DispatchError;
use crate::gpu::vm::MemoryFault;

/// Why a queue stopped processing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    /// A packet type the queue does not execute (INVALID is not one: it stalls), AGENT_DISPATCH
    /// on a GPU queue, a reserved fence scope, or non-zero reserved fields.
    #[error("invalid packet format")]
    InvalidPacketFormat,
    /// An AMD vendor packet whose `AmdFormat` the CP does not know, or a PM4 command it does
    /// not execute.
    #[error("unsupported vendor packet")]
    UnsupportedVendorPacket,
    /// A dispatch's dimension count, workgroup or grid sizes are invalid.
    #[error("invalid dispatch dimensions")]
    InvalidDimensions,
    /// A dispatch asks for more group (LDS) memory than a workgroup may have.
    #[error("invalid group segment size")]
    InvalidGroupMemory,
    /// The kernel object is null, misaligned or not in mapped memory, or the shader core found
    /// the kernel descriptor unusable.
    #[error("invalid code object")]
    InvalidCodeObject,
    /// More than 1024 work-items in a workgroup.
    #[error("workgroup too large")]
    WorkgroupTooLarge,
    /// The dispatch needs more scratch than the queue provides (recoverable). The error word
    /// says which wave size the kernel runs at, so the runtime sizes scratch for it.
    #[error("insufficient scratch")]
    InsufficientScratch {
        /// Whether the kernel runs wave32 (`ENABLE_WAVEFRONT_SIZE32` in its descriptor).
        wave32: bool,
    },
    /// A use-once scratch allocation was consumed: the host reclaims it and stores 0.
    #[error("use-once scratch consumed")]
    ScratchUseOnceDone,
    /// A device memory access faulted, by a kernel or by the CP itself.
    #[error(transparent)]
    MemoryViolation(MemoryFault),
    /// A kernel executed an instruction that does not exist or is not supported.
    #[error("illegal instruction at {pc:#x}")]
    IllegalInstruction {
        /// GPU address of the instruction.
        pc: u64,
    },
    /// A kernel trapped (`s_trap`) with no trap handler to take it.
    #[error("trap {code:#x} at {pc:#x}")]
    DebugTrap {
        /// GPU address of the trap.
        pc: u64,
        /// The trap code.
        code: u16,
    },
}

impl QueueError {
    /// The word stored into `queue_inactive_signal`.
    ///
    /// A page fault in a kernel or in the CP is posted as `MEMORY_VIOLATION` (0x2000_0000): it
    /// is the only memory-access error bit the CP error word has, ROCr decodes it as
    /// HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION, and that is the status ROCm users report
    /// for out-of-bounds kernels on real boards. Whether the firmware also posts it for
    /// not-present pages (rather than leaving the report to the KFD memory event alone) could
    /// not be confirmed from source; the model does both, so either consumer sees the fault.
    pub fn error_word(&self) -> i64 {
        match self {
            Self::InvalidPacketFormat => queue_error::INVALID_PACKET_FORMAT,
            Self::UnsupportedVendorPacket => queue_error::UNSUPPORTED_VENDOR_PACKET,
            Self::InvalidDimensions => queue_error::INVALID_DIMENSIONS,
            Self::InvalidGroupMemory => queue_error::INVALID_GROUP_MEMORY,
            Self::InvalidCodeObject => queue_error::INVALID_CODE_OBJECT,
            Self::WorkgroupTooLarge => queue_error::WORKGROUP_TOO_LARGE,
            Self::InsufficientScratch { wave32: false } => queue_error::SCRATCH_WAVE64,
            Self::InsufficientScratch { wave32: true } => queue_error::SCRATCH_WAVE32,
            Self::ScratchUseOnceDone => queue_error::SCRATCH_USE_ONCE_DONE,
            Self::MemoryViolation(_) => queue_error::MEMORY_VIOLATION,
            Self::IllegalInstruction { .. } => queue_error::ILLEGAL_INSTRUCTION,
            Self::DebugTrap { .. } => queue_error::DEBUG_TRAP,
        }
    }

    /// Whether the queue resumes when the host stores 0 to `queue_inactive_signal`.
    pub fn is_recoverable(&self) -> bool {
        matches!(
            self,
            Self::InsufficientScratch { .. } | Self::ScratchUseOnceDone
        )
    }

    /// The memory fault to raise as a VM-fault interrupt, if this error is one.
    pub fn memory_fault(&self) -> Option<MemoryFault> {
        match self {
            Self::MemoryViolation(fault) => Some(*fault),
            _ => None,
        }
    }

    /// The error a failed dispatch reports, or `None` for an abort (the queue is being
    /// destroyed: nothing is reported).
    pub(crate) fn from_dispatch(error: &DispatchError) -> Option<Self> {
        match error {
            DispatchError::MemoryFault(fault) => Some(Self::MemoryViolation(*fault)),
            DispatchError::IllegalInstruction { pc, .. } => {
                Some(Self::IllegalInstruction { pc: *pc })
            }
            DispatchError::InvalidCodeObject(_) => Some(Self::InvalidCodeObject),
            DispatchError::Trap { pc, code } => Some(Self::DebugTrap {
                pc: *pc,
                code: *code,
            }),
            DispatchError::Aborted => None,
        }
    }
}

impl From<MemoryFault> for QueueError {
    fn from(fault: MemoryFault) -> Self {
        Self::MemoryViolation(fault)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::vm::{Access, FaultKind};

    #[test]
    fn words_match_rocr_decoding() {
        assert_eq!(QueueError::InvalidDimensions.error_word(), 2);
        assert_eq!(QueueError::InvalidGroupMemory.error_word(), 4);
        assert_eq!(QueueError::InvalidCodeObject.error_word(), 8);
        assert_eq!(QueueError::InvalidPacketFormat.error_word(), 0x20);
        assert_eq!(QueueError::WorkgroupTooLarge.error_word(), 0x40);
        assert_eq!(QueueError::UnsupportedVendorPacket.error_word(), 0x100);
        assert_eq!(
            QueueError::InsufficientScratch { wave32: false }.error_word(),
            1
        );
        assert_eq!(
            QueueError::InsufficientScratch { wave32: true }.error_word(),
            0x400
        );
        assert_eq!(QueueError::ScratchUseOnceDone.error_word(), 512);
        assert_eq!(
            QueueError::IllegalInstruction { pc: 0 }.error_word(),
            0x4000_0000
        );
        assert_eq!(
            QueueError::DebugTrap { pc: 0, code: 2 }.error_word(),
            0x8000_0000
        );
    }

    #[test]
    fn dispatch_errors_map_and_abort_reports_nothing() {
        let fault = MemoryFault {
            va: 0xdead_0000,
            access: Access::Write,
            kind: FaultKind::NotPresent,
        };
        let error = QueueError::from_dispatch(&DispatchError::MemoryFault(fault)).unwrap();
        assert_eq!(error.error_word(), 0x2000_0000);
        assert_eq!(error.memory_fault(), Some(fault));
        assert!(!error.is_recoverable());
        assert_eq!(QueueError::from_dispatch(&DispatchError::Aborted), None);
        assert!(QueueError::InsufficientScratch { wave32: true }.is_recoverable());
    }
}
