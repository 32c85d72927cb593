//! Vector memory and LDS encodings: DS, FLAT/GLOBAL/SCRATCH and MUBUF.

use super::operand::{LiteralSlot, align_sgpr, check_scalar_tuple, scalar_source, vgpr};
use super::{DecodeError, Luts, bits, lookup, word};
use crate::gpu::shader::isa::{CachePolicy, Encoding, Extra, Family, Inst, Mem, Op, Operand, Ty};
use crate::gpu::target::GfxTarget;

/// Whether a DS opcode takes two 8-bit offsets (the read2/write2/wrxchg2 forms) rather than one
/// 16-bit offset.
pub fn ds_has_two_offsets(op: Op) -> bool {
    let n = op.name();
    n.starts_with("ds_read2") || n.starts_with("ds_write2") || n.starts_with("ds_wrxchg2")
}

/// Whether `op` is one of the floating-point atomics (add_f32, pk_add_f16, add/min/max_f64,
/// pk_add_bf16) of MUBUF or FLAT.
fn is_float_atomic(op: Op) -> bool {
    let name = op.name();
    name.contains("_atomic_") && ["f16", "f32", "f64"].iter().any(|t| name.ends_with(t))
}

/// Reject the SCC bit on a floating-point atomic on gfx90a.
///
/// LLVM 19 encodes gfx90a's floating-point atomics (MUBUF and FLAT) without an SCC bit and
/// refuses SCC = 1 on them, while it accepts it (as SC1) on gfx942 and on the integer
/// atomics (checked with llvm-mc-19, every atomic opcode). Whether gfx90a hardware honours
/// SCC on these is not documented (unsure): the simulator refuses, as LLVM does, rather than
/// guess a coherence behaviour.
fn check_float_atomic_scc(op: Op, scc: bool, target: GfxTarget) -> Result<(), DecodeError> {
    if scc && target == GfxTarget::Gfx90a && is_float_atomic(op) {
        return Err(DecodeError::Invalid {
            family: "memory",
            what: "SCC on a floating-point atomic (gfx90a)",
        });
    }
    Ok(())
}

/// DS (GFX9): `110110 acc[25] op[24:17] gds[16] offset1[15:8] offset0[7:0]`, then
/// `vdst[31:24] data1[23:16] data0[15:8] addr[7:0]`. ACC (gfx90a) makes vdst and data AGPRs.
pub fn ds(words: &[u32], luts: &Luts) -> Result<Inst, DecodeError> {
    const F: &str = "DS";
    let w = words[0];
    let w1 = word(words, 1, F)?;
    let op = lookup(&luts.ds, bits(w, 17, 8), F)?;
    let sig = op.info().sig;
    let acc = bits(w, 25, 1) != 0;
    // The register fields of operands the instruction lacks (and ds_nop's offsets) must be 0:
    // LLVM 19's DS encodings fix them to 0 and refuse other values (checked with
    // llvm-mc-19: ds_write_b32 with a VDST, ds_read_b32 with a DATA0, ds_nop with an
    // address). There is no operand for them to name; the simulator refuses them likewise.
    let unused = [(sig[0], 24), (sig[2], 0), (sig[3], 8), (sig[4], 16)]
        .iter()
        .any(|&(ty, lo)| ty == Ty::N && bits(w1, lo, 8) != 0);
    if unused || (op == Op::DsNop && bits(w, 0, 16) != 0) {
        return Err(DecodeError::Invalid {
            family: F,
            what: "field of an operand the instruction lacks must be 0",
        });
    }
    let mut inst = Inst::new(op, Encoding::Ds, 2);
    if sig[0] != Ty::N {
        inst.dst = vgpr(bits(w1, 24, 8), acc);
    }
    if sig[2] != Ty::N {
        inst.src[0] = vgpr(bits(w1, 0, 8), false);
    }
    if sig[3] != Ty::N {
        inst.src[1] = vgpr(bits(w1, 8, 8), acc);
    }
    if sig[4] != Ty::N {
        inst.src[2] = vgpr(bits(w1, 16, 8), acc);
    }
    let (offset0, offset1) = (bits(w, 0, 8), bits(w, 8, 8));
    let mut mem = Mem {
        gds: bits(w, 16, 1) != 0,
        ..Mem::default()
    };
    if ds_has_two_offsets(op) {
        mem.offset = offset0 as i32;
        mem.offset1 = offset1 as u8;
    } else {
        mem.offset = (offset1 << 8 | offset0) as i32;
    }
    inst.extra = Extra::Mem(mem);
    Ok(inst)
}

