//! VOP1, VOP2, VOPC, VOP3, VOP3P, VOPD and VINTERP text (wave32: VCC prints as `vcc_lo`).

use std::fmt::Write;

use super::operand::{half, modified, modified_vgpr_only, operand};
use crate::gpu::shader::disasm::Operands;
use crate::gpu::shader::disasm::vector::{common_dpp_ctrl, dpp_masks};
use crate::gpu::shader::gfx11::isa::{Dpp, Encoding, Inst, Op, Row, RowFlags};
use crate::gpu::shader::isa::{Operand, Ty};

/// VCC's low half, as wave32 code names it.
const VCC_LO: Operand = Operand::Sgpr(106);

/// Write a vector ALU instruction.
pub fn write(out: &mut String, inst: &Inst) {
    match inst.enc {
        Encoding::Vop3p => vop3p(out, inst),
        Encoding::Vopd => vopd(out, inst),
        Encoding::Vinterp => vinterp(out, inst),
        _ => vop(out, inst),
    }
}

/// The mnemonic with its encoding suffix.
fn mnemonic(out: &mut String, inst: &Inst) {
    out.push_str(inst.op.name());
    let suffixed = inst.row.flags.has(RowFlags::SUFFIX);
    let lo128 = inst.row.flags.has(RowFlags::LO128_SRC0);
    match (inst.enc, inst.dpp.is_some()) {
        (Encoding::Vop3, true) => out.push_str("_e64_dpp"),
        // LLVM 19 names the DPP8 form of its "fake16" compares without the suffix.
        (Encoding::Vopc, true) if lo128 && matches!(inst.dpp, Some(Dpp::Dpp8 { .. })) => {}
        (_, true) => out.push_str("_dpp"),
        (Encoding::Vop3, false) if suffixed => out.push_str("_e64"),
        (_, false) if suffixed => out.push_str("_e32"),
        _ => {}
    }
}

/// VOP1, VOP2, VOPC and VOP3 (with their DPP forms).
fn vop(out: &mut String, inst: &Inst) {
    mnemonic(out, inst);
    let ty = inst.row.ty;
    let name = inst.op.name();
    let e32 = inst.enc != Encoding::Vop3;
    let carry = name.contains("_co_ci_");
    let mut ops = Operands::new(out);
    if inst.enc == Encoding::Vopc && !name.starts_with("v_cmpx") {
        operand(ops.next(), VCC_LO, Ty::B32);
    }
    let true16 = inst.row.flags.has(RowFlags::TRUE16) && inst.enc != Encoding::Vop3;
    let print = if true16 { half } else { operand };
    if ty[0] != Ty::N && inst.enc != Encoding::Vopc {
        print(ops.next(), inst.dst, ty[0]);
    }
    if inst.row.flags.has(RowFlags::SDST) && !e32 {
        operand(ops.next(), inst.sdst, Ty::B32);
    } else if e32 && carry {
        operand(ops.next(), VCC_LO, Ty::B32);
    }
    for i in 0..3 {
        if ty[i + 1] == Ty::N {
            continue;
        }
        if inst.row.flags.has(RowFlags::K) && i == 1 && inst.op.name().contains("fmamk") {
            let _ = write!(ops.next(), "0x{:x}", inst.imm);
        }
        let flags = inst.row.flags;
        let neg = inst.mods.neg >> i & 1 != 0 && !flags.has(RowFlags::HIDDEN_NEG);
        let abs = inst.mods.abs >> i & 1 != 0 && !flags.has(RowFlags::HIDDEN_ABS);
        let o = ops.next();
        if true16 {
            half(o, inst.src[i], ty[i + 1]);
        } else {
            modified(o, inst.src[i], ty[i + 1], neg, abs);
        }
        lo128_note(o, inst, i);
    }
    if inst.row.flags.has(RowFlags::K) && inst.op.name().contains("fmaak") {
        let _ = write!(ops.next(), "0x{:x}", inst.imm);
    }
    if e32 && inst.row.flags.has(RowFlags::VCC) && inst.enc == Encoding::Vop2 {
        operand(ops.next(), VCC_LO, Ty::B32);
    }
    if inst.enc == Encoding::Vop3 {
        vop3_modifiers(out, inst);
    }
    if let Some(dpp) = inst.dpp {
        dpp_text(out, dpp);
    }
}

