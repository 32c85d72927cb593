//! Program control (SOPP): branches, s_endpgm, s_barrier, s_waitcnt, s_sleep, s_sendmsg,
//! s_trap and the hints that have no architectural effect in the simulator.

use std::sync::atomic::{Ordering, fence};

use super::{Exec, R, Stop, unimplemented};
use crate::gpu::dispatch::DispatchError;
use crate::gpu::shader::isa::{Inst, Op};

/// `s_sendmsg` message ids (bits 3:0 of the immediate on GFX9).
const MSG_INTERRUPT: u32 = 1;

/// The trap code LLVM emits for `llvm.debugtrap`: without a debugger attached the trap
/// handler resumes the wave.
const TRAP_DEBUG: u16 = 3;

pub fn exec(e: &mut Exec, inst: &Inst) -> R {
    let imm = inst.imm();
    let offset = || (i64::from(imm as u16 as i16) * 4) as u64;
    let taken = match inst.op {
        Op::SBranch => true,
        Op::SCbranchScc0 => !e.w.scc,
        Op::SCbranchScc1 => e.w.scc,
        Op::SCbranchVccz => e.w.vcc() == 0,
        Op::SCbranchVccnz => e.w.vcc() != 0,
        Op::SCbranchExecz => e.w.exec() == 0,
        Op::SCbranchExecnz => e.w.exec() != 0,
        // No debugger: the CDBG conditions are false.
        Op::SCbranchCdbgsys
        | Op::SCbranchCdbguser
        | Op::SCbranchCdbgsysOrUser
        | Op::SCbranchCdbgsysAndUser => false,
        _ => return non_branch(e, inst),
    };
    if taken {
        e.w.pc = e.w.pc.wrapping_add(offset());
    }
    Ok(())
}

fn non_branch(e: &mut Exec, inst: &Inst) -> R {
    let imm = inst.imm();
    match inst.op {
        Op::SEndpgm => {
            e.w.ended = true;
            e.stop_with(Stop::Ended);
        }
        Op::SBarrier => {
            e.w.at_barrier = true;
            e.stop_with(Stop::Barrier);
        }
        // Memory operations complete before the next instruction in the simulator, so the
        // counters a wait names are always zero; a fence keeps host-visible ordering.
        Op::SWaitcnt => fence(Ordering::SeqCst),
        Op::SSleep => e.stop_with(Stop::Sleep),
        Op::SNop
        | Op::SSetprio
        | Op::SIcacheInv
        | Op::SIncperflevel
        | Op::SDecperflevel
        | Op::STtracedata
        | Op::SWakeup => {}
        Op::SSendmsg => {
            let msg = imm & 0xf;
            if msg != MSG_INTERRUPT {
                return Err(unimplemented(format!("s_sendmsg message {msg}")));
            }
            e.shared.interrupts.shader_message(e.w.m0() & 0x00ff_ffff);
        }
        Op::STrap => {
            let code = (imm & 0xff) as u16;
            if code != TRAP_DEBUG {
                return Err(DispatchError::Trap {
                    pc: e.w.pc.wrapping_sub(4),
                    code,
                }
                .into());
            }
        }
        Op::SSethalt | Op::SSendmsghalt | Op::SSetkill => {
            return Err(unimplemented("halting or killing the wave"));
        }
        _ => return Err(unimplemented("program-control opcode not simulated")),
    }
    Ok(())
}
