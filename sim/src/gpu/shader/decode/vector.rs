//! Vector ALU encodings: VOP1, VOP2, VOPC (with their DPP and SDWA forms), VOP3A/B and VOP3P.

use super::operand::{DPP, LITERAL, LiteralSlot, SDWA, scalar_source, vector_source, vgpr};
use super::{DecodeError, Luts, bits, lookup, word};
use crate::gpu::shader::isa::{
    DppControl, Encoding, Extra, Family, Inst, Op, Operand, SdwaControl, SdwaSel, Ty,
};

const VCC: Operand = Operand::Sgpr(106);

/// Opcodes whose VOP2 form writes a carry to VCC (VOP3B form: to SDST).
fn writes_carry(op: Op) -> bool {
    matches!(
        op,
        Op::VAddCoU32
            | Op::VSubCoU32
            | Op::VSubrevCoU32
            | Op::VAddcCoU32
            | Op::VSubbCoU32
            | Op::VSubbrevCoU32
    )
}

/// Opcodes whose VOP2 form reads VCC as a third source.
fn reads_vcc(op: Op) -> bool {
    matches!(
        op,
        Op::VCndmaskB32 | Op::VAddcCoU32 | Op::VSubbCoU32 | Op::VSubbrevCoU32
    )
}

/// Opcodes in the VOP3B layout (SDST instead of ABS/OP_SEL).
fn is_vop3b(op: Op) -> bool {
    writes_carry(op)
        || matches!(
            op,
            Op::VDivScaleF32 | Op::VDivScaleF64 | Op::VMadU64U32 | Op::VMadI64I32
        )
}

/// VOP2 opcodes with a constant K dword: (K follows src0 in the syntax, i.e. madmk form).
fn k_constant(op: Op) -> Option<bool> {
    match op {
        Op::VMadmkF32 | Op::VFmamkF32 | Op::VMadmkF16 => Some(true),
        Op::VMadakF32 | Op::VFmaakF32 | Op::VMadakF16 => Some(false),
        _ => None,
    }
}

/// Bit `i` set when source `i` is a float (the sources that take NEG/ABS modifiers).
fn float_sources(op: Op, sig: [Ty; 5]) -> u8 {
    if op == Op::VCndmaskB32 {
        // A select: LLVM lets it negate or take the absolute value of its float sources.
        return 0b11;
    }
    if matches!(
        op,
        Op::VCvtF32Ubyte0 | Op::VCvtF32Ubyte1 | Op::VCvtF32Ubyte2 | Op::VCvtF32Ubyte3
    ) {
        // The source is an integer (a byte of it is converted), though the generated
        // signature types it f32: LLVM gives it no NEG/ABS in any encoding (llvm-mc-19
        // refuses them in e64, DPP and SDWA).
        return 0;
    }
    let mut m = 0;
    for i in 0..3 {
        if matches!(
            sig[2 + i],
            Ty::F16 | Ty::F32 | Ty::F64 | Ty::PkF16 | Ty::PkF32
        ) {
            m |= 1 << i;
        }
    }
    m
}

/// Whether a VOP3 opcode has OP_SEL: on GFX9 only the VOP3-only opcodes with 16-bit operands.
fn has_op_sel(op: Op, family: Family, sig: [Ty; 5]) -> bool {
    // The *_legacy_* opcodes are GFX8's encodings kept in GFX9, without OP_SEL.
    family == Family::Vop3
        && !op.name().contains("_legacy_")
        && sig.iter().any(|t| matches!(t, Ty::B16 | Ty::F16))
}

