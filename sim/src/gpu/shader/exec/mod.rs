//! The interpreter: executes one wave's instructions until it ends, waits at a barrier or
//! yields to the other waves of its workgroup.
//!
//! One module per instruction group: scalar ALU, program control, scalar memory, vector ALU
//! (integer, float, half/packed, compares, conversions, lane operations), matrix
//! multiply-add, LDS, and vector memory (with the load and store data path the last two share).

#![allow(
    clippy::float_cmp,
    clippy::many_single_char_names,
    clippy::neg_cmp_op_on_partial_ord
)]
// float_cmp: the interpreter compares floats bit-exactly on purpose (IEEE semantics are the
// specification); many_single_char_names: lane loops use the ISA pseudocode names (a, b, c, d,
// s, l); neg_cmp_op_on_partial_ord: `!(a >= b)` is exactly the unordered-or-less compare.

mod atomic;
mod dpp;
mod ds;
mod float_rules;
mod half;
mod load_store;
mod mfma;
mod mfma_shape;
mod operand;
mod permlane;
mod rounding;
mod salu;
mod smem;
mod sopp;
mod typed_buffer;
mod valu;
mod valu_cmp;
mod valu_conv;
mod valu_f16;
mod valu_float;
mod valu_int;
mod valu_lane;
mod valu_loops;
mod vmem;
mod vop3p;
mod wmma;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::gpu::dispatch::{DispatchError, InterruptSink};
use crate::gpu::shader::decode::DecodeError;
use crate::gpu::shader::disasm::disassemble;
use crate::gpu::shader::isa::{Encoding, Extra, Inst};
use crate::gpu::shader::lds::Lds;
use crate::gpu::shader::memory::DeviceMemory;
use crate::gpu::shader::program::{CodeCache, Program, Slot};
use crate::gpu::shader::wave::Wave;
use crate::gpu::target::GfxTarget;
use crate::gpu::vm::{Access, FaultKind, MemoryFault};

/// Apertures and constants every wave of a dispatch sees.
#[derive(Clone, Copy, Debug)]
pub struct Apertures {
    /// Base of the LDS (shared) aperture in the flat address space.
    pub shared_base: u64,
    /// Base of the scratch (private) aperture.
    pub private_base: u64,
}

impl Apertures {
    /// The GFX9 layout KFD programs (`kfd_flat_memory.c`): LDS at 1 << 48, scratch at 2 << 48,
    /// each 4 GiB.
    pub const GFX9: Self = Self {
        shared_base: 1 << 48,
        private_base: 2 << 48,
    };

    /// Size of each aperture.
    pub const SIZE: u64 = 1 << 32;
}

/// What a dispatch's waves share, read-only.
pub struct Shared<'a> {
    /// The ISA.
    pub target: GfxTarget,
    /// Where `s_sendmsg` interrupts go.
    pub interrupts: &'a dyn InterruptSink,
    /// Set when the queue is destroyed.
    pub abort: &'a AtomicBool,
    /// Flat apertures.
    pub apertures: Apertures,
    /// Decoded programs.
    pub code: &'a CodeCache,
    /// Wave time slices run so far (see [`Interpreter::slices_run`](crate::gpu::shader::core::Interpreter::slices_run)).
    pub slices_run: &'a AtomicU64,
}

impl std::fmt::Debug for Shared<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("target", &self.target)
            .field("apertures", &self.apertures)
            .finish_non_exhaustive()
    }
}

/// Why a wave stopped running for now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// s_endpgm.
    Ended,
    /// s_barrier: waits for the other waves of the workgroup.
    Barrier,
    /// Gave the other waves a turn after a time slice (a long-running loop).
    Yield,
    /// s_sleep: the wave idles (it polls memory, typically) and gives the other waves a
    /// turn; when every wave of the workgroup sleeps, the worker gives up its host core too.
    Sleep,
}

/// An instruction could not complete.
#[derive(Debug)]
pub enum Fault {
    /// The instruction (or this use of it) is not implemented; the run loop turns this into
    /// [`DispatchError::IllegalInstruction`] naming the PC, encoding and mnemonic.
    Unimplemented(String),
    /// Any other dispatch error.
    Error(DispatchError),
}

impl From<MemoryFault> for Fault {
    fn from(f: MemoryFault) -> Self {
        Fault::Error(DispatchError::MemoryFault(f))
    }
}

impl From<DispatchError> for Fault {
    fn from(e: DispatchError) -> Self {
        Fault::Error(e)
    }
}

/// Result of executing one instruction.
pub type R = Result<(), Fault>;

/// An "unimplemented" fault with a reason.
pub fn unimplemented(why: impl Into<String>) -> Fault {
    Fault::Unimplemented(why.into())
}

/// Instructions a wave runs before it yields at a backward branch, so that waves spinning on a
/// value written by another wave of the same workgroup make progress.
const SLICE: u64 = 4096;

/// The execution context of one wave.
pub struct Exec<'e, 'a> {
    /// The wave.
    pub w: &'e mut Wave,
    /// The workgroup's LDS.
    pub lds: &'e mut Lds,
    /// Device memory.
    pub mem: &'e mut DeviceMemory<'a>,
    /// Dispatch-wide state.
    pub shared: &'e Shared<'a>,
    /// Set by instructions that stop the wave (end, barrier, sleep).
    stop: Option<Stop>,
}

impl std::fmt::Debug for Exec<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exec")
            .field("wave", &self.w)
            .finish_non_exhaustive()
    }
}

