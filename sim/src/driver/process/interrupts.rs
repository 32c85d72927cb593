//! The interrupt handler (IH ring plus `kfd_int_process_v9.c`) of one process on one GPU: what
//! the command processor and the shader core raise through [`InterruptSink`].

use std::sync::Weak;

use kfd::abi::{MemoryExceptionData, MemoryExceptionFailure};

use super::Process;
use crate::gpu::dispatch::InterruptSink;
use crate::gpu::vm::{FaultKind, MemoryFault};

/// Valid context-id bits of a CP end-of-pipe interrupt.
const END_OF_PIPE_ID_BITS: u32 = 32;
/// Valid bits of an `s_sendmsg` interrupt on GFX9 (the low 24 bits of M0).
const SHADER_MESSAGE_ID_BITS: u32 = 24;
/// Valid context-id bits of an SDMA trap (`kfd_int_process_v9.c`: 28).
const SDMA_TRAP_ID_BITS: u32 = 28;

/// Interrupts of one process on one GPU.
pub(crate) struct ProcessInterrupts {
    process: Weak<Process>,
    device: usize,
}

impl ProcessInterrupts {
    pub(crate) fn new(process: Weak<Process>, device: usize) -> Self {
        Self { process, device }
    }
}

/// The `kfd_hsa_memory_exception_data` of a fault: the faulting page, the GPU, and the failure
/// bit of its kind.
pub(crate) fn memory_exception(fault: &MemoryFault, gpu_id: u32) -> MemoryExceptionData {
    MemoryExceptionData {
        failure: MemoryExceptionFailure {
            not_present: u32::from(fault.kind == FaultKind::NotPresent),
            read_only: u32::from(fault.kind == FaultKind::ReadOnly),
            no_execute: u32::from(fault.kind == FaultKind::NoExecute),
            imprecise: 0,
        },
        va: fault.va & !0xFFF,
        gpu_id,
        error_type: kfd::abi::exception::MEM_ERR_NO_RAS,
    }
}

impl InterruptSink for ProcessInterrupts {
    fn end_of_pipe(&self, context_id: u32) {
        if let Some(process) = self.process.upgrade() {
            process.signal_event_interrupt(context_id, END_OF_PIPE_ID_BITS);
        }
    }

    fn shader_message(&self, context_id: u32) {
        if let Some(process) = self.process.upgrade() {
            process.signal_event_interrupt(context_id & 0x00FF_FFFF, SHADER_MESSAGE_ID_BITS);
        }
    }

    fn sdma_trap(&self, context_id: u32) {
        if let Some(process) = self.process.upgrade() {
            process.signal_event_interrupt(context_id & 0x0FFF_FFFF, SDMA_TRAP_ID_BITS);
        }
    }

    fn vm_fault(&self, fault: MemoryFault) {
        let Some(process) = self.process.upgrade() else {
            return;
        };
        let gpu_id = process.shared.devices[self.device].gpu_id;
        // The process' queues on this GPU are evicted first (they stay stopped), then every
        // MEMORY event is set with the fault data.
        process.evict_queues(self.device);
        process.signal_memory_exception(memory_exception(&fault, gpu_id));
    }
}
