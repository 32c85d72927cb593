//! GFX11 instructions as the shared interpreter executes them: each decoded GFX11 instruction
//! becomes the GFX9 instruction ([`crate::gpu::shader::isa::Inst`]) with the same semantics, so
//! both shader cores run one implementation of the VALU, SALU, memory, LDS and atomics.
//!
//! What the lowering changes:
//! - the opcode: GFX11 renamed most instructions (`global_load_b32` is GFX9's
//!   `global_load_dword`, `v_add_nc_u32` is `v_add_u32`, `s_and_not1_b32` is `s_andn2_b32`);
//!   the wave32 `*_saveexec_b32` forms become the `_b64` ones, which the interpreter runs on
//!   a lane mask of the wave's width ([`crate::gpu::shader::wave::Wave::wave32`]);
//! - the scalar operand map: GFX11's M0 is code 125 (GFX9: 124), code 124 is `null` (reads
//!   0, writes dropped);
//! - implicit operands LLVM leaves out of the GFX11 table rows (`vcc_lo` of e32 carries,
//!   compares and `v_cndmask_b32`) and the `v_cmpx` rule (GFX10+ writes EXEC only);
//! - VOPD: the two halves become two instructions, ordered (or one source copied first) so
//!   that both read their operands before either writes, as the dual-issue hardware does;
//! - what GFX9 lacks: DPP8 and the GFX10+ DPP16 controls (`dpp.rs`), VINTERP as DPP8 gathers
//!   and an FMA (`vinterp.rs`), WMMA and `v_permlane16`/`x16` carrying their operation in
//!   [`Extra`] (`wmma.rs`, `permlane.rs`), MTBUF as MUBUF's format access with the
//!   instruction's format;
//! - hints and waits without architectural effect here (`s_delay_alu`, `s_clause`,
//!   `s_waitcnt_*`, `buffer_gl*_inv`, `s_sendmsg` of `MSG_DEALLOC_VGPRS`) become `s_nop` or
//!   `s_waitcnt`.
//!
//! An instruction with no GFX9 counterpart fails with [`DecodeError::NotSimulated`], which the
//! run loop reports as an illegal instruction naming it.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::gpu::shader::decode::{DecodeError, ds_has_two_offsets};
use crate::gpu::shader::gfx11::decode::decode;
use crate::gpu::shader::gfx11::isa::{self as g11, Encoding as E11, RowFlags};
use crate::gpu::shader::gfx11::true16;
use crate::gpu::shader::isa::{CachePolicy, Encoding, Extra, Family, Inst, Mem, Op, Operand, Ty};
use crate::gpu::shader::wave::{M0, NULL_SINK, VCC};

/// GFX11's `null` SGPR code.
const NULL: u8 = 124;
/// GFX11's M0 code.
const M0_CODE: u8 = 125;
/// A vector row no GFX11 instruction names (GFX9's last AGPR; GFX11 has none): where a VOPD
/// source is copied when the two halves would otherwise see each other's results, and where
/// a composite instruction keeps its intermediate value.
const VOPD_TEMP: u16 = 511;
/// `s_sendmsg_rtn` id of `MSG_RTN_GET_REALTIME`.
const MSG_RTN_GET_REALTIME: u32 = 0x83;
/// `s_sendmsg` id of `MSG_DEALLOC_VGPRS` on GFX11 (a hint: the wave is about to end).
const MSG_DEALLOC_VGPRS: u32 = 3;

/// A GFX11 instruction as the interpreter runs it: one GFX9 instruction, and for VOPD the
/// ones that follow it at the same PC.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The instruction (its `dwords` is the GFX11 instruction's length).
    pub first: Inst,
    /// Further instructions executed at the same PC, in order.
    pub more: Vec<Inst>,
}

/// Decode the GFX11 instruction at `words[0]` and lower it.
pub fn decode_lowered(words: &[u32]) -> Result<Lowered, DecodeError> {
    lower(&decode(words)?)
}

