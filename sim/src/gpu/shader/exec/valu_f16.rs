//! Half-precision vector ALU (VOP1/VOP2/VOP3 f16 opcodes; packed math is in `vop3p`).
//!
//! Values are widened to double, computed, and rounded once to half (add, sub, mul and
//! conversions are exact in double, so the result is correctly rounded; fused multiply-add is
//! rounded to double first, which can differ from a single rounding in rare halfway cases).
//! VOP3 op_sel picks the source halves and, with bit 3, writes the high half of the
//! destination; otherwise the high half is zeroed.

use std::f64::consts::TAU;

use super::float_rules::{Denorm, div_fixup, frexp64};
use super::half::f16_to_f64;
use super::operand::half;
use super::rounding::{Round, round16};
use super::valu_loops::{denorm64, ieee, out_mods64, round64_mode};
use super::{Exec, Fault};
use crate::gpu::shader::isa::{Inst, Op, Operand};
use crate::gpu::shader::wave::{LANES, mode};

/// Read source `i` as halves (bits), op_sel and neg/abs applied.
fn hsrc(e: &Exec, inst: &Inst, i: usize) -> Result<[u16; LANES], Fault> {
    let v = e.src32_unmodified(inst, i)?;
    let hi = inst.mods.op_sel & (1 << i) != 0;
    let (abs, neg) = (inst.mods.abs & (1 << i) != 0, inst.mods.neg & (1 << i) != 0);
    Ok(std::array::from_fn(|l| {
        let mut h = half(v[l], hi) as u16;
        if abs {
            h &= 0x7fff;
        }
        if neg {
            h ^= 0x8000;
        }
        h
    }))
}

/// Write half results (bits).
fn write_h(e: &mut Exec, inst: &Inst, vals: &[u16; LANES]) -> Result<(), Fault> {
    let mut out = [0u32; LANES];
    if inst.mods.op_sel & 8 != 0 {
        if let Operand::Vgpr(r) = inst.dst {
            let old = e.w.v(usize::from(r));
            for l in 0..LANES {
                out[l] = (old[l] & 0xffff) | u32::from(vals[l]) << 16;
            }
            return e.write_vdst32(inst, &out);
        }
    }
    for l in 0..LANES {
        out[l] = u32::from(vals[l]);
    }
    e.write_vdst32(inst, &out)
}

/// A half operation over `N` sources computed in double.
fn h_op<const N: usize>(
    e: &mut Exec,
    inst: &Inst,
    f: impl Fn([f64; N]) -> f64,
) -> Result<(), Fault> {
    let mut srcs = [[0u16; LANES]; N];
    for (i, s) in srcs.iter_mut().enumerate() {
        *s = hsrc(e, inst, i)?;
    }
    let dn: Denorm = denorm64(e);
    let rounding = round64_mode(e);
    let dx10 = e.w.mode & mode::DX10_CLAMP != 0;
    let mut out = [0u16; LANES];
    for l in 0..LANES {
        let args: [f64; N] = std::array::from_fn(|i| f16_to_f64(srcs[i][l], dn.inputs));
        let r = out_mods64(f(args), inst.mods.omod, inst.mods.clamp, dx10);
        out[l] = round16(r, 0.0, rounding, dn.outputs);
    }
    write_h(e, inst, &out)
}

/// Round a double to half precision in `mode` and back (for the unfused multiply-add's
/// intermediate product).
fn rh(x: f64, mode: Round) -> f64 {
    f16_to_f64(round16(x, 0.0, mode, true), true)
}

fn minmax(a: f64, b: f64, max: bool, ieee: bool) -> f64 {
    super::float_rules::minmax64(a, b, max, ieee)
}

