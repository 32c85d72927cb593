//! GFX11 operand text: the scalar file's names (`null`, `m0` at 125, `vcc_lo` in wave32) and
//! the GFX9 printer for everything else.

use std::fmt::Write;

use crate::gpu::shader::disasm::operand::{self as gfx9, pair, range};
use crate::gpu::shader::isa::{Operand, Ty};

/// The GFX11 code of `null`.
const NULL: u8 = 124;

/// A scalar register of `count` dwords by its GFX11 code.
pub fn sgpr(out: &mut String, n: u8, count: u32) {
    match n {
        0..=105 => range(out, "s", u32::from(n), count),
        106 | 107 => pair(out, "vcc", u32::from(n) - 106, count),
        108..=123 => range(out, "ttmp", u32::from(n) - 108, count),
        124 => out.push_str("null"),
        125 => out.push_str("m0"),
        126 | 127 => pair(out, "exec", u32::from(n) - 126, count),
        _ => {
            let _ = write!(out, "<sreg{n}>");
        }
    }
}

/// A source or destination of type `ty`.
pub fn operand(out: &mut String, op: Operand, ty: Ty) {
    match op {
        Operand::Sgpr(n) => sgpr(out, n, ty.dwords().max(1)),
        _ => gfx9::operand(out, op, ty),
    }
}

/// A source with float modifiers: `-x`, `|x|`, `-|x|`, and `neg(c)` for a negated constant.
pub fn modified(out: &mut String, op: Operand, ty: Ty, neg: bool, abs: bool) {
    gfx9::modified_with(out, op, ty, neg, abs, operand);
}

/// A true16 operand: a VGPR field's bit 7 selects the high half (`v1.h`), else as [`operand`].
pub fn half(out: &mut String, op: Operand, ty: Ty) {
    match op {
        Operand::Vgpr(n) => {
            let _ = write!(
                out,
                "v{}.{}",
                n & 0x7f,
                if n & 0x80 != 0 { 'h' } else { 'l' }
            );
        }
        _ => operand(out, op, ty),
    }
}

/// A source LLVM reads through a VGPR-only class (VINTERP's): a scalar register there prints
/// with a `VGPR_32` note, a constant with an `Invalid immediate` one (llvm-mc-19).
pub fn vgpr_only(out: &mut String, op: Operand, ty: Ty) {
    operand(out, op, ty);
    match op {
        Operand::Sgpr(NULL) => {}
        Operand::Sgpr(_) => {
            out.push_str("/*Invalid register, operand has 'VGPR_32' register class*/");
        }
        Operand::Inline(_) => out.push_str("/*Invalid immediate*/"),
        _ => {}
    }
}

/// [`modified`] over [`vgpr_only`].
pub fn modified_vgpr_only(out: &mut String, op: Operand, ty: Ty, neg: bool) {
    gfx9::modified_with(out, op, ty, neg, false, vgpr_only);
}