/// LLVM 19's note after a source it reads through a narrower register class: a VGPR at v128
/// or above in a Lo128 slot ([`RowFlags::LO128_SRC0`]; the 32-bit encodings of its "fake16"
/// instructions and their DPP8 forms, not the DPP16 ones), a scalar or a constant where only a VGPR may
/// be ([`RowFlags::VGPR_SRC0`]).
fn lo128_note(out: &mut String, inst: &Inst, slot: usize) {
    let dpp8 = matches!(inst.dpp, Some(Dpp::Dpp8 { .. }));
    let (flag, class) = match slot {
        0 if dpp8 => (RowFlags::LO128_SRC0, "VGPR_32_Lo128"),
        0 => (RowFlags::LO128_SRC0, "VS_32_Lo128"),
        1 => (RowFlags::LO128_SRC1, "VGPR_32_Lo128"),
        _ => return,
    };
    if slot == 0 && inst.row.flags.has(RowFlags::VGPR_SRC0) && inst.enc != Encoding::Vop3 {
        match inst.src[0] {
            Operand::Sgpr(_) => {
                out.push_str("/*Invalid register, operand has 'VGPR_32' register class*/");
            }
            Operand::Inline(_) => out.push_str("/*Invalid immediate*/"),
            _ => {}
        }
    }
    let high = matches!(inst.src[slot], Operand::Vgpr(n) if n >= 128);
    let dpp16 = matches!(inst.dpp, Some(Dpp::Dpp16 { .. }));
    if high && inst.row.flags.has(flag) && inst.enc != Encoding::Vop3 && !dpp16 {
        let _ = write!(
            out,
            "/*Invalid register, operand has '{class}' register class*/"
        );
    }
}

/// `op_sel:[...]`, `clamp` and the output modifier of a VOP3.
fn vop3_modifiers(out: &mut String, inst: &Inst) {
    let sources = inst.row.ty[1..].iter().filter(|t| **t != Ty::N).count();
    if inst.mods.op_sel != 0 && !inst.row.flags.has(RowFlags::HIDDEN_OPSEL) {
        out.push_str(" op_sel:[");
        for i in 0..sources {
            let _ = write!(out, "{},", inst.mods.op_sel >> i & 1);
        }
        let _ = write!(out, "{}]", inst.mods.op_sel >> 3 & 1);
    }
    if inst.mods.clamp {
        out.push_str(" clamp");
    }
    out.push_str(match inst.mods.omod {
        1 => " mul:2",
        2 => " mul:4",
        3 => " div:2",
        _ => "",
    });
}

/// ` name:[b0,b1,...]` over the first `n` bits of `bits`.
fn bit_list(out: &mut String, name: &str, bits: u8, n: usize) {
    let _ = write!(out, " {name}:[");
    for i in 0..n {
        let _ = write!(out, "{}{}", if i == 0 { "" } else { "," }, bits >> i & 1);
    }
    out.push(']');
}

/// VOP3P: sources without prefix modifiers; op_sel, op_sel_hi, neg_lo, neg_hi where they
/// differ from the default.
fn vop3p(out: &mut String, inst: &Inst) {
    out.push_str(inst.op.name());
    let ty = inst.row.ty;
    let mut ops = Operands::new(out);
    operand(ops.next(), inst.dst, ty[0]);
    let mix = inst.op.name().starts_with("v_fma_mix");
    let m = inst.mods;
    let mut n = 0;
    for i in 0..3 {
        if ty[i + 1] != Ty::N {
            if mix {
                // The mixed-precision FMAs take float modifiers: neg_lo is `-x`, neg_hi `|x|`.
                let (neg, abs) = (m.neg >> i & 1 != 0, m.neg_hi >> i & 1 != 0);
                modified(ops.next(), inst.src[i], ty[i + 1], neg, abs);
            } else {
                let o = ops.next();
                operand(o, inst.src[i], ty[i + 1]);
                if inst.op.name().starts_with("v_wmma") {
                    wmma_note(o, inst.src[i], ty[i + 1], i);
                }
            }
            n += 1;
        }
    }
    let all = (1u8 << n) - 1;
    if m.op_sel & all != 0 {
        bit_list(out, "op_sel", m.op_sel, n);
    }
    let hi_default = if mix { 0 } else { all };
    if m.op_sel_hi & all != hi_default && !inst.row.flags.has(RowFlags::HIDDEN_OPSEL_HI) {
        bit_list(out, "op_sel_hi", m.op_sel_hi, n);
    }
    if m.neg & all != 0 && !mix {
        bit_list(out, "neg_lo", m.neg, n);
    }
    if m.neg_hi & all != 0 && !mix {
        bit_list(out, "neg_hi", m.neg_hi, n);
    }
    if m.clamp {
        out.push_str(" clamp");
    }
}

