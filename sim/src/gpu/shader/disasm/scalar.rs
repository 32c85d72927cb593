//! Scalar instructions: operands, s_waitcnt counters, hwreg(), sendmsg() and branch offsets.

use std::fmt::Write;

use super::Operands;
use super::operand::{imm32, operand, sgpr};
use crate::gpu::shader::isa::{Encoding, Inst, Op, Operand, Ty};
use crate::gpu::target::GfxTarget;

pub fn write(out: &mut String, inst: &Inst, target: GfxTarget) {
    let info = inst.op.info();
    out.push_str(info.name);
    let sig = info.sig;
    match inst.enc {
        Encoding::Sop1 | Encoding::Sop2 | Encoding::Sopc => {
            let mut ops = Operands::new(out);
            if inst.dst.is_some() {
                operand(ops.next(), inst.dst, sig[0]);
            }
            for i in 0..2 {
                if inst.src[i].is_some() {
                    operand(ops.next(), inst.src[i], sig[2 + i]);
                }
            }
            if inst.op == Op::SSetGprIdxOn {
                gpr_idx(ops.next(), inst.imm());
            }
        }
        Encoding::Sopk => sopk(out, inst, target),
        Encoding::Sopp => sopp(out, inst),
        Encoding::Smem => smem(out, inst),
        _ => {}
    }
}

/// A VGPR-indexing mode: `gpr_idx(...)` for a 4-bit mode, else the raw value.
fn gpr_idx(out: &mut String, mode: u32) {
    if mode > 0xf {
        let _ = write!(out, "0x{mode:x}");
        return;
    }
    out.push_str("gpr_idx(");
    let names = ["SRC0", "SRC1", "SRC2", "DST"];
    let mut first = true;
    for (i, n) in names.iter().enumerate() {
        if mode & (1 << i) != 0 {
            if !first {
                out.push(',');
            }
            out.push_str(n);
            first = false;
        }
    }
    out.push(')');
}

fn hwreg(out: &mut String, imm: u32, target: GfxTarget) {
    let id = imm & 0x3f;
    let offset = (imm >> 6) & 0x1f;
    let size = ((imm >> 11) & 0x1f) + 1;
    let name = match id {
        1 => Some("HW_REG_MODE"),
        2 => Some("HW_REG_STATUS"),
        3 => Some("HW_REG_TRAPSTS"),
        4 => Some("HW_REG_HW_ID"),
        5 => Some("HW_REG_GPR_ALLOC"),
        6 => Some("HW_REG_LDS_ALLOC"),
        7 => Some("HW_REG_IB_STS"),
        15 => Some("HW_REG_SH_MEM_BASES"),
        16 => Some("HW_REG_TBA_LO"),
        17 => Some("HW_REG_TBA_HI"),
        18 => Some("HW_REG_TMA_LO"),
        19 => Some("HW_REG_TMA_HI"),
        20 if target == GfxTarget::Gfx942 => Some("HW_REG_XCC_ID"),
        21 if target == GfxTarget::Gfx942 => Some("HW_REG_SQ_PERF_SNAPSHOT_DATA"),
        22 if target == GfxTarget::Gfx942 => Some("HW_REG_SQ_PERF_SNAPSHOT_DATA1"),
        23 if target == GfxTarget::Gfx942 => Some("HW_REG_SQ_PERF_SNAPSHOT_PC_LO"),
        24 if target == GfxTarget::Gfx942 => Some("HW_REG_SQ_PERF_SNAPSHOT_PC_HI"),
        _ => None,
    };
    out.push_str("hwreg(");
    match name {
        Some(n) => out.push_str(n),
        None => {
            let _ = write!(out, "{id}");
        }
    }
    if !(offset == 0 && size == 32) {
        let _ = write!(out, ", {offset}, {size}");
    }
    out.push(')');
}

