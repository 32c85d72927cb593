//! Operand text as LLVM's AMDGPU instruction printer writes it.

use std::fmt::Write;

use crate::gpu::shader::isa::{Operand, Special, Ty};

/// A register range `prefix[first:last]`, or `prefix<n>` for one register.
pub(crate) fn range(out: &mut String, prefix: &str, first: u32, count: u32) {
    if count <= 1 {
        let _ = write!(out, "{prefix}{first}");
    } else {
        let _ = write!(out, "{prefix}[{first}:{}]", first + count - 1);
    }
}

/// A named 64-bit special register pair (`vcc`, `exec`, ...) or one of its halves.
pub(crate) fn pair(out: &mut String, name: &str, half: u32, count: u32) {
    if count >= 2 && half == 0 {
        out.push_str(name);
    } else {
        let _ = write!(out, "{name}_{}", if half == 0 { "lo" } else { "hi" });
    }
}

/// Write a scalar register of `count` dwords.
pub fn sgpr(out: &mut String, n: u8, count: u32) {
    let n = u32::from(n);
    match n {
        0..=101 => range(out, "s", n, count),
        102 | 103 => pair(out, "flat_scratch", n - 102, count),
        104 | 105 => pair(out, "xnack_mask", n - 104, count),
        106 | 107 => pair(out, "vcc", n - 106, count),
        108..=123 => range(out, "ttmp", n - 108, count),
        124 => out.push_str("m0"),
        126 | 127 => pair(out, "exec", n - 126, count),
        _ => {
            let _ = write!(out, "<sreg{n}>");
        }
    }
}

/// Write a vector register (AGPRs are 256..=511) of `count` dwords.
pub fn vgpr(out: &mut String, n: u16, count: u32) {
    let n = u32::from(n);
    if n >= 256 {
        range(out, "a", n - 256, count);
    } else {
        range(out, "v", n, count);
    }
}

const F32_CONSTANTS: [(u32, &str); 9] = [
    (0x3f00_0000, "0.5"),
    (0xbf00_0000, "-0.5"),
    (0x3f80_0000, "1.0"),
    (0xbf80_0000, "-1.0"),
    (0x4000_0000, "2.0"),
    (0xc000_0000, "-2.0"),
    (0x4080_0000, "4.0"),
    (0xc080_0000, "-4.0"),
    (0x3e22_f983, "0.15915494"),
];

const F64_CONSTANTS: [(u64, &str); 9] = [
    (0x3fe0_0000_0000_0000, "0.5"),
    (0xbfe0_0000_0000_0000, "-0.5"),
    (0x3ff0_0000_0000_0000, "1.0"),
    (0xbff0_0000_0000_0000, "-1.0"),
    (0x4000_0000_0000_0000, "2.0"),
    (0xc000_0000_0000_0000, "-2.0"),
    (0x4010_0000_0000_0000, "4.0"),
    (0xc010_0000_0000_0000, "-4.0"),
    (0x3fc4_5f30_6dc9_c882, "0.15915494309189532"),
];

const F16_CONSTANTS: [(u16, &str); 9] = [
    (0x3800, "0.5"),
    (0xb800, "-0.5"),
    (0x3c00, "1.0"),
    (0xbc00, "-1.0"),
    (0x4000, "2.0"),
    (0xc000, "-2.0"),
    (0x4400, "4.0"),
    (0xc400, "-4.0"),
    (0x3118, "0.15915494"),
];

/// A 32-bit immediate: small integers in decimal, inline float values by name, else hex.
pub fn imm32(out: &mut String, v: u32) {
    let s = v as i32;
    if (-16..=64).contains(&s) {
        let _ = write!(out, "{s}");
    } else if let Some((_, t)) = F32_CONSTANTS.iter().find(|(b, _)| *b == v) {
        out.push_str(t);
    } else {
        let _ = write!(out, "0x{v:x}");
    }
}

/// A 16-bit immediate (the low half of `v`).
pub fn imm16(out: &mut String, v: u32) {
    let h = v as u16;
    let s = h as i16;
    if (-16..=64).contains(&s) {
        let _ = write!(out, "{s}");
    } else if let Some((_, t)) = F16_CONSTANTS.iter().find(|(b, _)| *b == h) {
        out.push_str(t);
    } else {
        let _ = write!(out, "0x{h:x}");
    }
}

