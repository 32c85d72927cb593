//! Vector register tuple alignment on gfx90a and gfx942: a VGPR or AGPR operand of 64 bits or
//! more must start at an even register.
//!
//! LLVM documents the rule for both targets: "GFX90A and GFX942 have an additional alignment
//! requirement: pairs of vector registers must be even-aligned (first register must be even)"
//! (AMDGPUOperandSyntax, "v"), and its assembler refuses odd tuples
//! (`AMDGPUAsmParser::validateVGPRAlign`: "vgpr tuples must be 64 bit aligned"), so no
//! LLVM-built code holds one. LLVM 19's disassembler does not check the rule: it decodes odd
//! tuples (`flat_load_dwordx2 v[5:6], ...`, `v_add_f64 v[4:5], v[1:2], ...`), which the fuzz
//! test lists as a deliberate difference. What the hardware does with an odd tuple is not
//! documented (the rule exists because it pairs registers by alignment); the simulated core
//! refuses one as an illegal instruction instead of guessing which registers it would read.

use super::DecodeError;
use crate::gpu::shader::isa::{Extra, Family, Inst, Mem, Operand};

/// Registers each operand slot of `inst` spans: destination and sources 0 to 2.
fn spans(inst: &Inst) -> [u32; 4] {
    let info = inst.op.info();
    let sig = info.sig;
    let mem = match inst.extra {
        Extra::Mem(mem) => mem,
        _ => Mem::default(),
    };
    // Source 0 of a memory instruction is its address, which the signature does not type.
    let address = match info.family {
        // FLAT and GLOBAL without SADDR take a 64-bit address; GLOBAL with SADDR and SCRATCH
        // a 32-bit offset. MUBUF with both IDXEN and OFFEN takes an index and an offset.
        Family::Flat => 2,
        Family::Global if inst.src[2] == Operand::None => 2,
        Family::Mubuf if mem.idxen && mem.offen => 2,
        Family::Global | Family::Scratch | Family::Mubuf => 1,
        _ => sig[2].dwords(),
    };
    [sig[0].dwords(), address, sig[3].dwords(), sig[4].dwords()]
}

/// Reject `inst` if one of its VGPR or AGPR tuples starts at an odd register.
pub fn check(inst: &Inst, family: &'static str) -> Result<(), DecodeError> {
    let operands = [inst.dst, inst.src[0], inst.src[1], inst.src[2]];
    for (operand, span) in operands.into_iter().zip(spans(inst)) {
        if matches!(operand, Operand::Vgpr(n) if span >= 2 && n % 2 != 0) {
            return Err(DecodeError::Invalid {
                family,
                what: "VGPR/AGPR tuple not aligned to an even register",
            });
        }
        // A tuple cannot run past the last register of its file (v255 or a255): LLVM has no
        // such register tuple and refuses the word.
        if matches!(operand, Operand::Vgpr(n) if u32::from(n & 0xff) + span > 256) {
            return Err(DecodeError::Invalid {
                family,
                what: "VGPR/AGPR tuple past register 255",
            });
        }
    }
    Ok(())
}