/// Decode SRC0 of a 32-bit VOP encoding, handling literal, DPP and SDWA forms. Returns the
/// encoding and the number of dwords.
fn vop_src0(
    inst: &mut Inst,
    words: &[u32],
    family: &'static str,
    sig: [Ty; 5],
) -> Result<(), DecodeError> {
    let code = bits(words[0], 0, 9);
    let lit = LiteralSlot { index: 1, family };
    let mut used = false;
    match code {
        DPP if !has_dpp_form(inst.op) => {
            return Err(DecodeError::Invalid {
                family,
                what: "DPP form of an instruction without one",
            });
        }
        SDWA if !has_sdwa_form(inst.op, sig) => {
            return Err(DecodeError::Invalid {
                family,
                what: "SDWA form of an instruction without one",
            });
        }
        DPP => {
            let w1 = word(words, 1, family)?;
            inst.enc = Encoding::Dpp;
            inst.dwords = 2;
            inst.src[0] = vgpr(bits(w1, 0, 8), false);
            let float = float_sources(inst.op, sig);
            let neg = (bits(w1, 20, 1) | bits(w1, 22, 1) << 1) as u8;
            let abs = (bits(w1, 21, 1) | bits(w1, 23, 1) << 1) as u8;
            inst.mods.neg = neg & float;
            inst.mods.abs = abs & float;
            // Integer sources of a float instruction take SEXT instead (as LLVM decodes
            // DPP); all-integer instructions take no modifiers.
            let sources = if sig[3] == Ty::N { 1 } else { 3 };
            // Modifier bits where the instruction has no modifiers must be zero: all four
            // for an all-integer instruction, those of the absent SRC1 for a one-source one.
            // LLVM 19 has no such fields when the instruction takes no source modifiers and
            // refuses the word (checked with llvm-mc-19, bit by bit); there is nothing for
            // them to modify. Rejected likewise.
            // The integer dot products (v_dot*c_i32_*) keep the modifier fields: LLVM
            // decodes and ignores them.
            let allowed = if float == 0 && !inst.op.name().starts_with("v_dot") {
                0
            } else {
                sources
            };
            if (neg | abs) & !allowed != 0 {
                return Err(DecodeError::Invalid {
                    family,
                    what: "DPP source modifier on an operand without modifiers",
                });
            }
            if float != 0 {
                inst.mods.sext = neg & !float & sources;
            }
            inst.extra = Extra::Dpp(DppControl {
                ctrl: bits(w1, 8, 9) as u16,
                row_mask: bits(w1, 28, 4) as u8,
                bank_mask: bits(w1, 24, 4) as u8,
                bound_ctrl: bits(w1, 19, 1) != 0,
                fetch_inactive: false,
            });
        }
        SDWA => {
            let w1 = word(words, 1, family)?;
            inst.enc = Encoding::Sdwa;
            inst.dwords = 2;
            let src0 = bits(w1, 0, 8);
            inst.src[0] = if bits(w1, 23, 1) != 0 {
                scalar_source(
                    src0,
                    sig[2],
                    words,
                    LiteralSlot { index: 2, family },
                    &mut used,
                )?
            } else {
                vgpr(src0, false)
            };
            let sel = |v: u32| {
                SdwaSel::from_bits(v).ok_or(DecodeError::Invalid {
                    family,
                    what: "reserved SDWA select",
                })
            };
            let float = float_sources(inst.op, sig);
            sdwa_fields_valid(inst.op, sig, float, w1, family)?;
            if super::sdwa_dst_sel_fixed(inst.op) && bits(w1, 8, 3) != 6 {
                return Err(DecodeError::Invalid {
                    family,
                    what: "DST_SEL of an SDWA fp8 conversion must be DWORD",
                });
            }
            inst.mods.neg = (bits(w1, 20, 1) | bits(w1, 28, 1) << 1) as u8 & float;
            inst.mods.abs = (bits(w1, 21, 1) | bits(w1, 29, 1) << 1) as u8 & float;
            inst.mods.clamp = bits(w1, 13, 1) != 0;
            inst.mods.omod = bits(w1, 14, 2) as u8;
            inst.extra = Extra::Sdwa(SdwaControl {
                // VOPC keeps SDST in these bits.
                dst_sel: if inst.op.info().family == Family::Vopc {
                    SdwaSel::Dword
                } else {
                    sel(bits(w1, 8, 3))?
                },
                // The reserved value 3 reads as UNUSED_PAD, as LLVM decodes it; without a
                // destination select there is nothing to pad.
                dst_unused: if super::sdwa_dst_sel_fixed(inst.op) {
                    0
                } else {
                    bits(w1, 11, 2) as u8 % 3
                },
                src0_sel: sel(bits(w1, 16, 3))?,
                src0_sext: bits(w1, 19, 1) != 0 && float & 1 == 0,
                src1_sel: sel(bits(w1, 24, 3))?,
                src1_sext: bits(w1, 27, 1) != 0 && float & 2 == 0,
            });
        }
        _ => {
            inst.src[0] = vector_source(code, sig[2], words, lit, &mut used, false)?;
            if used {
                inst.dwords = 2;
            }
        }
    }
    Ok(())
}