/// Lower a decoded GFX11 instruction.
pub fn lower(g: &g11::Inst) -> Result<Lowered, DecodeError> {
    if let Some(nop) = hint(g) {
        return Ok(Lowered {
            first: nop,
            more: Vec::new(),
        });
    }
    if g.enc == E11::Vopd {
        return vopd(g);
    }
    if g.enc == E11::Vinterp {
        let mut seq = super::vinterp::lower_vinterp(g)?;
        let first = seq.remove(0);
        return Ok(Lowered { first, more: seq });
    }
    if let Some(lowered) = composite(g) {
        return Ok(lowered);
    }
    if let Some(mut first) =
        super::wmma::lower_wmma(g).or_else(|| super::permlane::lower_permlane(g))
    {
        first.src = first.src.map(src);
        return Ok(Lowered {
            first,
            more: Vec::new(),
        });
    }
    let op = gfx9_op(g.op.name())
        .or_else(|| true16::twin(g.op.name()))
        .ok_or(DecodeError::NotSimulated(g.op.name()))?;
    let sig = op.info().sig;
    let enc = match g.enc {
        E11::Sop1 => Encoding::Sop1,
        E11::Sop2 => Encoding::Sop2,
        E11::Sopk => Encoding::Sopk,
        E11::Sopc => Encoding::Sopc,
        E11::Sopp => Encoding::Sopp,
        E11::Smem => Encoding::Smem,
        E11::Vop1 => Encoding::Vop1,
        E11::Vop2 => Encoding::Vop2,
        E11::Vopc => Encoding::Vopc,
        E11::Vop3 => Encoding::Vop3,
        E11::Vop3p => Encoding::Vop3p,
        E11::Ds => Encoding::Ds,
        E11::Flat => Encoding::Flat,
        // MTBUF is MUBUF's `buffer_*_format_*` with the format from the instruction.
        E11::Mubuf | E11::Mtbuf => Encoding::Mubuf,
        E11::Vopd | E11::Vinterp | E11::Mimg => {
            return Err(DecodeError::NotSimulated(g.op.name()));
        }
    };
    let mut inst = Inst::new(op, enc, g.dwords);
    inst.dst = dst(g.dst);
    inst.sdst = dst(g.sdst);
    inst.src = g.src.map(src);
    inst.mods = g.mods;
    match g.enc {
        E11::Sopk => {
            inst.extra = Extra::Imm(g.imm);
            // GFX9's SOPK keeps a read SDST in source 0 (compares, s_addk).
            if sig[2] != Ty::N && !matches!(g.src[0], Operand::Literal { .. }) {
                inst.src[0] = src(g.dst);
            }
            if sig[0] == Ty::N {
                inst.dst = Operand::None;
            }
        }
        E11::Sopp => inst.extra = Extra::Imm(g.imm),
        E11::Smem => smem(g, &mut inst),
        E11::Vop1 | E11::Vop2 | E11::Vopc | E11::Vop3 | E11::Vop3p => valu(g, &mut inst)?,
        E11::Ds => ds(g, &mut inst),
        E11::Flat | E11::Mubuf | E11::Mtbuf => vmem(g, &mut inst),
        _ => {}
    }
    // 16-bit operands name register halves and keep the other half (see `true16`).
    let (first, more) = true16::halves(g, inst)?;
    Ok(Lowered { first, more })
}

/// The `s_nop`/`s_waitcnt` an instruction without architectural effect here becomes.
fn hint(g: &g11::Inst) -> Option<Inst> {
    let name = g.op.name();
    let op = match name {
        "s_delay_alu"
        | "s_clause"
        | "s_waitcnt_depctr"
        | "s_set_inst_prefetch_distance"
        | "buffer_gl0_inv"
        | "buffer_gl1_inv"
        | "s_nop" => Op::SNop,
        "s_sendmsg" if g.imm & 0xff == MSG_DEALLOC_VGPRS => Op::SNop,
        // Memory operations complete in order here; the waits keep their fence.
        _ if name.starts_with("s_waitcnt") => Op::SWaitcnt,
        _ => return None,
    };
    Some(Inst::new(op, Encoding::Sopp, g.dwords))
}

