//! Scalar encodings: SOP1, SOP2, SOPK, SOPC, SOPP and SMEM.

use super::operand::{LiteralSlot, align_sgpr, check_scalar_tuple, scalar_dest, scalar_source};
use super::{DecodeError, Luts, bits, lookup, word};
use crate::gpu::shader::isa::{CachePolicy, Encoding, Extra, Inst, Mem, Op, Operand, Ty};

fn finish(mut inst: Inst, literal_used: bool) -> Inst {
    inst.dwords = if literal_used { 2 } else { 1 };
    inst
}

/// SOP2: `10 op[29:23] sdst[22:16] ssrc1[15:8] ssrc0[7:0]`.
pub fn sop2(words: &[u32], luts: &Luts) -> Result<Inst, DecodeError> {
    const F: &str = "SOP2";
    let w = words[0];
    let op = lookup(&luts.sop2, bits(w, 23, 7), F)?;
    let sig = op.info().sig;
    let lit = LiteralSlot {
        index: 1,
        family: F,
    };
    let mut used = false;
    let mut inst = Inst::new(op, Encoding::Sop2, 1);
    if sig[0] != Ty::N {
        inst.dst = scalar_dest(bits(w, 16, 7), sig[0], F)?;
    }
    inst.src[0] = scalar_source(bits(w, 0, 8), sig[2], words, lit, &mut used)?;
    inst.src[1] = scalar_source(bits(w, 8, 8), sig[3], words, lit, &mut used)?;
    Ok(finish(inst, used))
}

/// SOP1: `101111101 sdst[22:16] op[15:8] ssrc0[7:0]`.
pub fn sop1(words: &[u32], luts: &Luts) -> Result<Inst, DecodeError> {
    const F: &str = "SOP1";
    let w = words[0];
    let op = lookup(&luts.sop1, bits(w, 8, 8), F)?;
    let sig = op.info().sig;
    let lit = LiteralSlot {
        index: 1,
        family: F,
    };
    let mut used = false;
    let mut inst = Inst::new(op, Encoding::Sop1, 1);
    if sig[0] != Ty::N {
        inst.dst = scalar_dest(bits(w, 16, 7), sig[0], F)?;
    }
    if sig[2] != Ty::N {
        inst.src[0] = scalar_source(bits(w, 0, 8), sig[2], words, lit, &mut used)?;
    }
    Ok(finish(inst, used))
}

/// SOPC: `101111110 op[22:16] ssrc1[15:8] ssrc0[7:0]`.
pub fn sopc(words: &[u32], luts: &Luts) -> Result<Inst, DecodeError> {
    const F: &str = "SOPC";
    let w = words[0];
    let op = lookup(&luts.sopc, bits(w, 16, 7), F)?;
    let sig = op.info().sig;
    let lit = LiteralSlot {
        index: 1,
        family: F,
    };
    let mut used = false;
    let mut inst = Inst::new(op, Encoding::Sopc, 1);
    inst.src[0] = scalar_source(bits(w, 0, 8), sig[2], words, lit, &mut used)?;
    if op == Op::SSetGprIdxOn {
        // SSRC1 is a 4-bit mode immediate, not an operand.
        inst.extra = Extra::Imm(bits(w, 8, 8));
    } else {
        inst.src[1] = scalar_source(bits(w, 8, 8), sig[3], words, lit, &mut used)?;
    }
    Ok(finish(inst, used))
}

/// SOPK: `1011 op[27:23] sdst[22:16] simm16[15:0]`; s_setreg_imm32_b32 carries a literal.
pub fn sopk(words: &[u32], luts: &Luts) -> Result<Inst, DecodeError> {
    const F: &str = "SOPK";
    let w = words[0];
    let op = lookup(&luts.sopk, bits(w, 23, 5), F)?;
    let sig = op.info().sig;
    let mut inst = Inst::new(op, Encoding::Sopk, 1);
    let sdst = bits(w, 16, 7);
    if sig[0] != Ty::N {
        inst.dst = scalar_dest(sdst, sig[0], F)?;
    }
    if sig[2] != Ty::N && op != Op::SSetregImm32B32 {
        inst.src[0] = scalar_dest(sdst, sig[2], F)?;
    }
    inst.extra = Extra::Imm(bits(w, 0, 16));
    if op == Op::SSetregImm32B32 {
        let lit = word(words, 1, F)?;
        inst.src[0] = Operand::Literal {
            raw: lit,
            value: u64::from(lit),
        };
        inst.dwords = 2;
    }
    Ok(inst)
}