/// Reject an SDWA control word (GFX9 `VOP_SDWA9`) that sets a field the instruction does
/// not have: SRC1's fields in a one-source instruction, SEXT on a float source, NEG or ABS on
/// an integer source, OMOD where the result is no float (VOPC keeps SDST in bits 15:8).
///
/// As LLVM 19 decodes SDWA: its GFX9 SDWA encodings have those fields only where the
/// instruction uses them, so a word with one set matches no instruction (checked with
/// llvm-mc-19 field by field). Nothing in the instruction would use them; the simulated core
/// refuses them instead of ignoring them.
fn sdwa_fields_valid(
    op: Op,
    sig: [Ty; 5],
    float: u8,
    w1: u32,
    family: &'static str,
) -> Result<(), DecodeError> {
    let invalid = |what| Err(DecodeError::Invalid { family, what });
    let one_source = sig[3] == Ty::N;
    if one_source && bits(w1, 24, 6) | bits(w1, 31, 1) != 0 {
        return invalid("SDWA SRC1 field in a one-source instruction");
    }
    let sext = (bits(w1, 19, 1) | bits(w1, 27, 1) << 1) as u8;
    if sext & float != 0 {
        return invalid("SDWA SEXT on a float source");
    }
    let neg_abs = (bits(w1, 20, 2).min(1) | bits(w1, 28, 2).min(1) << 1) as u8;
    if neg_abs & !float & 3 != 0 {
        return invalid("SDWA NEG/ABS on an integer source");
    }
    let float_result = matches!(sig[0], Ty::F16 | Ty::F32 | Ty::F64 | Ty::PkF16 | Ty::PkF32)
        && !op.name().starts_with("v_dot");
    if op.info().family != Family::Vopc && !float_result && bits(w1, 14, 2) != 0 {
        return invalid("SDWA OMOD on an instruction without a float result");
    }
    Ok(())
}

/// VOP1/VOP2 opcodes without a DPP form, as LLVM 19 has them (swept with llvm-mc-19 over every
/// VOP1 and VOP2 opcode of both targets): the operandless ones, v_readfirstlane_b32 (a scalar
/// result), v_swap_b32 and v_accvgpr_mov_b32, and v_pk_fmac_f16. (The K-constant forms are
/// refused in `vop2`.) What such a word would do is not documented here; refused.
fn has_dpp_form(op: Op) -> bool {
    !matches!(
        op,
        Op::VNop
            | Op::VClrexcp
            | Op::VReadfirstlaneB32
            | Op::VSwapB32
            | Op::VAccvgprMovB32
            | Op::VPkFmacF16
    )
}