/// GFX11 instructions that are a short sequence of GFX9 ones: `v_xor3_b32` (two XORs through
/// [`VOPD_TEMP`]; no modifiers, the VOP3 has none for it) and `s_sendmsg_rtn_b64` of
/// `MSG_RTN_GET_REALTIME` (the GFX9 `s_memrealtime`: the same 100 MHz counter; LLVM lowers
/// `llvm.readsteadycounter` to one or the other).
fn composite(g: &g11::Inst) -> Option<Lowered> {
    match g.op.name() {
        "v_xor3_b32" => {
            let mut first = Inst::new(Op::VXorB32, Encoding::Vop3, g.dwords);
            first.dst = Operand::Vgpr(VOPD_TEMP);
            first.src = [src(g.src[0]), src(g.src[1]), Operand::None];
            let mut second = Inst::new(Op::VXorB32, Encoding::Vop3, g.dwords);
            second.dst = g.dst;
            second.src = [Operand::Vgpr(VOPD_TEMP), src(g.src[2]), Operand::None];
            Some(Lowered {
                first,
                more: vec![second],
            })
        }
        "s_sendmsg_rtn_b64" if g.imm == MSG_RTN_GET_REALTIME => {
            let mut inst = Inst::new(Op::SMemrealtime, Encoding::Smem, g.dwords);
            inst.dst = dst(g.dst);
            inst.extra = Extra::Mem(Mem::default());
            Some(Lowered {
                first: inst,
                more: Vec::new(),
            })
        }
        _ => None,
    }
}

/// A GFX11 source operand in GFX9 terms.
fn src(op: Operand) -> Operand {
    match op {
        Operand::Sgpr(NULL) => Operand::Inline(0),
        Operand::Sgpr(M0_CODE) => Operand::Sgpr(M0 as u8),
        other => other,
    }
}

/// A GFX11 destination in GFX9 terms.
fn dst(op: Operand) -> Operand {
    match op {
        Operand::Sgpr(NULL) => Operand::Sgpr(NULL_SINK as u8),
        Operand::Sgpr(M0_CODE) => Operand::Sgpr(M0 as u8),
        other => other,
    }
}

fn valu(g: &g11::Inst, inst: &mut Inst) -> Result<(), DecodeError> {
    let vcc = Operand::Sgpr(VCC as u8);
    let name = g.op.name();
    if g.row.flags.has(RowFlags::K) {
        inst.extra = Extra::Imm(g.imm);
    }
    if let Some(dpp) = g.dpp {
        super::dpp::lower_dpp(dpp, inst, name)?;
    }
    if name.starts_with("v_cmpx_") {
        // GFX10+: v_cmpx writes EXEC and nothing else.
        inst.dst = Operand::None;
    } else if g.enc == E11::Vopc {
        inst.dst = vcc;
    }
    if g.enc == E11::Vop2 && g.row.flags.has(RowFlags::VCC) {
        // The e32 carries (`v_add_co_ci_u32_e32 v1, vcc_lo, v2, v3, vcc_lo`) and
        // `v_cndmask_b32_e32` read VCC; the carries write it too.
        inst.src[2] = vcc;
        if name != "v_cndmask_b32" {
            inst.sdst = vcc;
        }
    }
    Ok(())
}

fn smem(g: &g11::Inst, inst: &mut Inst) {
    let sig = inst.op.info().sig;
    inst.src = [Operand::None; 3];
    if sig[2] != Ty::N {
        inst.src[0] = g.mem.sbase;
    }
    if sig[0] == Ty::N {
        inst.dst = Operand::None;
    }
    let mut mem = Mem {
        offset: g.mem.offset,
        cpol: CachePolicy {
            glc: g.mem.glc,
            ..CachePolicy::default()
        },
        smem_imm: true,
        ..Mem::default()
    };
    if g.mem.soffset.is_some() {
        mem.soffset_en = true;
        inst.src[1] = src(g.mem.soffset);
    }
    inst.extra = Extra::Mem(mem);
}

fn ds(g: &g11::Inst, inst: &mut Inst) {
    let sig = inst.op.info().sig;
    let [addr, mut data0, mut data1] = g.src;
    if inst.op == Op::DsCmpstRtnB32
        || inst.op == Op::DsCmpstB32
        || inst.op == Op::DsCmpstRtnB64
        || inst.op == Op::DsCmpstB64
    {
        // GFX11's ds_cmpstore takes the new value first, GFX9's ds_cmpst the compare value.
        std::mem::swap(&mut data0, &mut data1);
    }
    let keep = |ty: Ty, op: Operand| if ty == Ty::N { Operand::None } else { op };
    inst.dst = keep(sig[0], g.dst);
    inst.src = [keep(sig[2], addr), keep(sig[3], data0), keep(sig[4], data1)];
    let offset = if ds_has_two_offsets(inst.op) {
        g.mem.offset
    } else {
        i32::from(g.mem.offset1) << 8 | g.mem.offset
    };
    inst.extra = Extra::Mem(Mem {
        offset,
        offset1: if ds_has_two_offsets(inst.op) {
            g.mem.offset1
        } else {
            0
        },
        gds: g.mem.gds,
        ..Mem::default()
    });
}