/// SOPP: `101111111 op[22:16] simm16[15:0]`.
pub fn sopp(words: &[u32], luts: &Luts) -> Result<Inst, DecodeError> {
    const F: &str = "SOPP";
    let w = words[0];
    let op = lookup(&luts.sopp, bits(w, 16, 7), F)?;
    if bits(w, 0, 16) != 0 && sopp_without_operand(op) {
        return Err(DecodeError::Invalid {
            family: F,
            what: "SIMM16 of an instruction without an operand must be 0",
        });
    }
    let mut inst = Inst::new(op, Encoding::Sopp, 1);
    inst.extra = Extra::Imm(bits(w, 0, 16));
    Ok(inst)
}

/// SOPP opcodes that take no operand: their SIMM16 field is unused.
///
/// These instructions have no operand (LLVM's syntax has none); LLVM 19 encodes them
/// with SIMM16 fixed to 0 and refuses any other value (checked with llvm-mc-19, every SOPP
/// opcode with SIMM16 = 0x1234). Whether the hardware ignores the field is not documented
/// (unsure); the simulator refuses such words as LLVM does, so that a code generator writing
/// junk there is caught rather than silently run. (s_endpgm keeps an optional immediate.)
fn sopp_without_operand(op: Op) -> bool {
    matches!(
        op,
        Op::SWakeup
            | Op::SBarrier
            | Op::SIcacheInv
            | Op::STtracedata
            | Op::SEndpgmSaved
            | Op::SSetGprIdxOff
            | Op::SEndpgmOrderedPsDone
    )
}

/// SMEM (GFX9): `110000 op[25:18] imm[17] glc[16] nv[15] soe[14] sdata[12:6] sbase[5:0]`,
/// then `soffset[31:25] offset[20:0]`.
///
/// With IMM the offset is a signed 21-bit byte offset, plus the SGPR in SOFFSET when SOE;
/// without IMM it is the SGPR in SOFFSET when SOE, else the SGPR that OFFSET[6:0] names (as
/// LLVM decodes GFX9 SMEM; the IMM=0, SOE=1 form is not emitted by compilers).
pub fn smem(words: &[u32], luts: &Luts) -> Result<Inst, DecodeError> {
    const F: &str = "SMEM";
    let w = words[0];
    let w1 = word(words, 1, F)?;
    let op = lookup(&luts.smem, bits(w, 18, 8), F)?;
    let sig = op.info().sig;
    let mut inst = Inst::new(op, Encoding::Smem, 2);
    let imm = bits(w, 17, 1) != 0;
    let soe = bits(w, 14, 1) != 0;
    if imm && sig[2] == Ty::N {
        // No address, so no offset (s_dcache_inv, s_memtime, ...): LLVM 19 encodes these
        // with IMM fixed to 0 and refuses IMM = 1 (the other unused fields it ignores;
        // checked with llvm-mc-19). The simulator follows it: an offset for an instruction
        // that has none is an encoding error, not something to run.
        return Err(DecodeError::Invalid {
            family: F,
            what: "IMM set on an instruction without an address",
        });
    }
    let sdata = bits(w, 6, 7);
    if sig[0] != Ty::N {
        inst.dst = scalar_dest(sdata, sig[0], F)?;
    }
    if sig[2] != Ty::N {
        check_scalar_tuple(bits(w, 0, 6) * 2, sig[2], F)?;
        inst.src[0] = Operand::Sgpr(align_sgpr(bits(w, 0, 6) * 2, sig[2]));
    }
    let mut mem = Mem {
        cpol: CachePolicy {
            glc: bits(w, 16, 1) != 0,
            ..CachePolicy::default()
        },
        ..Mem::default()
    };
    mem.smem_imm = imm;
    if imm {
        mem.offset = ((w1 & 0x1f_ffff) << 11) as i32 >> 11;
    }
    if sig[2] == Ty::N {
        // No address operands (s_dcache_inv, s_memtime, ...): the offset fields are unused.
    } else if soe {
        mem.soffset_en = true;
        inst.src[1] = scalar_dest(bits(w1, 25, 7), Ty::B32, F)?;
    } else if !imm {
        mem.soffset_en = true;
        inst.src[1] = scalar_dest(bits(w1, 0, 7), Ty::B32, F)?;
    }
    if matches!(op, Op::SAtcProbe | Op::SAtcProbeBuffer) {
        // SDATA holds the probe's 7-bit immediate.
        mem.offset1 = sdata as u8;
    }
    inst.extra = Extra::Mem(mem);
    Ok(inst)
}