/// Whether a VOP1/VOP2/VOPC opcode has an SDWA form, as LLVM 19 has them (same sweep): not the
/// 64-bit operations (SDWA selects bytes and words of 32-bit registers), the multiply-
/// accumulates (v_mac/v_fmac, v_pk_fmac_f16), the v_dot*c accumulating dot products, nor the
/// opcodes without a DPP form.
fn has_sdwa_form(op: Op, sig: [Ty; 5]) -> bool {
    // A compare's 64-bit lane mask is no 64-bit operand, nor is the implicit VCC carry-in
    // (`sig[4]`) of v_cndmask_b32 and v_addc_co_u32.
    let dst = if op.info().family == Family::Vopc {
        Ty::N
    } else {
        sig[0]
    };
    has_dpp_form(op)
        && (![dst, sig[2], sig[3]].iter().any(|t| t.dwords() == 2)
            // gfx942's fp8 unpacks select a word of a 32-bit source into a register pair.
            || matches!(op, Op::VCvtPkF32Fp8 | Op::VCvtPkF32Bf8))
        && !matches!(op, Op::VMacF32 | Op::VMacF16 | Op::VFmacF32)
        && !op.name().starts_with("v_dot")
}

/// VSRC1 of VOP2/VOPC: a VGPR, or in SDWA with S1 set, a scalar source.
fn vsrc1(inst: &Inst, words: &[u32], family: &'static str, ty: Ty) -> Result<Operand, DecodeError> {
    let code = bits(words[0], 9, 8);
    if inst.enc == Encoding::Sdwa && bits(words[1], 31, 1) != 0 {
        let mut used = false;
        return scalar_source(code, ty, words, LiteralSlot { index: 2, family }, &mut used);
    }
    Ok(vgpr(code, false))
}

/// VOP2: `0 op[30:25] vdst[24:17] vsrc1[16:9] src0[8:0]`.
pub fn vop2(words: &[u32], luts: &Luts) -> Result<Inst, DecodeError> {
    const F: &str = "VOP2";
    let w = words[0];
    let op = lookup(&luts.vop2, bits(w, 25, 6), F)?;
    let sig = op.info().sig;
    let mut inst = Inst::new(op, Encoding::Vop2, 1);
    vop_src0(&mut inst, words, F, sig)?;
    inst.src[1] = vsrc1(&inst, words, F, sig[3])?;
    inst.dst = vgpr(bits(w, 17, 8), false);
    if writes_carry(op) {
        inst.sdst = VCC;
    }
    if reads_vcc(op) {
        inst.src[2] = VCC;
    }
    if k_constant(op).is_some() {
        if inst.enc != Encoding::Vop2 {
            return Err(DecodeError::Invalid {
                family: F,
                what: "madmk/madak with a DPP or SDWA source",
            });
        }
        // A literal SRC0 is the K dword itself: an instruction has at most one literal (as
        // LLVM decodes it; compilers do not emit this form).
        inst.extra = Extra::Imm(word(words, 1, F)?);
        inst.dwords = 2;
    }
    Ok(inst)
}

/// VOP1: `0111111 vdst[24:17] op[16:9] src0[8:0]`.
pub fn vop1(words: &[u32], luts: &Luts) -> Result<Inst, DecodeError> {
    const F: &str = "VOP1";
    let w = words[0];
    let op = lookup(&luts.vop1, bits(w, 9, 8), F)?;
    let sig = op.info().sig;
    let mut inst = Inst::new(op, Encoding::Vop1, 1);
    if matches!(op, Op::VNop | Op::VClrexcp) {
        // No operands: LLVM 19 refuses a nonzero VDST (its SRC0 it ignores; checked with
        // llvm-mc-19), and so does the simulator, a destination the instruction lacks
        // being an encoding error.
        if bits(w, 17, 8) != 0 {
            return Err(DecodeError::Invalid {
                family: F,
                what: "VDST of an instruction without operands must be 0",
            });
        }
        if matches!(bits(w, 0, 9), DPP | SDWA) {
            return Err(DecodeError::Invalid {
                family: F,
                what: "DPP or SDWA form of an instruction without operands",
            });
        }
        return Ok(inst);
    }
    vop_src0(&mut inst, words, F, sig)?;
    let vdst = bits(w, 17, 8);
    inst.dst = match op {
        Op::VReadfirstlaneB32 => super::operand::scalar_dest(vdst, sig[0], F)?,
        Op::VAccvgprMovB32 => {
            // Both operands are AGPRs.
            if let Operand::Vgpr(n) = inst.src[0] {
                inst.src[0] = Operand::Vgpr(n | 256);
            }
            vgpr(vdst, true)
        }
        _ => vgpr(vdst, false),
    };
    Ok(inst)
}

