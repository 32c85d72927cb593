//! Moves and cross-lane operations: v_mov, v_readfirstlane, v_readlane, v_writelane, v_mbcnt,
//! v_swap.

use super::valu_loops::un32;
use super::{Exec, Fault, unimplemented};
use crate::gpu::shader::isa::{Inst, Op, Operand};
use crate::gpu::shader::wave::LANES;

pub fn exec(e: &mut Exec, inst: &Inst) -> Result<bool, Fault> {
    match inst.op {
        Op::VNop | Op::VClrexcp => {}
        Op::VMovB32 | Op::VAccvgprMovB32 => un32(e, inst, |a| a)?,
        Op::VMovB64 => {
            let a = e.src64(inst, 0)?;
            e.write_vdst64(inst, &a)?;
        }
        Op::VReadfirstlaneB32 => {
            let v = e.lanes32(inst.src[0])?;
            let exec = e.w.exec();
            let lane = if exec == 0 {
                0
            } else {
                exec.trailing_zeros() as usize
            };
            e.write_sdst32(inst.dst, v[lane])?;
        }
        Op::VReadlaneB32 => {
            let v = e.lanes32(inst.src[0])?;
            // The lane select wraps at the wave's width.
            let lane = e.scalar32(inst.src[1])? as usize & (e.w.lanes() - 1);
            e.write_sdst32(inst.dst, v[lane])?;
        }
        Op::VWritelaneB32 => {
            let value = e.scalar32(inst.src[0])?;
            let lane = e.scalar32(inst.src[1])? as usize & (e.w.lanes() - 1);
            let Operand::Vgpr(r) = inst.dst else {
                return Err(unimplemented("v_writelane to a non-VGPR"));
            };
            e.w.v_mut(usize::from(r))[lane] = value;
        }
        Op::VMbcntLoU32B32 | Op::VMbcntHiU32B32 => {
            let a = e.src32(inst, 0)?;
            let b = e.src32(inst, 1)?;
            let hi = inst.op == Op::VMbcntHiU32B32;
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                let below: u64 = (1u64 << l) - 1;
                let part = if hi {
                    (below >> 32) as u32
                } else {
                    below as u32
                };
                out[l] = (a[l] & part).count_ones().wrapping_add(b[l]);
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VSwapB32 => {
            let (Operand::Vgpr(d), Operand::Vgpr(s)) = (inst.dst, inst.src[0]) else {
                return Err(unimplemented("v_swap of non-VGPRs"));
            };
            let mask = e.w.exec();
            let dv = *e.w.v(usize::from(d));
            let sv = *e.w.v(usize::from(s));
            e.w.write_v(usize::from(d), &sv, mask);
            e.w.write_v(usize::from(s), &dv, mask);
        }
        _ => return Ok(false),
    }
    Ok(true)
}
