//! Operand text as LLVM's AMDGPU instruction printer writes it.

use std::fmt::Write;

use crate::shader::isa::{Operand, Special, Ty};

/// A register range `prefix[first:last]`, or `prefix<n>` for one register.
fn range(out: &mut String, prefix: &str, first: u32, count: u32) {
    if count <= 1 {
        let _ = write!(out, "{prefix}{first}");
    } else {
        let _ = write!(out, "{prefix}[{first}:{}]", first + count - 1);
    }
}

/// A named 64-bit special register pair (`vcc`, `exec`, ...) or one of its halves.
fn pair(out: &mut String, name: &str, half: u32, count: u32) {
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

/// Write a source or destination operand of type `ty`.
pub fn operand(out: &mut String, op: Operand, ty: Ty) {
    let count = ty.dwords().max(1);
    match op {
        Operand::None => out.push_str("off"),
        Operand::Sgpr(n) => sgpr(out, n, count),
        Operand::Vgpr(n) => vgpr(out, n, count),
        Operand::Inline(v) => {
            if ty == Ty::PkF32 {
                imm32(out, v as u32);
            } else if matches!(ty, Ty::F16 | Ty::PkF16) {
                imm16(out, v as u32);
            } else if count == 2 {
                let s = v as i64;
                if (-16..=64).contains(&s) {
                    let _ = write!(out, "{s}");
                } else if let Some((_, t)) = F64_CONSTANTS.iter().find(|(b, _)| *b == v) {
                    out.push_str(t);
                } else {
                    let _ = write!(out, "0x{v:x}");
                }
            } else {
                imm32(out, v as u32);
            }
        }
        Operand::Literal { raw, .. } => {
            if ty.is_16bit() {
                imm16(out, raw);
            } else if count == 2 {
                let _ = write!(out, "0x{raw:x}");
            } else {
                imm32(out, raw);
            }
        }
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

/// Write a source with VOP3/DPP/SDWA float modifiers: `-x`, `|x|`, `-|x|`.
pub fn modified(out: &mut String, op: Operand, ty: Ty, neg: bool, abs: bool) {
    if neg {
        out.push('-');
    }
    if abs {
        out.push('|');
    }
    operand(out, op, ty);
    if abs {
        out.push('|');
    }
}