pub fn exec(e: &mut Exec, inst: &Inst) -> Result<bool, Fault> {
    let ie = ieee(e);
    match inst.op {
        Op::VAddF16 => h_op(e, inst, |[a, b]| a + b)?,
        Op::VSubF16 => h_op(e, inst, |[a, b]| a - b)?,
        Op::VSubrevF16 => h_op(e, inst, |[a, b]| b - a)?,
        Op::VMulF16 => h_op(e, inst, |[a, b]| a * b)?,
        Op::VMaxF16 => h_op(e, inst, |[a, b]| minmax(a, b, true, ie))?,
        Op::VMinF16 => h_op(e, inst, |[a, b]| minmax(a, b, false, ie))?,
        Op::VMax3F16 => h_op(e, inst, |[a, b, c]| {
            minmax(minmax(a, b, true, ie), c, true, ie)
        })?,
        Op::VMin3F16 => h_op(e, inst, |[a, b, c]| {
            minmax(minmax(a, b, false, ie), c, false, ie)
        })?,
        Op::VMed3F16 => h_op(e, inst, |[a, b, c]| {
            f64::from(super::float_rules::med3_32(
                a as f32, b as f32, c as f32, ie,
            ))
        })?,
        Op::VFmaF16 | Op::VFmaLegacyF16 => h_op(e, inst, |[a, b, c]| a.mul_add(b, c))?,
        Op::VMadF16 | Op::VMadLegacyF16 => {
            let m = round64_mode(e);
            h_op(e, inst, |[a, b, c]| rh(a * b, m) + c)?;
        }
        Op::VMacF16 => {
            let mut tmp = *inst;
            tmp.src[2] = inst.dst;
            let m = round64_mode(e);
            h_op(e, &tmp, |[a, b, c]| rh(a * b, m) + c)?;
        }
        Op::VMadmkF16 | Op::VMadakF16 => {
            let k = f16_to_f64(inst.imm() as u16, true);
            let m = round64_mode(e);
            if inst.op == Op::VMadmkF16 {
                h_op(e, inst, |[a, b]| rh(a * k, m) + b)?;
            } else {
                h_op(e, inst, |[a, b]| rh(a * b, m) + k)?;
            }
        }
        Op::VLdexpF16 => {
            let a = hsrc(e, inst, 0)?;
            let b = e.src32(inst, 1)?;
            let dn = denorm64(e);
            let m = round64_mode(e);
            let mut out = [0u16; LANES];
            for l in 0..LANES {
                let x = f16_to_f64(a[l], dn.inputs);
                let n = i32::from(b[l] as u16 as i16).clamp(-64, 64);
                out[l] = round16(x * 2f64.powi(n), 0.0, m, dn.outputs);
            }
            write_h(e, inst, &out)?;
        }
        Op::VDivFixupF16 | Op::VDivFixupLegacyF16 => h_op(e, inst, |[q, d, n]| div_fixup(q, d, n))?,
        Op::VRcpF16 => h_op(e, inst, |[a]| 1.0 / a)?,
        Op::VSqrtF16 => h_op(e, inst, |[a]| a.sqrt())?,
        Op::VRsqF16 => h_op(e, inst, |[a]| 1.0 / a.sqrt())?,
        Op::VLogF16 => h_op(e, inst, |[a]| a.log2())?,
        Op::VExpF16 => h_op(e, inst, |[a]| a.exp2())?,
        Op::VFloorF16 => h_op(e, inst, |[a]| a.floor())?,
        Op::VCeilF16 => h_op(e, inst, |[a]| a.ceil())?,
        Op::VTruncF16 => h_op(e, inst, |[a]| a.trunc())?,
        Op::VRndneF16 => h_op(e, inst, |[a]| a.round_ties_even())?,
        Op::VFractF16 => h_op(e, inst, |[a]| (a - a.floor()).min(1.0 - 2f64.powi(-11)))?,
        Op::VSinF16 => h_op(e, inst, |[a]| (a * TAU).sin())?,
        Op::VCosF16 => h_op(e, inst, |[a]| (a * TAU).cos())?,
        Op::VFrexpMantF16 => h_op(e, inst, |[a]| if a.is_finite() { frexp64(a).0 } else { a })?,
        Op::VFrexpExpI16F16 => {
            let a = hsrc(e, inst, 0)?;
            let dn = denorm64(e);
            let mut out = [0u16; LANES];
            for l in 0..LANES {
                out[l] = frexp64(f16_to_f64(a[l], dn.inputs)).1 as i16 as u16;
            }
            write_h(e, inst, &out)?;
        }
        Op::VPkFmacF16 => {
            let a = e.src32(inst, 0)?;
            let b = e.src32(inst, 1)?;
            let d = e.lanes32(inst.dst)?;
            let dn = denorm64(e);
            let m = round64_mode(e);
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                let f = |v: u32, hi: bool| f16_to_f64(half(v, hi) as u16, dn.inputs);
                let lo = round16(
                    f(a[l], false).mul_add(f(b[l], false), f(d[l], false)),
                    0.0,
                    m,
                    dn.outputs,
                );
                let hi = round16(
                    f(a[l], true).mul_add(f(b[l], true), f(d[l], true)),
                    0.0,
                    m,
                    dn.outputs,
                );
                out[l] = u32::from(lo) | u32::from(hi) << 16;
            }
            e.write_vdst32(inst, &out)?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}