/// VOPC: `0111110 op[24:17] vsrc1[16:9] src0[8:0]`; writes VCC (SDWA: VCC or an SGPR pair).
pub fn vopc(words: &[u32], luts: &Luts) -> Result<Inst, DecodeError> {
    const F: &str = "VOPC";
    let w = words[0];
    let op = lookup(&luts.vopc, bits(w, 17, 8), F)?;
    let sig = op.info().sig;
    let mut inst = Inst::new(op, Encoding::Vopc, 1);
    if bits(w, 0, 9) == DPP {
        // llvm-mc-19 refuses every DPP compare on gfx90a and gfx942 (none among the fuzz
        // goldens' accepted words; it has no GFX9 DPP real for VOPC), so no LLVM-built code
        // holds one. Whether the hardware executes it is not established here (unsure); the
        // simulator refuses it rather than guess what it writes to VCC.
        return Err(DecodeError::Invalid {
            family: F,
            what: "DPP form of a compare",
        });
    }
    vop_src0(&mut inst, words, F, sig)?;
    inst.src[1] = vsrc1(&inst, words, F, sig[3])?;
    inst.dst = VCC;
    if inst.enc == Encoding::Sdwa {
        // SDWA VOPC: bits 15:8 hold SD (bit 15) and SDST; CLAMP/OMOD do not exist there.
        let w1 = words[1];
        inst.mods.omod = 0;
        inst.mods.clamp = false;
        if bits(w1, 15, 1) != 0 {
            inst.dst = super::operand::scalar_dest(bits(w1, 8, 7), Ty::B64, F)?;
        }
    }
    Ok(inst)
}

/// VOP3A/VOP3B: `110100 op[25:16] clamp[15] (op_sel[14:11] abs[10:8] | sdst[14:8]) vdst[7:0]`,
/// then `neg[31:29] omod[28:27] src2[26:18] src1[17:9] src0[8:0]`.
pub fn vop3(words: &[u32], luts: &Luts) -> Result<Inst, DecodeError> {
    const F: &str = "VOP3";
    let w = words[0];
    let w1 = word(words, 1, F)?;
    let op = lookup(&luts.vop3, bits(w, 16, 10), F)?;
    let info = op.info();
    let sig = info.sig;
    let mut inst = Inst::new(op, Encoding::Vop3, 2);
    let lit = LiteralSlot {
        index: 2,
        family: F,
    };
    let mut used = false;
    let codes = [bits(w1, 0, 9), bits(w1, 9, 9), bits(w1, 18, 9)];
    vop3_fields_valid(op, info.family, sig, w, w1)?;
    for i in 0..3 {
        if sig[2 + i] != Ty::N {
            if codes[i] == LITERAL {
                return Err(DecodeError::Invalid {
                    family: F,
                    what: "literal in a VOP3 encoding (GFX10+ only)",
                });
            }
            inst.src[i] = vector_source(codes[i], sig[2 + i], words, lit, &mut used, false)?;
        }
    }
    let vdst = bits(w, 0, 8);
    inst.dst = if info.family == Family::Vopc {
        super::operand::scalar_dest(vdst, Ty::B64, F)?
    } else if op == Op::VReadlaneB32 {
        super::operand::scalar_dest(vdst, sig[0], F)?
    } else {
        vgpr(vdst, false)
    };
    inst.mods.clamp = bits(w, 15, 1) != 0;
    inst.mods.omod = bits(w1, 27, 2) as u8;
    // NEG and ABS exist for float sources only (LLVM ignores them on integer sources);
    // OP_SEL only for the VOP3-only 16-bit opcodes.
    let float = float_sources(op, sig);
    inst.mods.neg = bits(w1, 29, 3) as u8 & float;
    if op == Op::VCvtPkU8F32 {
        // LLVM reads the NEG bits of its integer sources as SEXT (a no-op on 32 bits).
        inst.mods.sext = bits(w1, 29, 3) as u8 & !float;
    }
    if is_vop3b(op) {
        inst.sdst = super::operand::scalar_dest(bits(w, 8, 7), Ty::B64, F)?;
    } else {
        inst.mods.abs = bits(w, 8, 3) as u8 & float;
        if has_op_sel(op, info.family, sig) {
            inst.mods.op_sel = bits(w, 11, 4) as u8;
        }
    }
    Ok(inst)
}