fn sopk(out: &mut String, inst: &Inst, target: GfxTarget) {
    let sig = inst.op.info().sig;
    let imm = inst.imm();
    let mut ops = Operands::new(out);
    match inst.op {
        Op::SGetregB32 => {
            operand(ops.next(), inst.dst, sig[0]);
            hwreg(ops.next(), imm, target);
        }
        Op::SSetregB32 => {
            hwreg(ops.next(), imm, target);
            operand(ops.next(), inst.src[0], Ty::B32);
        }
        Op::SSetregImm32B32 => {
            hwreg(ops.next(), imm, target);
            if let Operand::Literal { raw, .. } = inst.src[0] {
                imm32(ops.next(), raw);
            }
        }
        Op::SCbranchIFork | Op::SCallB64 => {
            if inst.dst.is_some() {
                operand(ops.next(), inst.dst, sig[0]);
            }
            // LLVM prints the branch offset unsigned.
            let _ = write!(ops.next(), "{}", imm as u16);
        }
        _ => {
            if inst.dst.is_some() {
                operand(ops.next(), inst.dst, sig[0]);
            } else if inst.src[0].is_some() {
                operand(ops.next(), inst.src[0], sig[2]);
            }
            let _ = write!(ops.next(), "0x{imm:x}");
        }
    }
}

/// The s_waitcnt fields of GFX9: vmcnt 3:0 and 15:14, expcnt 6:4, lgkmcnt 11:8.
pub fn waitcnt_fields(imm: u32) -> (u32, u32, u32) {
    let vm = (imm & 0xf) | ((imm >> 14) & 3) << 4;
    let exp = (imm >> 4) & 7;
    let lgkm = (imm >> 8) & 0xf;
    (vm, exp, lgkm)
}

fn waitcnt(out: &mut String, imm: u32) {
    let (vm, exp, lgkm) = waitcnt_fields(imm);
    let all = vm == 63 && exp == 7 && lgkm == 15;
    let mut parts = Vec::with_capacity(3);
    if vm != 63 || all {
        parts.push(format!("vmcnt({vm})"));
    }
    if exp != 7 || all {
        parts.push(format!("expcnt({exp})"));
    }
    if lgkm != 15 || all {
        parts.push(format!("lgkmcnt({lgkm})"));
    }
    out.push(' ');
    out.push_str(&parts.join(" "));
}

/// s_sendmsg's operand as LLVM prints it: a valid message symbolically (bits outside the
/// fields ignored), else the fields as numbers when they encode the whole value, else the raw
/// value.
fn sendmsg(out: &mut String, imm: u32) {
    let msg = imm & 0xf;
    let op = (imm >> 4) & 7;
    let stream = (imm >> 8) & 3;
    let simple = match msg {
        1 => Some("MSG_INTERRUPT"),
        4 => Some("MSG_SAVEWAVE"),
        5 => Some("MSG_STALL_WAVE_GEN"),
        6 => Some("MSG_HALT_WAVES"),
        7 => Some("MSG_ORDERED_PS_DONE"),
        8 => Some("MSG_EARLY_PRIM_DEALLOC"),
        9 => Some("MSG_GS_ALLOC_REQ"),
        10 => Some("MSG_GET_DOORBELL"),
        _ => None,
    };
    let gs_op =
        |op: u32| ["GS_OP_NOP", "GS_OP_CUT", "GS_OP_EMIT", "GS_OP_EMIT_CUT"].get(op as usize);
    let text = match (msg, simple) {
        (_, Some(name)) if op == 0 && stream == 0 => Some(name.to_string()),
        (2, _) if (1..=3).contains(&op) => gs_op(op).map(|o| format!("MSG_GS, {o}, {stream}")),
        (3, _) if op == 0 && stream == 0 => Some("MSG_GS_DONE, GS_OP_NOP".to_string()),
        (3, _) if (1..=3).contains(&op) => gs_op(op).map(|o| format!("MSG_GS_DONE, {o}, {stream}")),
        (15, _) if stream == 0 => match op {
            1 => Some("MSG_SYSMSG, SYSMSG_OP_ECC_ERR_INTERRUPT".to_string()),
            2 => Some("MSG_SYSMSG, SYSMSG_OP_REG_RD".to_string()),
            4 => Some("MSG_SYSMSG, SYSMSG_OP_TTRACE_PC".to_string()),
            _ => None,
        },
        _ => None,
    };
    let _ = match text {
        Some(text) => write!(out, " sendmsg({text})"),
        None if msg | op << 4 | stream << 8 == imm => {
            write!(out, " sendmsg({msg}, {op}, {stream})")
        }
        None => write!(out, " {imm}"),
    };
}

