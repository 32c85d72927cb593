//! SOP1, SOP2, SOPK, SOPC, SOPP and SMEM text.

use std::fmt::Write;

use super::operand::{operand, sgpr};
use super::symbolic;
use crate::gpu::shader::disasm::Operands;
use crate::gpu::shader::gfx11::isa::{Encoding, Inst, Op};
use crate::gpu::shader::isa::{Operand, Special, Ty};

/// Write a scalar instruction.
pub fn write(out: &mut String, inst: &Inst) {
    out.push_str(inst.op.name());
    let ty = inst.row.ty;
    match inst.enc {
        Encoding::Sopp => sopp(out, inst),
        Encoding::Sopk => sopk(out, inst),
        Encoding::Smem => smem(out, inst),
        _ => {
            let mut ops = Operands::new(out);
            if ty[0] != Ty::N {
                operand(ops.next(), inst.dst, ty[0]);
            }
            if inst.op == Op::SSendmsgRtnB64 || inst.op == Op::SSendmsgRtnB32 {
                symbolic::sendmsg_rtn(ops.next(), inst.imm);
                return;
            }
            for i in 0..2 {
                if ty[i + 1] != Ty::N {
                    let o = ops.next();
                    operand(o, inst.src[i], ty[i + 1]);
                    lds_direct_note(o, inst.src[i]);
                }
            }
        }
    }
}

/// Operand-less SOPP opcodes, the ones with a decimal and the ones with a hex immediate.
fn sopp(out: &mut String, inst: &Inst) {
    let imm = inst.imm;
    let name = inst.op.name();
    match inst.op {
        Op::SWaitcnt => symbolic::waitcnt(out, imm),
        Op::SDelayAlu => symbolic::delay_alu(out, imm),
        Op::SWaitcntDepctr => symbolic::depctr(out, imm),
        Op::SSendmsg | Op::SSendmsghalt => {
            out.push(' ');
            symbolic::sendmsg(out, imm);
        }
        Op::SEndpgm if imm == 0 => {}
        Op::SEndpgm => {
            let _ = write!(out, " {imm}");
        }
        Op::SClause
        | Op::SSetInstPrefetchDistance
        | Op::SRoundMode
        | Op::SWaitEvent
        | Op::STtracedataImm => {
            let _ = write!(out, " 0x{imm:x}");
        }
        Op::SCodeEnd
        | Op::SEndpgmSaved
        | Op::SWakeup
        | Op::STtracedata
        | Op::SIcacheInv
        | Op::SBarrier
        | Op::SWaitIdle => {}
        _ if name.starts_with("s_cbranch") || inst.op == Op::SBranch => {
            let _ = write!(out, " {imm}");
        }
        // Inline-constant-sized values in decimal, others in hex (LLVM's u16 immediates).
        _ if imm <= 64 => {
            let _ = write!(out, " {imm}");
        }
        _ => {
            let _ = write!(out, " 0x{imm:x}");
        }
    }
}

/// SOPK: a destination (or source) register and a 16-bit constant, or a hardware register.
fn sopk(out: &mut String, inst: &Inst) {
    let mut ops = Operands::new(out);
    let imm = inst.imm;
    match inst.op {
        Op::SGetregB32 => {
            operand(ops.next(), inst.dst, Ty::B32);
            symbolic::hwreg(ops.next(), imm);
        }
        Op::SSetregB32 => {
            symbolic::hwreg(ops.next(), imm);
            operand(ops.next(), inst.dst, Ty::B32);
        }
        Op::SSetregImm32B32 => {
            symbolic::hwreg(ops.next(), imm);
            if let Operand::Literal { raw, .. } = inst.src[0] {
                let _ = write!(ops.next(), "0x{raw:x}");
            }
        }
        Op::SVersion => {
            let _ = write!(ops.next(), "0x{imm:x}");
        }
        Op::SCallB64 => {
            operand(ops.next(), inst.dst, Ty::B64);
            let _ = write!(ops.next(), "{imm}");
        }
        Op::SSubvectorLoopBegin | Op::SSubvectorLoopEnd => {
            operand(ops.next(), inst.dst, Ty::B32);
            let _ = write!(ops.next(), "{imm}");
        }
        _ => {
            operand(ops.next(), inst.dst, Ty::B32);
            let _ = write!(ops.next(), "0x{imm:x}");
        }
    }
}

/// SMEM: data, base, then the offset: `null` for none, a register with `offset:` or a
/// constant.
fn smem(out: &mut String, inst: &Inst) {
    let ty = inst.row.ty[0];
    if ty == Ty::N {
        return;
    }
    let buffer = inst.op.name().starts_with("s_buffer") || inst.op == Op::SAtcProbeBuffer;
    let mut ops = Operands::new(out);
    let o = ops.next();
    if inst.op == Op::SAtcProbe || inst.op == Op::SAtcProbeBuffer {
        if let Operand::Sgpr(n) = inst.dst {
            let _ = write!(o, "{n}");
        }
    } else {
        operand(o, inst.dst, ty);
    }
    if let Operand::Sgpr(n) = inst.mem.sbase {
        sgpr(ops.next(), n, if buffer { 4 } else { 2 });
    }
    let offset = inst.mem.offset;
    let o = ops.next();
    match inst.mem.soffset {
        Operand::None if offset == 0 => o.push_str("null"),
        Operand::None => offset_text(o, offset),
        soffset => {
            operand(o, soffset, Ty::B32);
            if offset != 0 {
                o.push_str(" offset:");
                offset_text(o, offset);
            }
        }
    }
    if inst.mem.glc {
        out.push_str(" glc");
    }
    if inst.mem.dlc {
        out.push_str(" dlc");
    }
}

/// A signed SMEM offset in hex (`-0x10` for negative ones).
fn offset_text(out: &mut String, offset: i32) {
    if offset < 0 {
        let _ = write!(out, "-0x{:x}", offset.unsigned_abs());
    } else {
        let _ = write!(out, "0x{offset:x}");
    }
}

/// LLVM's note after `src_lds_direct` where it reads a 32-bit scalar operand (SOP1, SOP2,
/// SOPC sources, a buffer's soffset): the code is not in the SReg_32 class.
pub fn lds_direct_note(out: &mut String, op: Operand) {
    if op == Operand::Special(Special::LdsDirect) {
        out.push_str("/*Invalid register, operand has 'SReg_32' register class*/");
    }
}