/// Reject a VOP3A/VOP3B word that sets a field the instruction does not have: the SRC field
/// of an absent source, NEG or ABS where the instruction takes no source modifiers, OMOD
/// where it has no output modifier.
///
/// As LLVM 19 decodes GFX9 VOP3 (its encodings fix those fields to 0 and it then refuses the
/// word; checked with llvm-mc-19 field by field on some twenty opcodes of every kind): an
/// instruction takes source modifiers on all its sources when one source is a float or when
/// it has OP_SEL (the modifiers carry it), v_cndmask_b32 on its two selected values only;
/// OMOD exists with a float source or result, not on compares, v_cndmask_b32 or
/// v_cvt_pk_u8_f32; CLAMP as `has_clamp` says. Nothing in the instruction would use such a
/// field; the simulated core refuses the word rather than ignore it.
fn vop3_fields_valid(
    op: Op,
    family: Family,
    sig: [Ty; 5],
    w: u32,
    w1: u32,
) -> Result<(), DecodeError> {
    let invalid = |what| {
        Err(DecodeError::Invalid {
            family: "VOP3",
            what,
        })
    };
    let mut present = 0u8;
    for i in 0..3 {
        if sig[2 + i] == Ty::N {
            if bits(w1, 9 * i as u32, 9) != 0 {
                return invalid("SRC field of an absent source must be 0");
            }
        } else {
            present |= 1 << i;
        }
    }
    let float = float_sources(op, sig);
    let with_mods = if op == Op::VCndmaskB32 {
        0b11
    } else if float != 0 || has_op_sel(op, family, sig) {
        present
    } else {
        0
    };
    let neg = bits(w1, 29, 3) as u8;
    let abs = if is_vop3b(op) { 0 } else { bits(w, 8, 3) as u8 };
    if (neg | abs) & !with_mods != 0 {
        return invalid("NEG/ABS on a source without modifiers");
    }
    let float_result = matches!(sig[0], Ty::F16 | Ty::F32 | Ty::F64 | Ty::PkF16 | Ty::PkF32);
    let has_omod = family != Family::Vopc
        && (float != 0 || float_result)
        && !matches!(op, Op::VCndmaskB32 | Op::VCvtPkU8F32);
    if !has_omod && bits(w1, 27, 2) != 0 {
        return invalid("OMOD on an instruction without an output modifier");
    }
    if bits(w, 15, 1) != 0 && !has_clamp(op, family, sig, float, float_result) {
        return invalid("CLAMP on an instruction without a clamp");
    }
    Ok(())
}