fn sopp(out: &mut String, inst: &Inst) {
    let imm = inst.imm();
    match inst.op {
        Op::SWaitcnt => waitcnt(out, imm),
        Op::SSendmsg | Op::SSendmsghalt => sendmsg(out, imm),
        Op::SBranch
        | Op::SCbranchScc0
        | Op::SCbranchScc1
        | Op::SCbranchVccz
        | Op::SCbranchVccnz
        | Op::SCbranchExecz
        | Op::SCbranchExecnz
        | Op::SCbranchCdbgsys
        | Op::SCbranchCdbguser
        | Op::SCbranchCdbgsysOrUser
        | Op::SCbranchCdbgsysAndUser => {
            let _ = write!(out, " {}", imm as u16);
        }
        Op::SEndpgm if imm != 0 => {
            let _ = write!(out, " {imm}");
        }
        Op::SSetGprIdxMode => {
            out.push(' ');
            gpr_idx(out, imm);
        }
        Op::SNop
        | Op::SSetkill
        | Op::SSethalt
        | Op::SSleep
        | Op::SSetprio
        | Op::STrap
        | Op::SIncperflevel
        | Op::SDecperflevel => {
            out.push(' ');
            u16_imm(out, imm);
        }
        _ => {}
    }
}

/// A 16-bit immediate as LLVM prints it: up to 64 in decimal, above in hex.
fn u16_imm(out: &mut String, imm: u32) {
    if imm <= 64 {
        let _ = write!(out, "{imm}");
    } else {
        let _ = write!(out, "0x{imm:x}");
    }
}

fn smem(out: &mut String, inst: &Inst) {
    let sig = inst.op.info().sig;
    let mem = inst.mem();
    let mut ops = Operands::new(out);
    if matches!(inst.op, Op::SAtcProbe | Op::SAtcProbeBuffer) {
        u16_imm(ops.next(), u32::from(mem.offset1));
    }
    if inst.dst.is_some() {
        operand(ops.next(), inst.dst, sig[0]);
    }
    if let Operand::Sgpr(base) = inst.src[0] {
        sgpr(ops.next(), base, sig[2].dwords());
        let o = ops.next();
        match (mem.soffset_en, inst.src[1]) {
            (true, Operand::Sgpr(s)) => {
                sgpr(o, s, 1);
                if mem.smem_imm {
                    let _ = write!(o, " offset:{}", hex_signed(mem.offset));
                }
            }
            _ => o.push_str(&hex_signed(mem.offset)),
        }
    }
    // Only the loads, stores and atomics have GLC in LLVM's syntax.
    let has_glc = !matches!(
        inst.op,
        Op::SMemtime
            | Op::SMemrealtime
            | Op::SDcacheInv
            | Op::SDcacheWb
            | Op::SDcacheInvVol
            | Op::SDcacheWbVol
            | Op::SAtcProbe
            | Op::SAtcProbeBuffer
            | Op::SDcacheDiscard
            | Op::SDcacheDiscardX2
    );
    if mem.cpol.glc && has_glc {
        out.push_str(" glc");
    }
}

fn hex_signed(v: i32) -> String {
    if v < 0 {
        format!("-0x{:x}", v.unsigned_abs())
    } else {
        format!("0x{v:x}")
    }
}
