//! The contract between the command processor, which validates and launches kernel dispatch
//! packets, and the shader core, which executes the kernel's machine code; and the interrupts
//! both (and the SDMA engines) raise towards the kernel-driver model.

use std::sync::atomic::AtomicBool;

use aql::KernelDispatchPacket;

use crate::gpu::target::GfxTarget;
use crate::gpu::vm::{GpuVm, MemoryFault};

/// The scratch (private segment) configuration the CP hands to waves, read from the queue's
/// `amd_queue_t` when the dispatch launches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScratchSetup {
    /// `scratch_resource_descriptor`: the buffer V# for the private segment buffer SGPRs.
    pub resource_descriptor: [u32; 4],
    /// `scratch_backing_memory_location`: GPU address of the queue's scratch memory.
    pub backing_memory_location: u64,
    /// `scratch_backing_memory_byte_size`.
    pub backing_memory_byte_size: u64,
    /// `scratch_wave64_lane_byte_size`: bytes per lane available (0 = no scratch).
    pub wave64_lane_byte_size: u32,
    /// `compute_tmpring_size` register image.
    pub compute_tmpring_size: u32,
}

/// One kernel dispatch, as the CP launches it.
#[derive(Clone, Copy, Debug)]
pub struct DispatchRequest {
    /// The packet, copied out of the ring after validation.
    pub packet: KernelDispatchPacket,
    /// GPU address of the packet in the ring (the Dispatch Ptr SGPR).
    pub packet_va: u64,
    /// GPU address of the queue's `amd_queue_t` (the Queue Ptr SGPR).
    pub queue_va: u64,
    /// The packet's index in the queue (the Dispatch Id SGPRs).
    pub dispatch_id: u64,
    /// The queue's scratch configuration.
    pub scratch: ScratchSetup,
    /// The ISA being executed.
    pub target: GfxTarget,
    /// LDS bytes available to one workgroup.
    pub lds_bytes_per_workgroup: u32,
}

/// One kernel dispatch as a PM4 `DISPATCH_DIRECT` launches it: from the compute shader
/// registers the queue's stream set with `SET_SH_REG`, with no AQL packet and no kernel
/// descriptor behind it (the CP programs the SPI from the registers alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterDispatch {
    /// First instruction: `COMPUTE_PGM_LO/HI` shifted left by 8.
    pub entry: u64,
    /// `COMPUTE_PGM_RSRC1`.
    pub rsrc1: u32,
    /// `COMPUTE_PGM_RSRC2` (user SGPR count, system SGPR enables, LDS size, scratch enable).
    pub rsrc2: u32,
    /// `COMPUTE_PGM_RSRC3`.
    pub rsrc3: u32,
    /// `COMPUTE_USER_DATA_0..15`: the user SGPRs, as written.
    pub user_data: [u32; 16],
    /// Workgroup size in work-items (`COMPUTE_NUM_THREAD_X/Y/Z`).
    pub workgroup: [u32; 3],
    /// Grid size in work-items.
    pub grid: [u32; 3],
    /// `COMPUTE_TMPRING_SIZE` (WAVES 11:0; WAVESIZE 24:12 in 1 KiB units on GFX9, 26:12 in
    /// 256-byte units on GFX11).
    pub tmpring_size: u32,
    /// `COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI` shifted left by 8: the scratch base of
    /// architected flat scratch (gfx942, GFX11).
    pub scratch_base: u64,
    /// `COMPUTE_DISPATCH_INITIATOR.CS_W32_EN` (GFX10+): the waves run in wave32. Always
    /// false on GFX9, which has no such bit.
    pub wave32: bool,
    /// The ISA being executed.
    pub target: GfxTarget,
    /// LDS bytes available to one workgroup.
    pub lds_bytes_per_workgroup: u32,
}

/// Why a dispatch did not complete.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DispatchError {
    /// A device memory access faulted (KFD reports it as a memory exception event).
    #[error(transparent)]
    MemoryFault(#[from] MemoryFault),
    /// The kernel executed an instruction the hardware (or the simulator) cannot execute.
    #[error("illegal instruction at {pc:#x}: {mnemonic} (encoding {encoding:#x?})")]
    IllegalInstruction {
        /// GPU address of the instruction.
        pc: u64,
        /// Its dwords.
        encoding: Vec<u32>,
        /// What it decodes to, or a description of why it does not decode.
        mnemonic: String,
    },
    /// The kernel descriptor or code is unusable (e.g. not in mapped memory, bad register counts).
    #[error("invalid code object: {0}")]
    InvalidCodeObject(String),
    /// The kernel executed `s_trap` with a code the (absent) trap handler does not handle.
    #[error("trap {code:#x} at {pc:#x}")]
    Trap {
        /// GPU address of the trap.
        pc: u64,
        /// The trap code.
        code: u16,
    },
    /// The dispatch was stopped because its queue was destroyed.
    #[error("aborted: the queue was destroyed")]
    Aborted,
}

/// What the shader core reports besides success.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DispatchStats {
    /// Waves executed.
    pub waves: u64,
    /// Instructions executed, summed over waves.
    pub instructions: u64,
}

/// Interrupts raised towards the kernel-driver model (the IH ring of a real GPU).
pub trait InterruptSink: Send + Sync {
    /// A CP end-of-pipe interrupt carrying a 32-bit context id (an event id from a signal's
    /// mailbox).
    fn end_of_pipe(&self, context_id: u32);

    /// An `s_sendmsg` interrupt from a wave, carrying the low 24 bits of M0 (GFX9).
    fn shader_message(&self, context_id: u32);

    /// A GPU VM fault.
    fn vm_fault(&self, fault: MemoryFault);

    /// An SDMA TRAP packet's interrupt, carrying a 28-bit context id (an event id). A sink
    /// that does not tell SDMA traps apart treats it as an end-of-pipe interrupt with that id.
    fn sdma_trap(&self, context_id: u32) {
        self.end_of_pipe(context_id & 0x0FFF_FFFF);
    }
}

/// Executes kernels.
pub trait ShaderCore: Send + Sync {
    /// Run every workgroup of `request` to completion, reading and writing device memory
    /// through `vm`. Returns early with [`DispatchError::Aborted`] once `abort` becomes true.
    ///
    /// A faulting device access ends the dispatch with [`DispatchError::MemoryFault`]; the
    /// command processor then raises [`InterruptSink::vm_fault`] and makes the queue inactive,
    /// so the shader core must not raise `vm_fault` itself (that would report the fault twice).
    /// `interrupts` is for `s_sendmsg` ([`InterruptSink::shader_message`]).
    fn dispatch(
        &self,
        request: &DispatchRequest,
        vm: &dyn GpuVm,
        interrupts: &dyn InterruptSink,
        abort: &AtomicBool,
    ) -> Result<DispatchStats, DispatchError>;

    /// Run every workgroup of a register-programmed dispatch (PM4 `DISPATCH_DIRECT`) to
    /// completion, as [`dispatch`](Self::dispatch) does. A core that cannot (a test's stand-in,
    /// a GPU without a shader core) answers with an invalid code object.
    fn dispatch_registers(
        &self,
        request: &RegisterDispatch,
        vm: &dyn GpuVm,
        interrupts: &dyn InterruptSink,
        abort: &AtomicBool,
    ) -> Result<DispatchStats, DispatchError> {
        let _ = (vm, interrupts, abort);
        Err(DispatchError::InvalidCodeObject(format!(
            "this shader core runs no register-programmed dispatches (program at {:#x})",
            request.entry
        )))
    }
}
