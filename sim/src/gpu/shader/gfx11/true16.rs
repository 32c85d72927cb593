//! GFX11's 16-bit VALU operands as the GFX9 interpreter runs them.
//!
//! On GFX11 a 16-bit operand names one half of a 32-bit VGPR, and the half is part of the
//! encoding (LLVM's "true16" syntax prints it: `v1.l`, `v1.h`):
//! - in the 32-bit encodings (VOP1, VOP2, VOPC and their DPP forms) bit 7 of a 16-bit
//!   operand's VGPR field selects the high half, so `v_mov_b16_e32 v7.h, 0` is field 135 and
//!   only v0..v127 are reachable there (LLVM's fake16 mode keeps 16-bit operands in
//!   `VGPR_32_Lo128` for that reason);
//! - in VOP3, op_sel bits 0..2 select the high half of sources 0..2 and bit 3 that of the
//!   destination.
//!
//! And a 16-bit result is written to its half only: the other half keeps its value (LLVM,
//! `GCNSubtarget::zeroesHigh16BitsOfDest`: "On gfx10, all 16-bit instructions preserve the
//! high bits"), where GFX9 zeroes bits 31:16 of most 16-bit results.
//!
//! So an instruction with 16-bit operands becomes up to three steps at one PC: each source
//! read from a high half is first shifted into the low half of a scratch row
//! ([`SRC_TEMP`]), the GFX9 operation then computes into the low half of [`DST_TEMP`], and a
//! `v_perm_b32` merges those 16 bits into the destination's half, keeping the other. Every
//! step runs under the same EXEC, so inactive lanes keep their registers; with DPP, which can
//! leave active lanes unwritten, [`DST_TEMP`] starts as the destination's half. Not handled:
//! a DPP source in a high half read with fetch-inactive (FI) set sees the scratch row's stale
//! value in inactive source lanes.
//!
//! The 16-bit operations GFX9 does not have run on a twin: the bitwise ones and the move on
//! their 32-bit forms (the low 16 bits of the result depend only on the low 16 bits of the
//! sources), `v_fmac_f16`/`v_fmamk_f16`/`v_fmaak_f16` as `v_fma_f16`, and the widening
//! `v_cvt_u32_u16`/`v_cvt_i32_i16` as 16-bit bitfield extracts.

use crate::gpu::shader::decode::DecodeError;
use crate::gpu::shader::gfx11::isa::{self as g11, Encoding as E11};
use crate::gpu::shader::isa::{Encoding, Extra, Inst, Op, Operand, Ty};

/// Rows of the unified vector file no GFX11 instruction names (GFX9's AGPRs; GFX11 has none)
/// where the high halves of sources 0, 1 and 2 are moved to the low half.
const SRC_TEMP: [u16; 3] = [508, 509, 510];
/// The row the operation writes before its result is merged into the destination's half.
const DST_TEMP: u16 = 507;
/// `v_perm_b32` selector: bytes 1:0 of source 1, then bytes 3:2 of source 0.
const PERM_LO_OF_S1_HI_OF_S0: u32 = 0x0706_0100;
/// `v_perm_b32` selector: bytes 1:0 of source 1, then bytes 1:0 of source 0.
const PERM_LO_OF_S1_LO_OF_S0: u32 = 0x0504_0100;

/// GFX11 16-bit operations without a same-named GFX9 opcode, and the GFX9 opcode that
/// computes their low 16 bits (the operands are rearranged by [`halves`] where needed).
const TWINS: &[(&str, Op)] = &[
    ("v_mov_b16", Op::VMovB32),
    ("v_not_b16", Op::VNotB32),
    ("v_and_b16", Op::VAndB32),
    ("v_or_b16", Op::VOrB32),
    ("v_xor_b16", Op::VXorB32),
    ("v_cndmask_b16", Op::VCndmaskB32),
    ("v_add_nc_i16", Op::VAddI16),
    ("v_sub_nc_i16", Op::VSubI16),
    ("v_cmp_t_f16", Op::VCmpTruF16),
    ("v_cmpx_t_f16", Op::VCmpxTruF16),
    ("v_fmac_f16", Op::VFmaF16),
    ("v_fmamk_f16", Op::VFmaF16),
    ("v_fmaak_f16", Op::VFmaF16),
    ("v_cvt_u32_u16", Op::VBfeU32),
    ("v_cvt_i32_i16", Op::VBfeI32),
];

