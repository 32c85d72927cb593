//! GFX10+ row permutes: `v_permlane16_b32` and `v_permlanex16_b32`, and GFX11's
//! `v_permlane64_b32` (the RDNA3 guide: wave64 lanes read `lane ^ 32`, whether that lane is
//! active or not; "treated as scalar NOP in wave32").
//!
//! Each lane `l` reads lane `sel` of a 16-lane row, `sel` being bits `4 (l % 16) + 3 : 4 (l % 16)`
//! of the 64-bit select `{src2, src1}`: its own row (`permlane16`) or the other row of its
//! 32-lane half (`permlanex16`). op_sel bit 0 is FI (a source lane outside EXEC is read like
//! an active one) and bit 1 BOUND_CTRL: without FI an inactive source lane makes the lane
//! read 0 with BOUND_CTRL, or keeps its old destination value without it (LLVM's
//! `llvm.amdgcn.permlane16(old, src, sel_lo, sel_hi, fi, bound_ctrl)`). Wave64 permutes
//! each 32-lane half on its own.

use super::{Exec, R, unimplemented};
use crate::gpu::shader::isa::{Extra, Inst, Operand};
use crate::gpu::shader::wave::{LANES, Lanes};

/// Execute a `v_permlane16_b32`, `v_permlanex16_b32` or `v_permlane64_b32`.
pub fn exec(e: &mut Exec, inst: &Inst) -> R {
    let cross = match inst.extra {
        Extra::Permlane16 { cross } => cross,
        Extra::Permlane64 => return permlane64(e, inst),
        _ => return Err(unimplemented("a permlane without its form")),
    };
    let Operand::Vgpr(d) = inst.dst else {
        return Err(unimplemented("a permlane destination outside the VGPRs"));
    };
    let src = e.lanes32(inst.src[0])?;
    let select = u64::from(e.scalar32(inst.src[1])?) | u64::from(e.scalar32(inst.src[2])?) << 32;
    let (fi, bound_ctrl) = (inst.mods.op_sel & 1 != 0, inst.mods.op_sel & 2 != 0);
    let exec = e.w.exec();
    let old = *e.w.v(usize::from(d));
    let out: Lanes = std::array::from_fn(|l| {
        let row = if cross { (l / 16) ^ 1 } else { l / 16 };
        let from = row * 16 + (select >> (4 * (l % 16)) & 0xf) as usize;
        if from < LANES && (fi || exec >> from & 1 != 0) {
            src[from]
        } else if bound_ctrl {
            0
        } else {
            old[l]
        }
    });
    e.w.write_v(usize::from(d), &out, exec);
    Ok(())
}

/// `v_permlane64_b32`.
fn permlane64(e: &mut Exec, inst: &Inst) -> R {
    if e.w.wave32 {
        return Ok(());
    }
    let Operand::Vgpr(d) = inst.dst else {
        return Err(unimplemented("a permlane destination outside the VGPRs"));
    };
    let src = e.lanes32(inst.src[0])?;
    let out: Lanes = std::array::from_fn(|l| src[l ^ 32]);
    let exec = e.w.exec();
    e.w.write_v(usize::from(d), &out, exec);
    Ok(())
}