/// Whether a VOP3 instruction has CLAMP, as LLVM 19 decodes GFX9 (swept with llvm-mc-19 over
/// every VOP3 opcode of both targets, CLAMP set and clear): instructions with a float source
/// or result (but the class compares), those with OP_SEL, and the integer arithmetic that
/// saturates (adds, subtracts, 24-bit multiplies, multiply-adds, SADs, integer dot
/// products, gfx942's fp8 unpacks). Integer compares, logic, shifts, moves, min/max/med3 of
/// 32 bits, v_cndmask_b32, the packing conversions and the like have none; the simulated core
/// refuses a CLAMP bit there instead of ignoring it.
fn has_clamp(op: Op, family: Family, sig: [Ty; 5], float: u8, float_result: bool) -> bool {
    if matches!(
        op,
        Op::VCndmaskB32
            | Op::VCvtPkU16U32
            | Op::VCvtPkI16I32
            | Op::VCvtPkFp8F32
            | Op::VCvtPkBf8F32
            | Op::VCvtSrFp8F32
            | Op::VCvtSrBf8F32
    ) {
        return false;
    }
    let name = op.name();
    let class_compare = name.starts_with("v_cmp_class") || name.starts_with("v_cmpx_class");
    if (float != 0 && !class_compare) || (float_result && family != Family::Vopc) {
        return true;
    }
    if has_op_sel(op, family, sig) {
        return true;
    }
    matches!(
        op,
        Op::VMulI32I24
            | Op::VMulU32U24
            | Op::VAddCoU32
            | Op::VSubCoU32
            | Op::VSubrevCoU32
            | Op::VAddcCoU32
            | Op::VSubbCoU32
            | Op::VSubbrevCoU32
            | Op::VAddU16
            | Op::VSubU16
            | Op::VSubrevU16
            | Op::VAddU32
            | Op::VSubU32
            | Op::VSubrevU32
            | Op::VAddI32
            | Op::VSubI32
            | Op::VAddI16
            | Op::VSubI16
            | Op::VDot2cI32I16
            | Op::VDot4cI32I8
            | Op::VDot8cI32I4
            | Op::VMadI32I24
            | Op::VMadU32U24
            | Op::VSadU8
            | Op::VSadHiU8
            | Op::VSadU16
            | Op::VSadU32
            | Op::VMsadU8
            | Op::VQsadPkU16U8
            | Op::VMqsadPkU16U8
            | Op::VMqsadU32U8
            | Op::VMadU64U32
            | Op::VMadI64I32
            | Op::VMadLegacyU16
            | Op::VMadLegacyI16
            | Op::VMadU32U16
            | Op::VMadI32I16
            | Op::VMadU16
            | Op::VMadI16
            | Op::VCvtPkF32Fp8
            | Op::VCvtPkF32Bf8
    )
}

/// Reject a (non-matrix) VOP3P word that sets a per-source field of an absent source (its
/// SRC, NEG, NEG_HI or OP_SEL bit; OP_SEL_HI is free), or any modifier of
/// v_accvgpr_read/write, which take none.
///
/// As LLVM 19 decodes GFX9 VOP3P: its encodings fix those fields to 0 and it refuses the
/// word otherwise (checked with llvm-mc-19 field by field on fourteen opcodes). Nothing in the
/// instruction would use them; the simulated core refuses the word rather than ignore them.
fn vop3p_fields_valid(op: Op, sig: [Ty; 5], w: u32, w1: u32) -> Result<(), DecodeError> {
    let invalid = |what| {
        Err(DecodeError::Invalid {
            family: "VOP3P",
            what,
        })
    };
    let mut absent = 0u32;
    for i in 0..3 {
        if sig[2 + i] == Ty::N {
            if bits(w1, 9 * i as u32, 9) != 0 {
                return invalid("SRC field of an absent source must be 0");
            }
            absent |= 1 << i;
        }
    }
    let accvgpr_move = matches!(op, Op::VAccvgprReadB32 | Op::VAccvgprWriteB32);
    let no_mods = if accvgpr_move { 0b111 } else { absent };
    let per_source = [bits(w, 8, 3), bits(w, 11, 3), bits(w1, 29, 3)];
    if per_source.iter().any(|&m| m & no_mods != 0) {
        return invalid("NEG/NEG_HI/OP_SEL of a source without modifiers must be 0");
    }
    Ok(())
}

