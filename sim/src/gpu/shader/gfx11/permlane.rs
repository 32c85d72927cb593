//! GFX11's `v_permlane16_b32` and `v_permlanex16_b32` in the interpreter's terms: a VOP3
//! carrying [`Extra::Permlane16`] (GFX9 has no such opcode; the interpreter's
//! `exec/permlane.rs` runs it); `v_permlane64_b32` likewise with [`Extra::Permlane64`].

use super::isa as g11;
use crate::gpu::shader::isa::{Encoding, Extra, Inst, Op};

/// Lower a permlane (None for any other instruction); op_sel (FI, BOUND_CTRL) goes along.
/// The sources keep their GFX11 codes (the caller maps them).
pub fn lower_permlane(g: &g11::Inst) -> Option<Inst> {
    let extra = match g.op {
        g11::Op::VPermlane16B32 => Extra::Permlane16 { cross: false },
        g11::Op::VPermlanex16B32 => Extra::Permlane16 { cross: true },
        g11::Op::VPermlane64B32 => Extra::Permlane64,
        _ => return None,
    };
    let mut inst = Inst::new(Op::VNop, Encoding::Vop3, g.dwords);
    inst.dst = g.dst;
    inst.src = g.src;
    inst.mods = g.mods;
    inst.extra = extra;
    Some(inst)
}