/// A 16-bit integer operand's value: small integers in decimal, else the low half in hex.
/// LLVM 19 decodes a float inline constant in such a slot as the half-precision pattern
/// (`1.0` prints as `0x3c00`), while the value the hardware uses (and the simulator
/// executes) is the low half of the single-precision pattern (see decode/operand.rs).
fn imm_b16(out: &mut String, v: u32, inline: bool) {
    let s = v as i32;
    let f32_constant = F32_CONSTANTS.iter().position(|(b, _)| *b == v);
    if (-16..=64).contains(&s) {
        let _ = write!(out, "{s}");
    } else if let (Some(i), true) = (f32_constant, inline) {
        let _ = write!(out, "0x{:x}", F16_CONSTANTS[i].0);
    } else if let Some(i) = f32_constant {
        // A literal whose 32 bits are a single-precision constant prints by name.
        out.push_str(F32_CONSTANTS[i].1);
    } else {
        let _ = write!(out, "0x{:x}", v as u16);
    }
}

/// A literal of a packed-half operand (VOP2 v_pk_fmac_f16, v_dot2c_f32_f16): all 32 bits
/// are the value; a half constant with a zero high half prints by name.
fn imm_pk16(out: &mut String, v: u32) {
    let s = v as i32;
    if (-16..=64).contains(&s) {
        let _ = write!(out, "{s}");
    } else if let Some((_, t)) = F16_CONSTANTS.iter().find(|(b, _)| u32::from(*b) == v) {
        out.push_str(t);
    } else {
        let _ = write!(out, "0x{v:x}");
    }
}

/// A 64-bit immediate: small integers in decimal, inline double values by name, else the
/// `shown` dword in hex.
fn imm64(out: &mut String, v: u64, shown: u64) {
    let s = v as i64;
    if (-16..=64).contains(&s) {
        let _ = write!(out, "{s}");
    } else if let Some((_, t)) = F64_CONSTANTS.iter().find(|(b, _)| *b == v) {
        out.push_str(t);
    } else {
        let _ = write!(out, "0x{shown:x}");
    }
}

/// Write a source or destination operand of type `ty`. LLVM prints a literal whose value an
/// inline constant could give like that constant.
pub fn operand(out: &mut String, op: Operand, ty: Ty) {
    let count = ty.dwords().max(1);
    match op {
        Operand::None => out.push_str("off"),
        Operand::Sgpr(n) => sgpr(out, n, count),
        Operand::Vgpr(n) => vgpr(out, n, count),
        Operand::Inline(v) => match ty {
            Ty::PkF32 => imm32(out, v as u32),
            Ty::F16 | Ty::PkF16 => imm16(out, v as u32),
            Ty::B16 => imm_b16(out, v as u32, true),
            // (Wider slots: the accumulator constant of a matrix op, a double when it does not
            // fit 32 bits.)
            _ if count == 2 || (count > 2 && v >> 32 != 0) => imm64(out, v, v),
            _ => imm32(out, v as u32),
        },
        Operand::Literal { raw, value } => match ty {
            Ty::F16 => imm16(out, raw),
            Ty::PkF16 => imm_pk16(out, raw),
            Ty::B16 => imm_b16(out, raw, false),
            _ if count == 2 && ty != Ty::PkF32 => imm64(out, value, u64::from(raw)),
            _ => imm32(out, raw),
        },
        Operand::Special(s) => out.push_str(match s {
            Special::SharedBase => "src_shared_base",
            Special::SharedLimit => "src_shared_limit",
            Special::PrivateBase => "src_private_base",
            Special::PrivateLimit => "src_private_limit",
            Special::PopsExitingWaveId => "src_pops_exiting_wave_id",
            Special::Vccz => "src_vccz",
            Special::Execz => "src_execz",
            Special::Scc => "src_scc",
            Special::LdsDirect => "src_lds_direct",
        }),
    }
}

/// Write a source with VOP3/DPP/SDWA float modifiers: `-x`, `|x|`, `-|x|`, and `neg(c)` for
/// a negated constant without `abs`.
pub fn modified(out: &mut String, op: Operand, ty: Ty, neg: bool, abs: bool) {
    modified_with(out, op, ty, neg, abs, operand);
}

/// [`modified`] with another generation's operand printer.
pub fn modified_with(
    out: &mut String,
    op: Operand,
    ty: Ty,
    neg: bool,
    abs: bool,
    print: fn(&mut String, Operand, Ty),
) {
    if neg && !abs && matches!(op, Operand::Inline(_) | Operand::Literal { .. }) {
        out.push_str("neg(");
        print(out, op, ty);
        out.push(')');
        return;
    }
    if neg {
        out.push('-');
    }
    if abs {
        out.push('|');
    }
    print(out, op, ty);
    if abs {
        out.push('|');
    }
}
