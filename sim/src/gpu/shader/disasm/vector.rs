//! Vector ALU instructions: encoding suffixes, modifiers, DPP and SDWA controls.

use std::fmt::Write;

use super::Operands;
use super::operand::{modified, operand};
use crate::gpu::shader::decode::{has_e64_form, sdwa_dst_sel_fixed};
use crate::gpu::shader::isa::{Encoding, Extra, Family, Inst, Op, SdwaSel, Ty};
use crate::gpu::target::GfxTarget;

fn suffix(inst: &Inst, target: GfxTarget) -> &'static str {
    let family = inst.op.info().family;
    match inst.enc {
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc if has_e64_form(inst.op, target) => "_e32",
        // LLVM names gfx90a's VOP2 v_pk_fmac_f16 with the suffix though it has no VOP3 form.
        Encoding::Vop2 if inst.op == Op::VPkFmacF16 => "_e32",
        Encoding::Vop3 if matches!(family, Family::Vop1 | Family::Vop2 | Family::Vopc) => "_e64",
        Encoding::Dpp => "_dpp",
        Encoding::Sdwa => "_sdwa",
        _ => "",
    }
}

/// Number of sources the opcode has (the `sig` slots in use).
fn source_count(inst: &Inst) -> usize {
    inst.op.info().sig[2..]
        .iter()
        .take_while(|t| **t != Ty::N)
        .count()
}

pub fn write(out: &mut String, inst: &Inst, target: GfxTarget) {
    let info = inst.op.info();
    out.push_str(info.name);
    out.push_str(suffix(inst, target));
    if matches!(inst.op, Op::VNop | Op::VClrexcp) {
        return;
    }
    let sig = info.sig;
    let dst_ty = if info.family == Family::Vopc {
        Ty::B64
    } else {
        sig[0]
    };
    let nsrc = source_count(inst);
    let mods = inst.mods;
    let mut ops = Operands::new(out);
    if inst.dst.is_some() {
        operand(ops.next(), inst.dst, dst_ty);
    }
    if inst.sdst.is_some() {
        operand(ops.next(), inst.sdst, Ty::B64);
    }
    let mix = matches!(
        inst.op,
        Op::VFmaMixF32 | Op::VFmaMixloF16 | Op::VFmaMixhiF16
    );
    let sdwa = match inst.extra {
        Extra::Sdwa(s) => Some(s),
        _ => None,
    };
    for i in 0..nsrc {
        let src = inst.src[i];
        if !src.is_some() {
            continue;
        }
        // v_madmk: K sits between src0 and src1.
        if i == 1 && matches!(inst.op, Op::VMadmkF32 | Op::VFmamkF32 | Op::VMadmkF16) {
            let _ = write!(ops.next(), "0x{:x}", inst.imm());
        }
        let o = ops.next();
        let neg = mods.neg & (1 << i) != 0 && (inst.enc != Encoding::Vop3p || mix);
        let abs = mods.abs & (1 << i) != 0;
        let sext = match (sdwa, i) {
            (Some(s), 0) => s.src0_sext,
            (Some(s), 1) => s.src1_sext,
            _ => mods.sext & (1 << i) != 0,
        };
        if sext {
            o.push_str("sext(");
        }
        modified(o, src, sig[2 + i], neg, abs);
        if sext {
            o.push(')');
        }
    }
    if matches!(inst.op, Op::VMadakF32 | Op::VFmaakF32 | Op::VMadakF16) {
        let _ = write!(ops.next(), "0x{:x}", inst.imm());
    }
    match inst.enc {
        Encoding::Vop3 => {
            if mods.op_sel != 0 {
                vop3_op_sel(out, mods.op_sel, nsrc);
            }
            clamp_omod(out, mods.clamp, mods.omod);
        }
        Encoding::Vop3p if matches!(inst.extra, Extra::Mai { .. }) => {
            if let Extra::Mai { cbsz, abid, blgp } = inst.extra {
                if cbsz != 0 {
                    let _ = write!(out, " cbsz:{cbsz}");
                }
                if abid != 0 {
                    let _ = write!(out, " abid:{abid}");
                }
                let f64_neg = target == GfxTarget::Gfx942 && sig[2] == Ty::F64;
                if blgp != 0 && f64_neg {
                    list(out, "neg", blgp, 3);
                } else if blgp != 0 {
                    let _ = write!(out, " blgp:{blgp}");
                }
            }
        }
        Encoding::Vop3p if mix => {
            // Mixed precision: NEG/ABS print as source modifiers; OP_SEL_HI (which sources
            // are halves) defaults to none.
            if mods.op_sel & 7 != 0 {
                list(out, "op_sel", mods.op_sel, 3);
            }
            if mods.op_sel_hi & 7 != 0 {
                list(out, "op_sel_hi", mods.op_sel_hi, 3);
            }
            if mods.clamp {
                out.push_str(" clamp");
            }
        }
        Encoding::Vop3p => {
            let n = nsrc.max(1);
            if mods.op_sel & mask(n) != 0 {
                list(out, "op_sel", mods.op_sel, n);
            }
            if mods.op_sel_hi & mask(n) != mask(n) {
                list(out, "op_sel_hi", mods.op_sel_hi, n);
            }
            if mods.neg & mask(n) != 0 {
                list(out, "neg_lo", mods.neg, n);
            }
            if mods.neg_hi & mask(n) != 0 {
                list(out, "neg_hi", mods.neg_hi, n);
            }
            if mods.clamp {
                out.push_str(" clamp");
            }
        }
        Encoding::Dpp => {
            if let Extra::Dpp(d) = inst.extra {
                out.push(' ');
                dpp_ctrl(out, d.ctrl);
                dpp_masks(out, d);
            }
        }
        Encoding::Sdwa => {
            if let Some(s) = sdwa {
                clamp_omod(out, mods.clamp, mods.omod);
                if info.family != Family::Vopc && !sdwa_dst_sel_fixed(inst.op) {
                    let _ = write!(
                        out,
                        " dst_sel:{} dst_unused:{}",
                        sel_name(s.dst_sel),
                        match s.dst_unused {
                            0 => "UNUSED_PAD",
                            1 => "UNUSED_SEXT",
                            _ => "UNUSED_PRESERVE",
                        }
                    );
                }
                let _ = write!(out, " src0_sel:{}", sel_name(s.src0_sel));
                if nsrc > 1 {
                    let _ = write!(out, " src1_sel:{}", sel_name(s.src1_sel));
                }
            }
        }
        _ => {}
    }
}

