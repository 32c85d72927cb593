//! VOP1, VOP2, VOPC (with their DPP16/DPP8 forms), VOP3 (and its DPP forms), VOP3P, VOPD and
//! VINTERP.

use super::operand::{DPP8, DPP8_FI, DPP16, Literal, sdst, vgpr, vgpr_tuple};
use super::{DecodeError, field, row};
use crate::gpu::shader::decode::word;
use crate::gpu::shader::gfx11::isa::{Dpp, Encoding, Inst, Row, RowFlags};
use crate::gpu::shader::gfx11::tables;
use crate::gpu::shader::isa::{DppControl, Operand, Ty};

/// If `src0` announces a DPP word at `words[index]`: the DPP form and the real source 0
/// (a VGPR), with DPP16's source modifiers put in `inst.mods`.
fn dpp(
    words: &[u32],
    index: usize,
    src0: u32,
    inst: &mut Inst,
) -> Result<Option<Operand>, DecodeError> {
    if !matches!(src0, DPP16 | DPP8 | DPP8_FI) {
        return Ok(None);
    }
    let refused = if src0 == DPP16 {
        RowFlags::NO_DPP16
    } else {
        RowFlags::NO_DPP8
    };
    if inst.enc != Encoding::Vop3 && inst.row.flags.has(refused) {
        return Err(DecodeError::Invalid {
            family: "DPP",
            what: "a DPP form LLVM does not have for this opcode",
        });
    }
    let d = word(words, index, "DPP")?;
    inst.dpp = Some(if src0 == DPP16 {
        if inst.enc != Encoding::Vop3 {
            inst.mods.neg |= (field(d, 20, 1) | field(d, 22, 1) << 1) as u8;
            inst.mods.abs |= (field(d, 21, 1) | field(d, 23, 1) << 1) as u8;
        }
        Dpp::Dpp16 {
            control: DppControl {
                ctrl: field(d, 8, 9) as u16,
                row_mask: field(d, 28, 4) as u8,
                bank_mask: field(d, 24, 4) as u8,
                bound_ctrl: field(d, 19, 1) != 0,
                fetch_inactive: field(d, 18, 1) != 0,
            },
            fetch_inactive: field(d, 18, 1) != 0,
        }
    } else {
        Dpp::Dpp8 {
            selects: d >> 8,
            fetch_inactive: src0 == DPP8_FI,
        }
    });
    inst.dwords = index as u8 + 1;
    Ok(Some(vgpr(field(d, 0, 8))))
}

/// The destination of a row: a scalar register where the row says so (its 8-bit field then
/// holds a 7-bit SGPR code: LLVM rejects 128 and up), else a VGPR.
fn dest(row: &Row, code: u32) -> Result<Operand, DecodeError> {
    if !row.flags.has(RowFlags::SGPR_DST) {
        return Ok(vgpr(code));
    }
    if code > 127 {
        return Err(DecodeError::Invalid {
            family: "VALU",
            what: "a scalar destination code above 127",
        });
    }
    Ok(sdst(code))
}

/// Source 0 of a 32-bit VALU encoding and the instruction's length.
fn src0_e32(words: &[u32], inst: &mut Inst, family: &'static str) -> Result<(), DecodeError> {
    let code = field(words[0], 0, 9);
    if let Some(src0) = dpp(words, 1, code, inst)? {
        inst.src[0] = src0;
        return Ok(());
    }
    let mut lit = Literal::at(words, 1, family);
    inst.src[0] = lit.source(code, inst.row.ty[1])?;
    if inst.row.flags.has(RowFlags::K) {
        inst.imm = word(words, 1, family)?;
        lit.used = true;
    }
    inst.dwords = lit.dwords();
    Ok(())
}

/// VOP1: `[31:25]=0x3f vdst[24:17] op[16:9] src0[8:0]`.
pub fn vop1(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let row = row(words, tables::VOP1, field(w, 9, 8), "VOP1")?;
    let mut inst = Inst::new(Encoding::Vop1, row);
    inst.dst = dest(row, field(w, 17, 8))?;
    src0_e32(words, &mut inst, "VOP1")?;
    Ok(inst)
}

/// VOP2: `[31]=0 op[30:25] vdst[24:17] vsrc1[16:9] src0[8:0]`.
pub fn vop2(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let row = row(words, tables::VOP2, field(w, 25, 6), "VOP2")?;
    let mut inst = Inst::new(Encoding::Vop2, row);
    inst.dst = vgpr(field(w, 17, 8));
    inst.src[1] = vgpr_tuple(field(w, 9, 8), row.ty[2], "VOP2")?;
    src0_e32(words, &mut inst, "VOP2")?;
    Ok(inst)
}

/// VOPC: `[31:25]=0x3e op[24:17] vsrc1[16:9] src0[8:0]`; the result goes to VCC (EXEC for
/// `v_cmpx`).
pub fn vopc(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let row = row(words, tables::VOPC, field(w, 17, 8), "VOPC")?;
    let mut inst = Inst::new(Encoding::Vopc, row);
    inst.src[1] = vgpr_tuple(field(w, 9, 8), row.ty[2], "VOPC")?;
    src0_e32(words, &mut inst, "VOPC")?;
    Ok(inst)
}