/// FLAT/GLOBAL/SCRATCH (GFX9): `110111 sc1[25] op[24:18] slc[17] glc[16] seg[15:14]
/// lds_or_sve[13] offset[12:0]`, then `vdst[31:24] acc[23] saddr[22:16] data[15:8] addr[7:0]`.
///
/// FLAT offsets are 12-bit unsigned, GLOBAL and SCRATCH 13-bit signed. SADDR 0x7f means "off".
/// A SCRATCH access uses its address VGPR when SADDR is off (gfx90a), or when SVE (bit 13) is
/// set (gfx942, which also allows neither: offset only).
pub fn flat(words: &[u32], luts: &Luts, target: GfxTarget) -> Result<Inst, DecodeError> {
    const F: &str = "FLAT";
    let w = words[0];
    let w1 = word(words, 1, F)?;
    let seg = bits(w, 14, 2);
    if seg == 3 {
        return Err(DecodeError::Invalid {
            family: F,
            what: "reserved segment",
        });
    }
    let op = lookup(&luts.flat, seg << 7 | bits(w, 18, 7), F)?;
    let info = op.info();
    let sig = info.sig;
    let acc = bits(w1, 23, 1) != 0;
    let mut inst = Inst::new(op, Encoding::Flat, 2);
    let cpol = CachePolicy {
        glc: bits(w, 16, 1) != 0,
        slc: bits(w, 17, 1) != 0,
        scc: bits(w, 25, 1) != 0,
    };
    let saddr = bits(w1, 16, 7);
    if saddr == 125 {
        return Err(DecodeError::Invalid {
            family: "FLAT",
            what: "reserved SADDR code 125",
        });
    }
    if info.family == Family::Flat && (saddr != 0 || bits(w, 13, 1) != 0) {
        // The FLAT segment has no SADDR and no LDS form: LLVM 19 encodes SADDR as 0 and LDS
        // as 0 there and refuses other values (checked with llvm-mc-19, which refuses even
        // SADDR = 0x7f, "off"). The simulator refuses them likewise.
        return Err(DecodeError::Invalid {
            family: F,
            what: "SADDR or LDS in a FLAT-segment instruction",
        });
    }
    let addr = bits(w1, 0, 8);
    let offset = match info.family {
        // The FLAT segment's offset is unsigned. LLVM's assembler allows 12 bits but its
        // disassembler reads 13; the simulator follows the disassembler (bit 12 is never set
        // by compilers; what the hardware does with it is not documented).
        Family::Flat => bits(w, 0, 13) as i32,
        _ => ((bits(w, 0, 13) << 19) as i32) >> 19,
    };
    match info.family {
        Family::Global => {
            if saddr == 0x7f {
                inst.src[0] = vgpr(addr, false);
            } else {
                check_scalar_tuple(saddr, Ty::B64, F)?;
                inst.src[0] = vgpr(addr, false);
                inst.src[2] = Operand::Sgpr(align_sgpr(saddr, Ty::B64));
            }
        }
        Family::Scratch => {
            let uses_vaddr = match target {
                GfxTarget::Gfx90a | GfxTarget::Gfx1100 => saddr == 0x7f,
                GfxTarget::Gfx942 => bits(w, 13, 1) != 0,
            };
            if uses_vaddr {
                inst.src[0] = vgpr(addr, false);
            }
            if saddr != 0x7f {
                inst.src[2] = Operand::Sgpr(saddr as u8);
            }
        }
        _ => inst.src[0] = vgpr(addr, false),
    }
    if sig[3] != Ty::N {
        inst.src[1] = vgpr(bits(w1, 8, 8), acc);
    }
    check_float_atomic_scc(op, cpol.scc, target)?;
    // An LDS load (the LDS bit of GLOBAL, gfx942's *_load_lds_* opcodes) writes no register,
    // so it has no AGPR form: LLVM 19 refuses ACC = 1 there (checked with llvm-mc-19), and so
    // does the simulator.
    let lds_load =
        (bits(w, 13, 1) != 0 && info.family == Family::Global) || op.name().contains("_load_lds_");
    if lds_load && acc {
        return Err(DecodeError::Invalid {
            family: F,
            what: "ACC on an LDS load",
        });
    }
    let is_atomic = op.name().contains("_atomic_");
    if sig[0] != Ty::N && (!is_atomic || cpol.glc) {
        inst.dst = vgpr(bits(w1, 24, 8), acc);
    }
    inst.extra = Extra::Mem(Mem {
        offset,
        cpol,
        lds: bits(w, 13, 1) != 0 && info.family != Family::Scratch,
        ..Mem::default()
    });
    Ok(inst)
}