/// VOP3P: `110100111 op[22:16] clamp[15] op_sel_hi2[14] op_sel[13:11] neg_hi[10:8] vdst[7:0]`,
/// then `neg[31:29] op_sel_hi[28:27] src2 src1 src0`. Matrix (MAI) opcodes reuse the layout with
/// accumulator-select bits; v_accvgpr_read/write address AGPRs.
pub fn vop3p(words: &[u32], luts: &Luts) -> Result<Inst, DecodeError> {
    const F: &str = "VOP3P";
    let w = words[0];
    let w1 = word(words, 1, F)?;
    let op = lookup(&luts.vop3p, bits(w, 16, 7), F)?;
    let sig = op.info().sig;
    let mut inst = Inst::new(op, Encoding::Vop3p, 2);
    let lit = LiteralSlot {
        index: 2,
        family: F,
    };
    let mut used = false;
    let codes = [bits(w1, 0, 9), bits(w1, 9, 9), bits(w1, 18, 9)];
    let mai = op.name().starts_with("v_mfma") || op.name().starts_with("v_smfmac");
    // MAI: ACC_CD (bit 15) makes vdst and src2 AGPRs (not the index VGPR of v_smfmac); bits
    // 59 and 60 make src0 and src1 AGPRs; bits 63:61 are BLGP, 14:11 ABID, 10:8 CBSZ.
    let acc_cd = mai && bits(w, 15, 1) != 0;
    let smfmac = op.name().starts_with("v_smfmac");
    for i in 0..3 {
        if sig[2 + i] != Ty::N {
            if codes[i] == LITERAL {
                return Err(DecodeError::Invalid {
                    family: F,
                    what: "literal in a VOP3P encoding",
                });
            }
            if smfmac && codes[i] < 256 {
                // v_smfmac's A and B are VGPR/AGPR tuples and its index a VGPR (register-only
                // AV operands in LLVM, `decodeAV10`). LLVM 19 fails some such words and prints
                // others with an "Invalid register"/"Invalid immediate" comment (checked with
                // llvm-mc-19); the simulator refuses every non-register code there.
                return Err(DecodeError::Invalid {
                    family: F,
                    what: "scalar or constant source of v_smfmac",
                });
            }
            let acc = match op {
                Op::VAccvgprReadB32 => true,
                _ if mai && i == 2 => acc_cd && !smfmac,
                _ if mai => bits(w1, 27 + i as u32, 1) != 0,
                _ => false,
            };
            // A constant C of an f64 matrix op is a double (C spans more registers).
            let ty = if mai && i == 2 && sig[2] == Ty::F64 {
                Ty::F64
            } else {
                sig[2 + i]
            };
            inst.src[i] = vector_source(codes[i], ty, words, lit, &mut used, acc)?;
        }
    }
    if !mai {
        vop3p_fields_valid(op, sig, w, w1)?;
    }
    let dst_acc = op == Op::VAccvgprWriteB32 || acc_cd;
    inst.dst = vgpr(bits(w, 0, 8), dst_acc);
    if mai {
        inst.extra = Extra::Mai {
            cbsz: bits(w, 8, 3) as u8,
            abid: bits(w, 11, 4) as u8,
            blgp: bits(w1, 29, 3) as u8,
        };
        return Ok(inst);
    }
    inst.mods.clamp = bits(w, 15, 1) != 0;
    inst.mods.neg = bits(w1, 29, 3) as u8;
    if matches!(op, Op::VFmaMixF32 | Op::VFmaMixloF16 | Op::VFmaMixhiF16) {
        // v_fma_mix*: the NEG_HI bits are the sources' ABS modifiers.
        inst.mods.abs = bits(w, 8, 3) as u8;
    } else {
        inst.mods.neg_hi = bits(w, 8, 3) as u8;
    }
    inst.mods.op_sel = bits(w, 11, 3) as u8;
    inst.mods.op_sel_hi = (bits(w1, 27, 2) | bits(w, 14, 1) << 2) as u8;
    Ok(inst)
}