fn vmem(g: &g11::Inst, inst: &mut Inst) {
    let sig = inst.op.info().sig;
    let family = inst.op.info().family;
    let atomic = inst.op.name().contains("_atomic_");
    inst.dst = if sig[0] != Ty::N && (!atomic || g.mem.glc) {
        g.dst
    } else {
        Operand::None
    };
    let data = if sig[3] == Ty::N {
        Operand::None
    } else {
        g.src[1]
    };
    let cpol = CachePolicy {
        glc: g.mem.glc,
        slc: g.mem.slc,
        scc: false,
    };
    if matches!(g.enc, E11::Mubuf | E11::Mtbuf) {
        let srsrc = match g.mem.sbase {
            Operand::Sgpr(n) => n,
            _ => 0,
        };
        inst.src = [
            if g.mem.offen || g.mem.idxen {
                g.src[0]
            } else {
                Operand::None
            },
            data,
            src(g.mem.soffset),
        ];
        inst.extra = Extra::Mem(Mem {
            offset: g.mem.offset,
            cpol,
            offen: g.mem.offen,
            idxen: g.mem.idxen,
            srsrc,
            format: g.mem.format,
            ..Mem::default()
        });
        return;
    }
    let vaddr = if family == Family::Scratch && !g.mem.sve {
        Operand::None
    } else {
        g.src[0]
    };
    inst.src = [vaddr, data, src(g.mem.sbase)];
    inst.extra = Extra::Mem(Mem {
        offset: g.mem.offset,
        cpol,
        ..Mem::default()
    });
}

/// One half of a VOPD as a VOP1/VOP2 instruction.
fn vopd_half(
    row: &'static g11::Row,
    dst: Operand,
    srcs: [Operand; 2],
    k: u32,
) -> Result<Inst, DecodeError> {
    let name = row.op.name();
    let op = gfx9_op(name).ok_or(DecodeError::NotSimulated(name))?;
    let enc = if op.info().family == Family::Vop1 {
        Encoding::Vop1
    } else {
        Encoding::Vop2
    };
    let mut inst = Inst::new(op, enc, 1);
    inst.dst = dst;
    inst.src = [src(srcs[0]), srcs[1], Operand::None];
    if enc == Encoding::Vop1 {
        inst.src[1] = Operand::None;
    }
    if row.flags.has(RowFlags::K) {
        inst.extra = Extra::Imm(k);
    }
    if op == Op::VCndmaskB32 {
        inst.src[2] = Operand::Sgpr(VCC as u8);
    }
    Ok(inst)
}

/// VOPD: X then Y, unless Y reads X's destination (then Y first), or each reads the other's
/// (then the source Y reads is copied aside first).
fn vopd(g: &g11::Inst) -> Result<Lowered, DecodeError> {
    let Some((y_row, y_dst, y_src)) = g.dual else {
        return Err(DecodeError::NotSimulated(g.op.name()));
    };
    let mut x = vopd_half(g.row, g.dst, [g.src[0], g.src[1]], g.imm)?;
    x.dwords = g.dwords;
    let mut y = vopd_half(y_row, y_dst, y_src, g.imm)?;
    y.dwords = g.dwords;
    // The accumulating halves (fmac, dot2acc) also read their own destination.
    let reads = |i: &Inst, r: Operand| i.src.contains(&r) || (accumulates(i.op) && i.dst == r);
    let y_reads_x = reads(&y, x.dst);
    let x_reads_y = reads(&x, y.dst);
    Ok(match (y_reads_x, x_reads_y) {
        (false, _) => Lowered {
            first: x,
            more: vec![y],
        },
        (true, false) => Lowered {
            first: y,
            more: vec![x],
        },
        (true, true) => {
            let mut copy = Inst::new(Op::VMovB32, Encoding::Vop1, g.dwords);
            copy.dst = Operand::Vgpr(VOPD_TEMP);
            copy.src[0] = x.dst;
            for s in &mut y.src {
                if *s == x.dst {
                    *s = Operand::Vgpr(VOPD_TEMP);
                }
            }
            Lowered {
                first: copy,
                more: vec![x, y],
            }
        }
    })
}

/// Whether a VOP2 opcode reads its destination as an accumulator.
fn accumulates(op: Op) -> bool {
    matches!(op, Op::VFmacF32 | Op::VDot2cF32F16)
}

