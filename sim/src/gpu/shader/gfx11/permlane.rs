//! GFX11's `v_permlane16_b32` and `v_permlanex16_b32` in the interpreter's terms: a VOP3
//! carrying [`Extra::Permlane16`] (GFX9 has no such opcode; the interpreter's
//! `exec/permlane.rs` runs it). `v_permlane64_b32` is not lowered.

use super::isa as g11;
use crate::gpu::shader::isa::{Encoding, Extra, Inst, Op};

/// Lower a permlane16 (None for any other instruction); op_sel (FI, BOUND_CTRL) goes along.
/// The sources keep their GFX11 codes (the caller maps them).
pub fn lower_permlane(g: &g11::Inst) -> Option<Inst> {
    let cross = match g.op {
        g11::Op::VPermlane16B32 => false,
        g11::Op::VPermlanex16B32 => true,
        _ => return None,
    };
    let mut inst = Inst::new(Op::VNop, Encoding::Vop3, g.dwords);
    inst.dst = g.dst;
    inst.src = g.src;
    inst.mods = g.mods;
    inst.extra = Extra::Permlane16 { cross };
    Some(inst)
}