impl<'e, 'a> Exec<'e, 'a> {
    /// A context for `w`.
    pub fn new(
        w: &'e mut Wave,
        lds: &'e mut Lds,
        mem: &'e mut DeviceMemory<'a>,
        shared: &'e Shared<'a>,
    ) -> Self {
        Self {
            w,
            lds,
            mem,
            shared,
            stop: None,
        }
    }

    /// Run until the wave ends, reaches a barrier or yields. `program` is the code the wave
    /// was last in (replaced when the PC leaves it).
    pub fn run(&mut self, program: &mut Arc<Program>) -> Result<Stop, DispatchError> {
        let mut executed = 0u64;
        loop {
            let pc = self.w.pc;
            if !program.contains(pc) {
                *program = self
                    .shared
                    .code
                    .program_for(self.mem.vm(), pc, self.shared.target)?;
            }
            if pc % 4 != 0 {
                return Err(DispatchError::MemoryFault(MemoryFault {
                    va: pc,
                    access: Access::Execute,
                    kind: FaultKind::NotPresent,
                }));
            }
            let slot = program.fetch(pc);
            let inst = match &slot.decoded {
                Ok(inst) => inst,
                Err(e) => {
                    return Err(DispatchError::IllegalInstruction {
                        pc,
                        encoding: slot.encoding(),
                        mnemonic: self.refusal(e, slot),
                    });
                }
            };
            self.w.pc = pc.wrapping_add(4 * u64::from(inst.dwords));
            let mut result = self.execute(inst);
            for next in &slot.more {
                if result.is_err() {
                    break;
                }
                result = self.execute(next);
            }
            match result {
                Ok(()) => {}
                Err(Fault::Unimplemented(why)) => {
                    self.w.pc = pc;
                    return Err(DispatchError::IllegalInstruction {
                        pc,
                        encoding: slot.encoding(),
                        mnemonic: format!("{} ({why})", self.text(inst, &slot.words)),
                    });
                }
                Err(Fault::Error(e)) => {
                    self.w.pc = pc;
                    return Err(e);
                }
            }
            executed += 1;
            self.w.instructions += 1;
            if let Some(stop) = self.stop.take() {
                return Ok(stop);
            }
            if self.w.pc <= pc {
                // A backward branch (or a jump to itself): the place to notice abort and to let
                // the other waves run.
                if self.shared.abort.load(Ordering::Relaxed) {
                    return Err(DispatchError::Aborted);
                }
                if executed >= SLICE {
                    return Ok(Stop::Yield);
                }
            }
        }
    }

    /// The instruction as llvm-objdump prints it for the dispatch's ISA (GFX11 code is
    /// printed from its own words, not from the GFX9 instruction it runs as).
    fn text(&self, inst: &Inst, words: &[u32]) -> String {
        if self.shared.target.is_gfx9() {
            return disassemble(inst, self.shared.target);
        }
        match crate::gpu::shader::gfx11::decode::decode(words) {
            Ok(g) => crate::gpu::shader::gfx11::disasm::disassemble(&g),
            Err(e) => e.to_string(),
        }
    }

    /// Why the instruction at a slot does not run. A GFX11 instruction that decodes but has no
    /// GFX9 counterpart is named as llvm-objdump prints it (all its words: an NSA image
    /// instruction's address dwords too), then the reason.
    fn refusal(&self, e: &DecodeError, slot: &Slot) -> String {
        if !self.shared.target.is_gfx9() && matches!(e, DecodeError::NotSimulated(_)) {
            let words = &slot.words[..usize::from(slot.available)];
            if let Ok(g) = crate::gpu::shader::gfx11::decode::decode(words) {
                return format!(
                    "{} (not simulated)",
                    crate::gpu::shader::gfx11::disasm::disassemble(&g)
                );
            }
        }
        e.to_string()
    }

    /// Stop the wave after the current instruction.
    fn stop_with(&mut self, stop: Stop) {
        self.stop = Some(stop);
    }

    fn execute(&mut self, inst: &Inst) -> R {
        match inst.enc {
            Encoding::Sop1 => salu::sop1(self, inst),
            Encoding::Sop2 => salu::sop2(self, inst),
            Encoding::Sopc => salu::sopc(self, inst),
            Encoding::Sopk => salu::sopk(self, inst),
            Encoding::Sopp => sopp::exec(self, inst),
            Encoding::Smem => smem::exec(self, inst),
            Encoding::Vop3
                if matches!(inst.extra, Extra::Permlane16 { .. } | Extra::Permlane64) =>
            {
                permlane::exec(self, inst)
            }
            Encoding::Vop1
            | Encoding::Vop2
            | Encoding::Vopc
            | Encoding::Vop3
            | Encoding::Dpp
            | Encoding::Sdwa => valu::exec(self, inst),
            Encoding::Vop3p if matches!(inst.extra, Extra::Mai { .. }) => mfma::exec(self, inst),
            Encoding::Vop3p if matches!(inst.extra, Extra::Wmma(_)) => wmma::exec(self, inst),
            Encoding::Vop3p => vop3p::exec(self, inst),
            Encoding::Ds => ds::exec(self, inst),
            Encoding::Mubuf => match typed_buffer::TypedAccess::of(inst.op) {
                Some(typed) => typed_buffer::exec(self, inst, typed),
                None => vmem::exec(self, inst),
            },
            Encoding::Flat => vmem::exec(self, inst),
        }
    }
}