/// VOP3: `[31:26]=0x35 op[25:16] clamp[15] op_sel[14:11] abs[10:8] vdst[7:0]` (VOP3B:
/// `sdst[14:8]`), then `neg[31:29] omod[28:27] src2[26:18] src1[17:9] src0[8:0]`; a DPP word
/// or a literal may follow.
pub fn vop3(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let w1 = word(words, 1, "VOP3")?;
    let row = row(words, tables::VOP3, field(w, 16, 10), "VOP3")?;
    let mut inst = Inst::new(Encoding::Vop3, row);
    inst.dwords = 2;
    inst.dst = dest(row, field(w, 0, 8))?;
    if row.flags.has(RowFlags::SDST) {
        inst.sdst = sdst(field(w, 8, 7));
    } else {
        inst.mods.abs = field(w, 8, 3) as u8;
        inst.mods.op_sel = field(w, 11, 4) as u8;
    }
    inst.mods.clamp = field(w, 15, 1) != 0;
    inst.mods.omod = field(w1, 27, 2) as u8;
    inst.mods.neg = field(w1, 29, 3) as u8;
    let mut lit = Literal::at(words, 2, "VOP3");
    let code0 = field(w1, 0, 9);
    inst.src[0] = match dpp(words, 2, code0, &mut inst)? {
        Some(src0) => src0,
        None => lit.source(code0, row.ty[1])?,
    };
    for (i, lo) in [(1, 9), (2, 18)] {
        if row.ty[i + 1] != crate::gpu::shader::isa::Ty::N {
            inst.src[i] = lit.source(field(w1, lo, 9), row.ty[i + 1])?;
        }
    }
    if inst.dpp.is_none() {
        inst.dwords = lit.dwords();
    }
    Ok(inst)
}

/// VOP3P: `[31:24]=0xcc op[22:16] clamp[15] op_sel_hi2[14] op_sel[13:11] neg_hi[10:8]
/// vdst[7:0]`, then `neg[31:29] op_sel_hi[28:27] src2 src1 src0`.
pub fn vop3p(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let w1 = word(words, 1, "VOP3P")?;
    let row = row(words, tables::VOP3P, field(w, 16, 7), "VOP3P")?;
    let mut inst = Inst::new(Encoding::Vop3p, row);
    inst.dst = vgpr(field(w, 0, 8));
    inst.mods.neg_hi = field(w, 8, 3) as u8;
    inst.mods.op_sel = field(w, 11, 3) as u8;
    inst.mods.op_sel_hi = (field(w1, 27, 2) | field(w, 14, 1) << 2) as u8;
    inst.mods.clamp = field(w, 15, 1) != 0;
    inst.mods.neg = field(w1, 29, 3) as u8;
    let mut lit = Literal::at(words, 2, "VOP3P");
    for (i, lo) in [(0, 0), (1, 9), (2, 18)] {
        if row.ty[i + 1] != crate::gpu::shader::isa::Ty::N {
            inst.src[i] = lit.source(field(w1, lo, 9), row.ty[i + 1])?;
        }
    }
    inst.dwords = lit.dwords();
    Ok(inst)
}

/// VOPD: `[31:26]=0x32 opX[25:22] opY[21:17] vsrcX1[16:9] srcX0[8:0]`, then `vdstX[31:24]
/// vdstY[23:17] vsrcY1[16:9] srcY0[8:0]`; vdstY's low bit is the opposite of vdstX's. One
/// literal serves both halves (and is K of `fmaak`/`fmamk`).
pub fn vopd(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let w1 = word(words, 1, "VOPD")?;
    let x = row(words, tables::VOPDX, field(w, 22, 4), "VOPD X")?;
    let y = row(words, tables::VOPDY, field(w, 17, 5), "VOPD Y")?;
    // A half without source 1 (`v_dual_mov_b32`) leaves its vsrc1 field zero; LLVM rejects
    // the word otherwise (llvm-mc-19).
    if (x.ty[2] == Ty::N && field(w, 9, 8) != 0) || (y.ty[2] == Ty::N && field(w1, 9, 8) != 0) {
        return Err(DecodeError::Invalid {
            family: "VOPD",
            what: "vsrc1 of a half that has no source 1",
        });
    }
    let mut inst = Inst::new(Encoding::Vopd, x);
    let mut lit = Literal::at(words, 2, "VOPD");
    let vdst_x = field(w1, 24, 8);
    inst.dst = vgpr(vdst_x);
    inst.src[0] = lit.source(field(w, 0, 9), x.ty[1])?;
    inst.src[1] = vgpr(field(w, 9, 8));
    let y_dst = vgpr(field(w1, 17, 7) << 1 | ((vdst_x & 1) ^ 1));
    let y_src0 = lit.source(field(w1, 0, 9), y.ty[1])?;
    inst.dual = Some((y, y_dst, [y_src0, vgpr(field(w1, 9, 8))]));
    if x.flags.has(RowFlags::K) || y.flags.has(RowFlags::K) {
        inst.imm = word(words, 2, "VOPD")?;
        lit.used = true;
    }
    inst.dwords = lit.dwords();
    Ok(inst)
}

/// VINTERP: `[31:24]=0xcd op[22:16] clamp[15] op_sel[14:11] wait_exp[10:8] vdst[7:0]`, then
/// `neg[31:29] src2 src1 src0`.
pub fn vinterp(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let w1 = word(words, 1, "VINTERP")?;
    let row = row(words, tables::VINTERP, field(w, 16, 7), "VINTERP")?;
    let mut inst = Inst::new(Encoding::Vinterp, row);
    inst.dwords = 2;
    inst.dst = vgpr(field(w, 0, 8));
    inst.imm = field(w, 8, 3);
    inst.mods.op_sel = field(w, 11, 4) as u8;
    inst.mods.clamp = field(w, 15, 1) != 0;
    inst.mods.neg = field(w1, 29, 3) as u8;
    let mut lit = Literal::at(words, 2, "VINTERP");
    for (i, lo) in [(0, 0), (1, 9), (2, 18)] {
        inst.src[i] = lit.source(field(w1, lo, 9), row.ty[i + 1])?;
    }
    if lit.used {
        return Err(DecodeError::Invalid {
            family: "VINTERP",
            what: "a literal source",
        });
    }
    Ok(inst)
}