/// The GFX9 opcode with a GFX11 mnemonic's semantics, if there is one.
pub fn gfx9_op(gfx11_name: &str) -> Option<Op> {
    static BY_NAME: OnceLock<HashMap<&'static str, Op>> = OnceLock::new();
    let by_name = BY_NAME.get_or_init(|| Op::ALL.iter().map(|&op| (op.name(), op)).collect());
    by_name.get(gfx9_name(gfx11_name).as_str()).copied()
}

/// Opcodes renamed whole between GFX9 and GFX11 (GFX11 name, GFX9 name).
const RENAMED: &[(&str, &str)] = &[
    ("v_add_nc_u32", "v_add_u32"),
    ("v_sub_nc_u32", "v_sub_u32"),
    ("v_subrev_nc_u32", "v_subrev_u32"),
    ("v_add_nc_u16", "v_add_u16"),
    ("v_sub_nc_u16", "v_sub_u16"),
    ("v_add_co_ci_u32", "v_addc_co_u32"),
    ("v_sub_co_ci_u32", "v_subb_co_u32"),
    ("v_subrev_co_ci_u32", "v_subbrev_co_u32"),
    ("v_mul_dx9_zero_f32", "v_mul_legacy_f32"),
    ("v_dot2acc_f32_f16", "v_dot2c_f32_f16"),
    ("v_cvt_floor_i32_f32", "v_cvt_flr_i32_f32"),
    ("v_cvt_nearest_i32_f32", "v_cvt_rpi_i32_f32"),
    ("v_ctz_i32_b32", "v_ffbl_b32"),
    ("v_clz_i32_u32", "v_ffbh_u32"),
    ("v_cls_i32", "v_ffbh_i32"),
    ("s_ctz_i32_b32", "s_ff1_i32_b32"),
    ("s_ctz_i32_b64", "s_ff1_i32_b64"),
    ("s_clz_i32_u32", "s_flbit_i32_b32"),
    ("s_clz_i32_u64", "s_flbit_i32_b64"),
    ("s_cls_i32", "s_flbit_i32"),
    ("s_cls_i32_i64", "s_flbit_i32_i64"),
    ("ds_cmpstore_b32", "ds_cmpst_b32"),
    ("ds_cmpstore_rtn_b32", "ds_cmpst_rtn_b32"),
    ("ds_cmpstore_b64", "ds_cmpst_b64"),
    ("ds_cmpstore_rtn_b64", "ds_cmpst_rtn_b64"),
    ("ds_storexchg_rtn_b32", "ds_wrxchg_rtn_b32"),
    ("ds_storexchg_rtn_b64", "ds_wrxchg_rtn_b64"),
];

/// Memory data-size suffixes (GFX11, GFX9) of VMEM loads and stores.
const VMEM_SIZES: &[(&str, &str)] = &[
    ("load_b32", "load_dword"),
    ("load_b64", "load_dwordx2"),
    ("load_b96", "load_dwordx3"),
    ("load_b128", "load_dwordx4"),
    ("store_b32", "store_dword"),
    ("store_b64", "store_dwordx2"),
    ("store_b96", "store_dwordx3"),
    ("store_b128", "store_dwordx4"),
    ("load_u8", "load_ubyte"),
    ("load_i8", "load_sbyte"),
    ("load_u16", "load_ushort"),
    ("load_i16", "load_sshort"),
    ("store_b8", "store_byte"),
    ("store_b16", "store_short"),
    ("load_d16_u8", "load_ubyte_d16"),
    ("load_d16_i8", "load_sbyte_d16"),
    ("load_d16_b16", "load_short_d16"),
    ("load_d16_hi_u8", "load_ubyte_d16_hi"),
    ("load_d16_hi_i8", "load_sbyte_d16_hi"),
    ("load_d16_hi_b16", "load_short_d16_hi"),
    ("store_d16_hi_b8", "store_byte_d16_hi"),
    ("store_d16_hi_b16", "store_short_d16_hi"),
];

/// Atomic operations (GFX11, GFX9) of VMEM, 32-bit; the 64-bit ones add `_x2` on GFX9.
const VMEM_ATOMICS: &[(&str, &str)] = &[
    ("add_u", "add"),
    ("sub_u", "sub"),
    ("swap_b", "swap"),
    ("cmpswap_b", "cmpswap"),
    ("and_b", "and"),
    ("or_b", "or"),
    ("xor_b", "xor"),
    ("min_i", "smin"),
    ("max_i", "smax"),
    ("min_u", "umin"),
    ("max_u", "umax"),
    ("inc_u", "inc"),
    ("dec_u", "dec"),
];