/// Whether a MUBUF opcode has an LDS form (LDS = 1: the loaded data goes to LDS at M0):
/// the dword and sub-dword loads and buffer_load_format_x, as LLVM 19 has it (llvm-mc-19
/// accepts LDS = 1 on exactly these GFX9 opcodes; that the hardware has no other LDS form is
/// taken from LLVM, not from an AMD document).
fn mubuf_has_lds_form(op: Op) -> bool {
    matches!(
        op,
        Op::BufferLoadFormatX
            | Op::BufferLoadUbyte
            | Op::BufferLoadSbyte
            | Op::BufferLoadUshort
            | Op::BufferLoadSshort
            | Op::BufferLoadDword
    )
}

/// MUBUF (GFX9): `111000 op[24:18] slc[17] lds[16] sc1[15] glc[14] idxen[13] offen[12]
/// offset[11:0]`, then `soffset[31:24] acc[23] srsrc[20:16] vdata[15:8] vaddr[7:0]`.
pub fn mubuf(words: &[u32], luts: &Luts, target: GfxTarget) -> Result<Inst, DecodeError> {
    const F: &str = "MUBUF";
    let w = words[0];
    let w1 = word(words, 1, F)?;
    let op = lookup(&luts.mubuf, bits(w, 18, 7), F)?;
    let sig = op.info().sig;
    let acc = bits(w1, 23, 1) != 0;
    let mut inst = Inst::new(op, Encoding::Mubuf, 2);
    let mem = Mem {
        offset: bits(w, 0, 12) as i32,
        cpol: CachePolicy {
            glc: bits(w, 14, 1) != 0,
            slc: bits(w, 17, 1) != 0,
            scc: bits(w, 15, 1) != 0,
        },
        offen: bits(w, 12, 1) != 0,
        idxen: bits(w, 13, 1) != 0,
        lds: bits(w, 16, 1) != 0,
        srsrc: (bits(w1, 16, 5) * 4) as u8,
        ..Mem::default()
    };
    inst.extra = Extra::Mem(mem);
    let no_operands = sig.iter().all(|t| *t == Ty::N);
    if !no_operands {
        check_scalar_tuple(bits(w1, 16, 5) * 4, Ty::B128, F)?;
    }
    // Fields LLVM 19's GFX9 MUBUF encodings fix to 0, so that it refuses other values
    // (checked with llvm-mc-19 field by field; nothing in the instruction uses them): the
    // operandless cache operations take no IDXEN, OFFEN, LDS or ACC, and but for buffer_wbl2
    // and gfx942's buffer_inv (whose GLC and SCC are their SC0/SC1 scope bits on gfx942:
    // llvm-mc-19 and -22 print `buffer_inv sc0 sc1`; gfx90a's buffer_invl2 at the same
    // opcode refuses them) no GLC or SCC; only the
    // dword and sub-dword loads have an LDS form. The simulator refuses them likewise.
    let invalid = |what| Err(DecodeError::Invalid { family: F, what });
    if no_operands {
        if mem.idxen || mem.offen || mem.lds || acc {
            return invalid("addressing or LDS bit of an operandless buffer operation");
        }
        if !matches!(op, Op::BufferWbl2 | Op::BufferInv) && (mem.cpol.glc || mem.cpol.scc) {
            return invalid("cache-policy bit of a buffer cache invalidation");
        }
        return Ok(inst);
    }
    check_float_atomic_scc(op, mem.cpol.scc, target)?;
    if mem.lds && !mubuf_has_lds_form(op) {
        return invalid("LDS bit on a buffer instruction without an LDS form");
    }
    if mem.lds && acc {
        // As for GLOBAL: an LDS load writes no register, so it has no AGPR form (LLVM 19
        // refuses ACC = 1 with LDS = 1; checked with llvm-mc-19).
        return invalid("ACC on an LDS load");
    }
    if mem.offen || mem.idxen {
        inst.src[0] = vgpr(bits(w1, 0, 8), false);
    }
    let vdata = vgpr(bits(w1, 8, 8), acc);
    if sig[3] != Ty::N {
        inst.src[1] = vdata;
    }
    let is_atomic = op.name().contains("_atomic_");
    if sig[0] != Ty::N && (!is_atomic || mem.cpol.glc) && !mem.lds {
        inst.dst = vdata;
    }
    let mut used = false;
    inst.src[2] = scalar_source(
        bits(w1, 24, 8),
        Ty::B32,
        words,
        LiteralSlot {
            index: 2,
            family: F,
        },
        &mut used,
    )?;
    if used {
        return Err(DecodeError::Invalid {
            family: F,
            what: "literal soffset",
        });
    }
    Ok(inst)
}