/// LLVM's note after a WMMA matrix operand that is not a VGPR tuple: a scalar one (its
/// class is `VReg_<bits>`), a constant as A or B (C may be an inline constant).
fn wmma_note(out: &mut String, op: Operand, ty: Ty, slot: usize) {
    match op {
        Operand::Sgpr(_) => {
            let bits = ty.dwords() * 32;
            let _ = write!(
                out,
                "/*Invalid register, operand has 'VReg_{bits}' register class*/"
            );
        }
        Operand::Inline(_) if slot < 2 => out.push_str("/*Invalid immediate*/"),
        _ => {}
    }
}

/// One half of a VOPD: `v_dual_* dst, src0[, src1]`, with K where `fmaak`/`fmamk` take it.
fn dual_half(out: &mut String, row: &Row, dst: Operand, src: [Operand; 2], k: u32) {
    out.push_str(row.op.name());
    let mut ops = Operands::new(out);
    operand(ops.next(), dst, row.ty[0]);
    operand(ops.next(), src[0], row.ty[1]);
    if row.op == Op::VDualFmamkF32 {
        let _ = write!(ops.next(), "0x{k:x}");
    }
    if row.ty[2] != Ty::N {
        operand(ops.next(), src[1], row.ty[2]);
    }
    if row.op == Op::VDualFmaakF32 {
        let _ = write!(ops.next(), "0x{k:x}");
    }
}

/// VOPD: `X :: Y`.
fn vopd(out: &mut String, inst: &Inst) {
    dual_half(
        out,
        inst.row,
        inst.dst,
        [inst.src[0], inst.src[1]],
        inst.imm,
    );
    if let Some((row, dst, src)) = inst.dual {
        out.push_str(" :: ");
        dual_half(out, row, dst, src, inst.imm);
    }
}

/// VINTERP: three sources with negation, then `wait_exp`.
fn vinterp(out: &mut String, inst: &Inst) {
    out.push_str(inst.op.name());
    let ty = inst.row.ty;
    let mut ops = Operands::new(out);
    operand(ops.next(), inst.dst, ty[0]);
    for i in 0..3 {
        let neg = inst.mods.neg >> i & 1 != 0;
        modified_vgpr_only(ops.next(), inst.src[i], ty[i + 1], neg);
    }
    if inst.mods.clamp {
        out.push_str(" clamp");
    }
    if inst.mods.op_sel != 0 {
        bit_list(out, "op_sel", inst.mods.op_sel, 4);
    }
    let _ = write!(out, " wait_exp:{}", inst.imm);
}

/// The DPP control as LLVM names it.
fn dpp_text(out: &mut String, dpp: Dpp) {
    match dpp {
        Dpp::Dpp8 {
            selects,
            fetch_inactive,
        } => {
            out.push_str(" dpp8:[");
            for lane in 0..8 {
                let _ = write!(
                    out,
                    "{}{}",
                    if lane == 0 { "" } else { "," },
                    selects >> (3 * lane) & 7
                );
            }
            out.push(']');
            if fetch_inactive {
                out.push_str(" fi:1");
            }
        }
        Dpp::Dpp16 {
            control,
            fetch_inactive,
        } => {
            let c = u32::from(control.ctrl);
            out.push(' ');
            if !common_dpp_ctrl(out, c) {
                let _ = match c {
                    0x150..=0x15f => write!(out, "row_share:{}", c & 0xf),
                    0x160..=0x16f => write!(out, "row_xmask:{}", c & 0xf),
                    _ => write!(out, "/* invalid dpp_ctrl {c:#x} */"),
                };
            }
            dpp_masks(out, control);
            if fetch_inactive {
                out.push_str(" fi:1");
            }
        }
    }
}
