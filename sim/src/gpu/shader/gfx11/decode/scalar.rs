//! SOP1, SOP2, SOPK, SOPC, SOPP and SMEM.

use super::operand::{Literal, NULL, scalar, sdst};
use super::{DecodeError, field, row};
use crate::gpu::shader::decode::word;
use crate::gpu::shader::gfx11::isa::{Encoding, Inst, Op};
use crate::gpu::shader::gfx11::tables;
use crate::gpu::shader::isa::{Operand, Ty};

/// SOP2: `[31:30]=2 op[29:23] sdst[22:16] ssrc1[15:8] ssrc0[7:0]`.
pub fn sop2(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let row = row(words, tables::SOP2, field(w, 23, 7), "SOP2")?;
    let mut inst = Inst::new(Encoding::Sop2, row);
    let mut lit = Literal::at(words, 1, "SOP2");
    inst.dst = scalar(field(w, 16, 7), row.ty[0], "SOP2")?;
    inst.src[0] = lit.source(field(w, 0, 8), row.ty[1])?;
    inst.src[1] = lit.source(field(w, 8, 8), row.ty[2])?;
    inst.dwords = lit.dwords();
    Ok(inst)
}

/// SOP1: `[31:23]=0x17d sdst[22:16] op[15:8] ssrc0[7:0]`.
pub fn sop1(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let row = row(words, tables::SOP1, field(w, 8, 8), "SOP1")?;
    let mut inst = Inst::new(Encoding::Sop1, row);
    let mut lit = Literal::at(words, 1, "SOP1");
    inst.dst = scalar(field(w, 16, 7), row.ty[0], "SOP1")?;
    // The raw field too: `s_sendmsg_rtn` takes a message id, not an operand, there.
    inst.imm = field(w, 0, 8);
    if !matches!(row.op, Op::SSendmsgRtnB32 | Op::SSendmsgRtnB64) {
        inst.src[0] = lit.source(inst.imm, row.ty[1])?;
    }
    inst.dwords = lit.dwords();
    Ok(inst)
}

/// SOPC: `[31:23]=0x17e op[22:16] ssrc1[15:8] ssrc0[7:0]`.
pub fn sopc(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let row = row(words, tables::SOPC, field(w, 16, 7), "SOPC")?;
    let mut inst = Inst::new(Encoding::Sopc, row);
    let mut lit = Literal::at(words, 1, "SOPC");
    inst.src[0] = lit.source(field(w, 0, 8), row.ty[1])?;
    inst.src[1] = lit.source(field(w, 8, 8), row.ty[2])?;
    inst.dwords = lit.dwords();
    Ok(inst)
}

/// SOPK: `[31:28]=0xb op[27:23] sdst[22:16] simm16[15:0]`; `s_setreg_imm32_b32` carries a
/// literal.
pub fn sopk(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let row = row(words, tables::SOPK, field(w, 23, 5), "SOPK")?;
    let mut inst = Inst::new(Encoding::Sopk, row);
    inst.dst = scalar(field(w, 16, 7), row.ty[0], "SOPK")?;
    inst.imm = field(w, 0, 16);
    if row.op == Op::SSetregImm32B32 {
        let raw = word(words, 1, "SOPK")?;
        inst.src[0] = Operand::Literal {
            raw,
            value: u64::from(raw),
        };
        inst.dwords = 2;
    }
    Ok(inst)
}

/// SOPP: `[31:23]=0x17f op[22:16] simm16[15:0]`.
pub fn sopp(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let row = row(words, tables::SOPP, field(w, 16, 7), "SOPP")?;
    let mut inst = Inst::new(Encoding::Sopp, row);
    inst.imm = field(w, 0, 16);
    Ok(inst)
}

/// SMEM: `[31:26]=0x3d op[25:18] glc[14] dlc[13] sdata[12:6] sbase[5:0]`, then
/// `soffset[31:25] offset[20:0]` (signed).
pub fn smem(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let w1 = word(words, 1, "SMEM")?;
    let row = row(words, tables::SMEM, field(w, 18, 8), "SMEM")?;
    let mut inst = Inst::new(Encoding::Smem, row);
    inst.dwords = 2;
    let buffer = row.op.name().starts_with("s_buffer") || row.op == Op::SAtcProbeBuffer;
    inst.dst = if matches!(row.op, Op::SAtcProbe | Op::SAtcProbeBuffer) {
        sdst(field(w, 6, 7))
    } else {
        scalar(field(w, 6, 7), row.ty[0], "SMEM")?
    };
    let base_ty = if buffer { Ty::B128 } else { Ty::B64 };
    inst.mem.sbase = scalar(field(w, 0, 6) << 1, base_ty, "SMEM")?;
    inst.mem.glc = field(w, 14, 1) != 0;
    inst.mem.dlc = field(w, 13, 1) != 0;
    inst.mem.offset = ((w1 << 11) as i32) >> 11;
    let soffset = field(w1, 25, 7);
    inst.mem.soffset = if soffset == NULL {
        Operand::None
    } else {
        sdst(soffset)
    };
    Ok(inst)
}
