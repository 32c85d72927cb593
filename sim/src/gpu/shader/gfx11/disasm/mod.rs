//! A disassembler that writes GFX11 instructions the way `llvm-objdump-19 -d --mcpu=gfx1100`
//! does (wave32 register names), so the decoder can be checked against LLVM.

mod image;
mod memory;
mod operand;
mod scalar;
mod symbolic;
mod vector;

use crate::gpu::shader::gfx11::isa::{Encoding, Inst};

/// The text of one instruction, without the address/encoding comment (branch targets are the
/// raw 16-bit offsets, as llvm-objdump prints them without symbols).
pub fn disassemble(inst: &Inst) -> String {
    let mut out = String::with_capacity(48);
    match inst.enc {
        Encoding::Sop1
        | Encoding::Sop2
        | Encoding::Sopk
        | Encoding::Sopc
        | Encoding::Sopp
        | Encoding::Smem => scalar::write(&mut out, inst),
        Encoding::Vop1
        | Encoding::Vop2
        | Encoding::Vopc
        | Encoding::Vop3
        | Encoding::Vop3p
        | Encoding::Vopd
        | Encoding::Vinterp => vector::write(&mut out, inst),
        Encoding::Ds | Encoding::Flat | Encoding::Mubuf | Encoding::Mtbuf => {
            memory::write(&mut out, inst);
        }
        Encoding::Mimg => image::write(&mut out, inst),
    }
    out
}