const fn mask(n: usize) -> u8 {
    ((1u32 << n) - 1) as u8
}

/// ` name:[b0,b1,...]` with `n` entries from the low bits of `bits`.
fn list(out: &mut String, name: &str, bits: u8, n: usize) {
    let _ = write!(out, " {name}:[");
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{}", (bits >> i) & 1);
    }
    out.push(']');
}

/// VOP3 ` op_sel:[src0,...,dst]`: the sources' bits, then the destination's (bit 3).
fn vop3_op_sel(out: &mut String, bits: u8, nsrc: usize) {
    out.push_str(" op_sel:[");
    for i in 0..nsrc {
        let _ = write!(out, "{},", (bits >> i) & 1);
    }
    let _ = write!(out, "{}]", (bits >> 3) & 1);
}

fn clamp_omod(out: &mut String, clamp: bool, omod: u8) {
    if clamp {
        out.push_str(" clamp");
    }
    match omod {
        1 => out.push_str(" mul:2"),
        2 => out.push_str(" mul:4"),
        3 => out.push_str(" div:2"),
        _ => {}
    }
}

fn sel_name(s: SdwaSel) -> &'static str {
    match s {
        SdwaSel::Byte0 => "BYTE_0",
        SdwaSel::Byte1 => "BYTE_1",
        SdwaSel::Byte2 => "BYTE_2",
        SdwaSel::Byte3 => "BYTE_3",
        SdwaSel::Word0 => "WORD_0",
        SdwaSel::Word1 => "WORD_1",
        SdwaSel::Dword => "DWORD",
    }
}

/// The DPP controls GFX9 and GFX11 share (quad permutes, row shifts and rotates, mirrors);
/// false for the others, which each generation names itself.
pub(crate) fn common_dpp_ctrl(out: &mut String, c: u32) -> bool {
    let _ = match c {
        0x000..=0x0ff => write!(
            out,
            "quad_perm:[{},{},{},{}]",
            c & 3,
            (c >> 2) & 3,
            (c >> 4) & 3,
            (c >> 6) & 3
        ),
        0x101..=0x10f => write!(out, "row_shl:{}", c & 0xf),
        0x111..=0x11f => write!(out, "row_shr:{}", c & 0xf),
        0x121..=0x12f => write!(out, "row_ror:{}", c & 0xf),
        0x140 => write!(out, "row_mirror"),
        0x141 => write!(out, "row_half_mirror"),
        _ => return false,
    };
    true
}

/// ` row_mask:.. bank_mask:..` and `bound_ctrl:1` after a DPP16 control.
pub(crate) fn dpp_masks(out: &mut String, d: crate::gpu::shader::isa::DppControl) {
    let _ = write!(
        out,
        " row_mask:0x{:x} bank_mask:0x{:x}",
        d.row_mask, d.bank_mask
    );
    if d.bound_ctrl {
        out.push_str(" bound_ctrl:1");
    }
}

fn dpp_ctrl(out: &mut String, ctrl: u16) {
    let c = u32::from(ctrl);
    if common_dpp_ctrl(out, c) {
        return;
    }
    let _ = match c {
        0x130 => write!(out, "wave_shl:1"),
        0x134 => write!(out, "wave_rol:1"),
        0x138 => write!(out, "wave_shr:1"),
        0x13c => write!(out, "wave_ror:1"),
        0x142 => write!(out, "row_bcast:15"),
        0x143 => write!(out, "row_bcast:31"),
        0x150..=0x15f => write!(out, "row_newbcast:{}", c & 0xf),
        _ => write!(out, "/* invalid dpp_ctrl {c:#x} */"),
    };
}