/// The GFX9 opcode a GFX11 16-bit operation without a same-named twin runs on.
pub(super) fn twin(gfx11_name: &str) -> Option<Op> {
    TWINS
        .iter()
        .find(|(name, _)| *name == gfx11_name)
        .map(|&(_, op)| op)
}

fn is_half(ty: Ty) -> bool {
    matches!(ty, Ty::B16 | Ty::F16)
}

/// A 16-bit operand's register and whether it is the high half.
fn half_of(op: Operand, e32: bool, op_sel_bit: bool) -> (Operand, bool) {
    match op {
        Operand::Vgpr(r) if e32 => (Operand::Vgpr(r & 0x7f), r & 0x80 != 0),
        // op_sel on an SGPR picks its high half too; on a constant it is taken to select
        // the constant itself (not checked against hardware; LLVM does not emit it).
        Operand::Inline(_) | Operand::Literal { .. } => (op, false),
        _ => (op, op_sel_bit),
    }
}

fn literal(value: u32) -> Operand {
    Operand::Literal {
        raw: value,
        value: u64::from(value),
    }
}

/// `inst` (the GFX9 instruction lowered from `g`) with GFX11's 16-bit operand halves and
/// destination rule applied, as the first instruction to run and those that follow it at the
/// same PC: the instruction alone when it has no 16-bit operand, else the steps described in
/// the module documentation.
pub(super) fn halves(g: &g11::Inst, mut inst: Inst) -> Result<(Inst, Vec<Inst>), DecodeError> {
    let name = g.op.name();
    if !matches!(g.enc, E11::Vop1 | E11::Vop2 | E11::Vopc | E11::Vop3) {
        return Ok(single(inst));
    }
    let mut ty = g.row.ty;
    if name == "v_cndmask_b16" {
        // Source 2 is the lane mask, not a half.
        ty[3] = Ty::N;
    }
    if !ty.iter().copied().any(is_half) {
        return Ok(single(inst));
    }
    let e32 = g.enc != E11::Vop3;
    let twin32 = matches!(
        inst.op,
        Op::VMovB32 | Op::VNotB32 | Op::VAndB32 | Op::VOrB32 | Op::VXorB32 | Op::VCndmaskB32
    );
    if twin32 && (g.mods.neg | g.mods.abs) & 3 != 0 {
        // neg/abs of a 16-bit source would land on bit 31 of the 32-bit twin.
        return Err(DecodeError::NotSimulated(name));
    }
    // The destination's register and half (a VGPR destination of 16 bits only).
    let dst = match (inst.dst, is_half(ty[0])) {
        (Operand::Vgpr(_), true) => Some(half_of(inst.dst, e32, g.mods.op_sel & 8 != 0)),
        _ => None,
    };
    reshape(g, &mut inst, &mut ty, dst)?;
    let op_sel = inst.mods.op_sel;
    let mut steps = Vec::new();
    for i in 0..3 {
        if !is_half(ty[i + 1]) {
            continue;
        }
        let (reg, hi) = half_of(inst.src[i], e32, op_sel & (1 << i) != 0);
        inst.mods.op_sel &= !(1 << i);
        inst.src[i] = reg;
        if hi {
            let mut shift = Inst::new(Op::VLshrrevB32, Encoding::Vop3, g.dwords);
            shift.dst = Operand::Vgpr(SRC_TEMP[i]);
            shift.src = [Operand::Inline(16), reg, Operand::None];
            steps.push(shift);
            inst.src[i] = Operand::Vgpr(SRC_TEMP[i]);
        }
    }
    if let (Some((reg, hi)), Extra::Dpp(_)) = (dst, inst.extra) {
        // DPP leaves lanes unwritten (row/bank masks, an invalid source without
        // bound_ctrl) that the merge below still writes: they must merge their own half back.
        let mut keep = Inst::new(Op::VLshrrevB32, Encoding::Vop3, g.dwords);
        keep.dst = Operand::Vgpr(DST_TEMP);
        keep.src = [Operand::Inline(if hi { 16 } else { 0 }), reg, Operand::None];
        steps.push(keep);
    }
    let merge = dst.map(|(reg, hi)| {
        inst.mods.op_sel &= !8;
        inst.dst = Operand::Vgpr(DST_TEMP);
        let mut perm = Inst::new(Op::VPermB32, Encoding::Vop3, g.dwords);
        perm.dst = reg;
        perm.src = if hi {
            [
                Operand::Vgpr(DST_TEMP),
                reg,
                literal(PERM_LO_OF_S1_LO_OF_S0),
            ]
        } else {
            [
                reg,
                Operand::Vgpr(DST_TEMP),
                literal(PERM_LO_OF_S1_HI_OF_S0),
            ]
        };
        perm
    });
    steps.push(inst);
    steps.extend(merge);
    let mut steps = steps.into_iter();
    let first = steps.next().ok_or(DecodeError::NotSimulated(name))?;
    Ok((first, steps.collect()))
}