/// A GFX11 mnemonic spelt as GFX9 spells the same operation.
fn gfx9_name(name: &str) -> String {
    if let Some(&(_, old)) = RENAMED.iter().find(|(new, _)| *new == name) {
        return old.to_owned();
    }
    if let Some(rest) = name.strip_prefix("v_dual_") {
        return gfx9_name(&format!("v_{rest}"));
    }
    let mut n = name.replace("_not1", "n2").replace("_not0", "n1");
    if n.contains("saveexec_b32") || n.contains("wrexec_b32") {
        // Wave32's EXEC forms: the interpreter's lane masks follow the wave's width.
        n = n.replace("_b32", "_b64");
    }
    for prefix in ["s_load_", "s_buffer_load_", "s_store_", "s_buffer_store_"] {
        if let Some(size) = n.strip_prefix(prefix) {
            let gfx9 = match size {
                "b32" => "dword",
                "b64" => "dwordx2",
                "b128" => "dwordx4",
                "b256" => "dwordx8",
                "b512" => "dwordx16",
                _ => return n,
            };
            return format!("{prefix}{gfx9}");
        }
    }
    if let Some(rest) = n.strip_prefix("ds_") {
        let rest = rest
            .replace("load_2addr_stride64_", "read2st64_")
            .replace("store_2addr_stride64_", "write2st64_")
            .replace("load_2addr_", "read2_")
            .replace("store_2addr_", "write2_");
        let rest = if let Some(r) = rest.strip_prefix("load_") {
            format!("read_{r}")
        } else if let Some(r) = rest.strip_prefix("store_") {
            format!("write_{r}")
        } else {
            rest
        };
        return format!("ds_{rest}");
    }
    if let Some(rest) = n.strip_prefix("tbuffer_") {
        // tbuffer_load_d16_format_x is GFX9's (MUBUF) buffer_load_format_d16_x.
        return format!("buffer_{}", rest.replace("d16_format_", "format_d16_"));
    }
    for segment in ["global_", "flat_", "scratch_", "buffer_"] {
        let Some(rest) = n.strip_prefix(segment) else {
            continue;
        };
        if let Some(&(_, old)) = VMEM_SIZES.iter().find(|(new, _)| *new == rest) {
            return format!("{segment}{old}");
        }
        if let Some(atomic) = rest.strip_prefix("atomic_") {
            for (new, old) in VMEM_ATOMICS {
                if let Some(bits) = atomic.strip_prefix(new) {
                    let wide = match bits {
                        "32" => "",
                        "64" => "_x2",
                        _ => continue,
                    };
                    return format!("{segment}atomic_{old}{wide}");
                }
            }
        }
        return n;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renamed_opcodes_find_their_gfx9_twin() {
        for (gfx11, gfx9) in [
            ("global_load_b32", "global_load_dword"),
            ("scratch_store_b128", "scratch_store_dwordx4"),
            ("global_atomic_cmpswap_b64", "global_atomic_cmpswap_x2"),
            ("global_atomic_min_i32", "global_atomic_smin"),
            ("ds_load_2addr_stride64_b32", "ds_read2st64_b32"),
            ("ds_store_b32", "ds_write_b32"),
            ("s_load_b128", "s_load_dwordx4"),
            ("s_and_not1_saveexec_b32", "s_andn2_saveexec_b64"),
            ("s_and_not1_b32", "s_andn2_b32"),
            ("v_add_co_ci_u32", "v_addc_co_u32"),
            ("v_dual_mov_b32", "v_mov_b32"),
            ("v_cmpx_gt_u32", "v_cmpx_gt_u32"),
            ("tbuffer_load_format_xy", "buffer_load_format_xy"),
            (
                "tbuffer_store_d16_format_xyzw",
                "buffer_store_format_d16_xyzw",
            ),
        ] {
            assert_eq!(gfx9_op(gfx11).map(Op::name), Some(gfx9), "{gfx11}");
        }
        assert_eq!(gfx9_op("v_xor3_b32"), None, "gfx90a has no v_xor3_b32");
        assert_eq!(gfx9_op("v_wmma_f32_16x16x16_f16"), None);
    }
}
