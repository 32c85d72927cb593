//! GFX11's `v_wmma_*_16x16x16_*` in the interpreter's terms: a VOP3P instruction carrying
//! [`Extra::Wmma`] (GFX9 has no WMMA opcode; the interpreter's `exec/wmma.rs` runs it).

use super::isa as g11;
use crate::gpu::shader::isa::{Encoding, Extra, Inst, Op, Wmma};

/// The WMMA a GFX11 opcode is, if it is one.
fn wmma_kind(op: g11::Op) -> Option<Wmma> {
    Some(match op {
        g11::Op::VWmmaF3216x16x16F16 => Wmma::F32F16,
        g11::Op::VWmmaF3216x16x16Bf16 => Wmma::F32Bf16,
        g11::Op::VWmmaF1616x16x16F16 => Wmma::F16F16,
        g11::Op::VWmmaBf1616x16x16Bf16 => Wmma::Bf16Bf16,
        g11::Op::VWmmaI3216x16x16Iu8 => Wmma::I32Iu8,
        g11::Op::VWmmaI3216x16x16Iu4 => Wmma::I32Iu4,
        _ => return None,
    })
}

/// Lower a WMMA (None for any other instruction): D, A, B and C stay register operands, the
/// modifiers (NEG, NEG_HI, OP_SEL, CLAMP) go along.
pub fn lower_wmma(g: &g11::Inst) -> Option<Inst> {
    let kind = wmma_kind(g.op)?;
    let mut inst = Inst::new(Op::VNop, Encoding::Vop3p, g.dwords);
    inst.dst = g.dst;
    inst.src = g.src;
    inst.mods = g.mods;
    inst.extra = Extra::Wmma(kind);
    Some(inst)
}
