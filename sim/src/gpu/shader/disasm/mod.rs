//! A disassembler that writes instructions the way `llvm-objdump -d` does, so the decoder can be
//! checked against LLVM (the oracle) and error messages name instructions in familiar syntax.

mod memory;
pub(crate) mod operand;
mod scalar;
pub(crate) mod vector;

use crate::gpu::shader::isa::{Encoding, Inst};
use crate::gpu::target::GfxTarget;

/// The text of one instruction, as `llvm-objdump-19 -d --mcpu=<target>` prints it (without the
/// address/encoding comment; branch targets are the raw signed dword offsets).
pub fn disassemble(inst: &Inst, target: GfxTarget) -> String {
    let mut out = String::with_capacity(48);
    match inst.enc {
        Encoding::Sop1
        | Encoding::Sop2
        | Encoding::Sopk
        | Encoding::Sopc
        | Encoding::Sopp
        | Encoding::Smem => scalar::write(&mut out, inst, target),
        Encoding::Vop1
        | Encoding::Vop2
        | Encoding::Vopc
        | Encoding::Vop3
        | Encoding::Vop3p
        | Encoding::Dpp
        | Encoding::Sdwa => vector::write(&mut out, inst, target),
        Encoding::Ds | Encoding::Flat | Encoding::Mubuf => memory::write(&mut out, inst, target),
    }
    out
}

/// Append `, ` then the operand list separator logic: the first operand is preceded by a space.
pub(crate) struct Operands<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> Operands<'a> {
    pub(crate) fn new(out: &'a mut String) -> Self {
        Self { out, first: true }
    }

    /// Start the next operand and return the buffer to write it into.
    pub(crate) fn next(&mut self) -> &mut String {
        self.out.push_str(if self.first { " " } else { ", " });
        self.first = false;
        self.out
    }
}