/// The operand changes of the twins that are not the same operation on other widths:
/// accumulating and constant forms of FMA become `v_fma_f16` with three sources, the
/// widening conversions bitfield extracts of 16 bits.
fn reshape(
    g: &g11::Inst,
    inst: &mut Inst,
    ty: &mut [Ty; 4],
    dst: Option<(Operand, bool)>,
) -> Result<(), DecodeError> {
    let name = g.op.name();
    let k = || Operand::Literal {
        raw: g.imm,
        value: u64::from(g.imm & 0xffff),
    };
    match name {
        "v_fmac_f16" => {
            // The accumulator is the destination's half, read as source 2.
            let (reg, hi) = dst.ok_or(DecodeError::NotSimulated(name))?;
            inst.src[2] = reg;
            ty[3] = Ty::F16;
            if hi {
                // Read as a high half below: in e32 the register field carries it, in VOP3
                // op_sel bit 2 (bit 3 names the same half of the destination).
                if g.enc == E11::Vop3 {
                    inst.mods.op_sel |= 4;
                } else if let Operand::Vgpr(r) = reg {
                    inst.src[2] = Operand::Vgpr(r | 0x80);
                }
            }
        }
        // D = S0 * K + S1.
        "v_fmamk_f16" => {
            inst.src = [inst.src[0], k(), inst.src[1]];
            *ty = [ty[0], ty[1], Ty::N, ty[2]];
        }
        // D = S0 * S1 + K.
        "v_fmaak_f16" => inst.src[2] = k(),
        "v_cvt_u32_u16" | "v_cvt_i32_i16" => {
            inst.src[1] = Operand::Inline(0);
            inst.src[2] = Operand::Inline(16);
        }
        _ => return Ok(()),
    }
    if inst.enc != Encoding::Dpp {
        inst.enc = Encoding::Vop3;
    }
    if matches!(inst.extra, Extra::Imm(_)) {
        inst.extra = Extra::None;
    }
    Ok(())
}

fn single(inst: Inst) -> (Inst, Vec<Inst>) {
    (inst, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_twin_is_a_gfx11_opcode_without_a_same_named_gfx9_one() {
        for (name, _) in TWINS {
            assert!(
                g11::Op::ALL.iter().any(|op| op.name() == *name),
                "{name} is not a GFX11 mnemonic"
            );
            assert!(
                Op::ALL.iter().all(|op| op.name() != *name),
                "{name} has a GFX9 opcode of its own name"
            );
        }
    }

    #[test]
    fn an_e32_field_with_bit_7_names_the_high_half() {
        assert_eq!(
            half_of(Operand::Vgpr(135), true, false),
            (Operand::Vgpr(7), true)
        );
        assert_eq!(
            half_of(Operand::Vgpr(7), true, false),
            (Operand::Vgpr(7), false)
        );
        // VOP3 reaches every VGPR; op_sel picks the half.
        assert_eq!(
            half_of(Operand::Vgpr(135), false, true),
            (Operand::Vgpr(135), true)
        );
    }
}
