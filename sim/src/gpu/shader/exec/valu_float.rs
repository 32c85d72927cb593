//! Single- and double-precision vector ALU: arithmetic, fused and unfused multiply-add,
//! min/max with the IEEE-mode NaN rules, rounding, the division helpers and the
//! transcendental approximations.
//!
//! Transcendentals (rcp, rsq, exp, log, sin, cos) are computed in double precision and
//! rounded once, which is within the 1 ulp the ISA specifies; being approximations, they ignore
//! the rounding mode. The operations that must be correctly rounded (add, sub, mul, fma, mad,
//! sqrt, ldexp, the division helpers) honour MODE.FP_ROUND. Their denormal handling follows
//! the MODE register like the other operations (the hardware's transcendental unit is
//! documented by LLVM as flushing denormals; compiler output scales around that, so either
//! behaviour gives the same results for compiled code).

use std::f64::consts::TAU;

use super::float_rules::{
    div_fixup, div_fmas32, div_fmas64, div_scale32, div_scale64, flush32, frexp64, ldexp64,
    med3_32, minmax32, minmax64,
};
use super::rounding::{Round, fused, round32, round64, square_root, two_product, two_sum};
use super::valu_loops::{
    denorm32, denorm64, f32_arith, f32_op, f64_arith, f64_op, ieee, round32_mode, round64_mode,
};
use super::{Exec, Fault, unimplemented};
use crate::gpu::shader::isa::{Inst, Op};
use crate::gpu::shader::wave::LANES;

/// Round to single precision via double (one rounding).
#[inline]
fn r32(x: f64) -> f32 {
    x as f32
}

/// The fraction `x - floor(x)`, below 1.0.
fn fract32(x: f32) -> f32 {
    (x - x.floor()).min(f32::from_bits(0x3f7f_ffff))
}

fn fract64(x: f64) -> f64 {
    (x - x.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff))
}

/// Unfused multiply-add with flushed denormals (v_mad_f32, v_mac_f32, v_madmk, v_madak): the
/// legacy MAD rounds the product, and does not support denormals.
fn mad32(a: f32, b: f32, c: f32, mode: Round) -> f32 {
    let p = flush32(round32(
        f64::from(flush32(a)) * f64::from(flush32(b)),
        0.0,
        mode,
    ));
    let (s, e) = two_sum(f64::from(p), f64::from(flush32(c)));
    flush32(round32(s, e, mode))
}

/// Exact forms (double plus remainder) of the rounding-sensitive single operations.
fn add_x(a: f32, b: f32) -> (f64, f64) {
    two_sum(f64::from(a), f64::from(b))
}

fn mul_x(a: f32, b: f32) -> (f64, f64) {
    (f64::from(a) * f64::from(b), 0.0)
}

fn fma_x(a: f32, b: f32, c: f32) -> (f64, f64) {
    two_sum(f64::from(a) * f64::from(b), f64::from(c))
}

/// v_mul_legacy_f32: 0 times anything (even infinity or NaN) is 0.
#[inline]
fn mul_legacy(a: f32, b: f32) -> f32 {
    if a == 0.0 || b == 0.0 { 0.0 } else { a * b }
}

pub fn exec(e: &mut Exec, inst: &Inst) -> Result<bool, Fault> {
    let ie = ieee(e);
    match inst.op {
        Op::VAddF32 => f32_arith(e, inst, |[a, b]| a + b, |[a, b]| add_x(a, b))?,
        Op::VSubF32 => f32_arith(e, inst, |[a, b]| a - b, |[a, b]| add_x(a, -b))?,
        Op::VSubrevF32 => f32_arith(e, inst, |[a, b]| b - a, |[a, b]| add_x(b, -a))?,
        Op::VMulF32 => f32_arith(e, inst, |[a, b]| a * b, |[a, b]| mul_x(a, b))?,
        Op::VMulLegacyF32 => f32_arith(
            e,
            inst,
            |[a, b]| mul_legacy(a, b),
            |[a, b]| {
                if a == 0.0 || b == 0.0 {
                    (0.0, 0.0)
                } else {
                    mul_x(a, b)
                }
            },
        )?,
        Op::VMinF32 => f32_op(e, inst, |[a, b]| minmax32(a, b, false, ie))?,
        Op::VMaxF32 => f32_op(e, inst, |[a, b]| minmax32(a, b, true, ie))?,
        Op::VMin3F32 => f32_op(e, inst, |[a, b, c]| {
            minmax32(minmax32(a, b, false, ie), c, false, ie)
        })?,
        Op::VMax3F32 => {
            f32_op(e, inst, |[a, b, c]| {
                minmax32(minmax32(a, b, true, ie), c, true, ie)
            })?;
        }
        Op::VMed3F32 => f32_op(e, inst, |[a, b, c]| med3_32(a, b, c, ie))?,
        Op::VFmaF32 => f32_arith(
            e,
            inst,
            |[a, b, c]| a.mul_add(b, c),
            |[a, b, c]| fma_x(a, b, c),
        )?,
        Op::VMadF32 => {
            let m = round32_mode(e);
            f32_op(e, inst, |[a, b, c]| mad32(a, b, c, m))?;
        }
        Op::VMadLegacyF32 => {
            let m = round32_mode(e);
            f32_op(e, inst, |[a, b, c]| {
                let (s, err) = two_sum(f64::from(mul_legacy(a, b)), f64::from(c));
                flush32(round32(s, err, m))
            })?;
        }
        Op::VFmacF32 | Op::VMacF32 => {
            // The accumulator is the destination register.
            let mut tmp = *inst;
            tmp.src[2] = inst.dst;
            if inst.op == Op::VFmacF32 {
                f32_arith(
                    e,
                    &tmp,
                    |[a, b, c]| a.mul_add(b, c),
                    |[a, b, c]| fma_x(a, b, c),
                )?;
            } else {
                let m = round32_mode(e);
                f32_op(e, &tmp, |[a, b, c]| mad32(a, b, c, m))?;
            }
        }
        Op::VMadmkF32 | Op::VMadakF32 | Op::VFmamkF32 | Op::VFmaakF32 => {
            let k = f32::from_bits(inst.imm());
            let m = round32_mode(e);
            match inst.op {
                Op::VMadmkF32 => f32_op(e, inst, |[a, b]| mad32(a, k, b, m))?,
                Op::VMadakF32 => f32_op(e, inst, |[a, b]| mad32(a, b, k, m))?,
                Op::VFmamkF32 => {
                    f32_arith(e, inst, |[a, b]| a.mul_add(k, b), |[a, b]| fma_x(a, k, b))?;
                }
                _ => f32_arith(e, inst, |[a, b]| a.mul_add(b, k), |[a, b]| fma_x(a, b, k))?,
            }
        }
        Op::VLdexpF32 => {
            let m = round32_mode(e);
            let a = e.src32(inst, 0)?;
            let b = e.src32(inst, 1)?;
            let dn = denorm32(e);
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                let x = f32::from_bits(a[l]);
                let x = if dn.inputs { x } else { flush32(x) };
                let n = (b[l] as i32).clamp(-300, 300);
                let r = round32(f64::from(x) * 2f64.powi(n), 0.0, m);
                out[l] = if dn.outputs { r } else { flush32(r) }.to_bits();
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VFractF32 => f32_op(e, inst, |[a]| fract32(a))?,
        Op::VTruncF32 => f32_op(e, inst, |[a]| a.trunc())?,
        Op::VCeilF32 => f32_op(e, inst, |[a]| a.ceil())?,
        Op::VRndneF32 => f32_op(e, inst, |[a]| a.round_ties_even())?,
        Op::VFloorF32 => f32_op(e, inst, |[a]| a.floor())?,
        Op::VExpF32 => f32_op(e, inst, |[a]| r32(f64::from(a).exp2()))?,
        Op::VLogF32 => f32_op(e, inst, |[a]| r32(f64::from(a).log2()))?,
        Op::VRcpF32 | Op::VRcpIflagF32 => f32_op(e, inst, |[a]| r32(1.0 / f64::from(a)))?,
        Op::VRsqF32 => f32_op(e, inst, |[a]| r32(1.0 / f64::from(a).sqrt()))?,
        Op::VSqrtF32 => f32_arith(e, inst, |[a]| a.sqrt(), |[a]| square_root(f64::from(a)))?,
        Op::VSinF32 => f32_op(e, inst, |[a]| r32((f64::from(a) * TAU).sin()))?,
        Op::VCosF32 => f32_op(e, inst, |[a]| r32((f64::from(a) * TAU).cos()))?,
        Op::VFrexpMantF32 => f32_op(e, inst, |[a]| {
            if a.is_finite() {
                frexp64(f64::from(a)).0 as f32
            } else {
                a
            }
        })?,
        Op::VFrexpExpI32F32 => {
            let a = e.src32(inst, 0)?;
            let dn = denorm32(e);
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                let x = f32::from_bits(a[l]);
                let x = if dn.inputs { x } else { flush32(x) };
                out[l] = frexp64(f64::from(x)).1 as u32;
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VDivFixupF32 => f32_op(e, inst, |[q, d, n]| {
            div_fixup(f64::from(q), f64::from(d), f64::from(n)) as f32
        })?,
        Op::VDivFmasF32 => {
            let m = round32_mode(e);
            let s = super::valu_loops::srcs32::<3>(e, inst)?;
            let vcc = e.w.vcc();
            let dn = denorm32(e);
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                let f = |i: usize| {
                    let x = f32::from_bits(s[i][l]);
                    if dn.inputs { x } else { flush32(x) }
                };
                let r = div_fmas32(f(0), f(1), f(2), (vcc >> l) & 1 != 0, m);
                out[l] = if dn.outputs { r } else { flush32(r) }.to_bits();
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VDivScaleF32 => {
            let s = super::valu_loops::srcs32::<3>(e, inst)?;
            let mask = e.write_mask(inst);
            let mut out = [0u32; LANES];
            let mut vcc = 0u64;
            for l in 0..LANES {
                let f = |i: usize| f32::from_bits(s[i][l]);
                let (r, flag) = div_scale32(f(0), f(1), f(2));
                out[l] = r.to_bits();
                vcc |= u64::from(flag) << l;
            }
            e.write_vdst32(inst, &out)?;
            e.write_mask_dst(inst.sdst, vcc & mask)?;
        }
        // Double precision.
        Op::VAddF64 => f64_arith(e, inst, |[a, b]| two_sum(a, b))?,
        Op::VMulF64 => f64_arith(e, inst, |[a, b]| two_product(a, b))?,
        Op::VMinF64 => f64_op(e, inst, |[a, b]| minmax64(a, b, false, ie))?,
        Op::VMaxF64 => f64_op(e, inst, |[a, b]| minmax64(a, b, true, ie))?,
        Op::VFmaF64 => f64_arith(e, inst, |[a, b, c]| fused(a, b, c))?,
        Op::VFmacF64 => {
            let mut tmp = *inst;
            tmp.src[2] = inst.dst;
            f64_arith(e, &tmp, |[a, b, c]| fused(a, b, c))?;
        }
        Op::VLdexpF64 => {
            let m = round64_mode(e);
            let a = e.src64(inst, 0)?;
            let b = e.src32(inst, 1)?;
            let dn = denorm64(e);
            let mut out = [0u64; LANES];
            for l in 0..LANES {
                let x = f64::from_bits(a[l]);
                let x = if dn.inputs {
                    x
                } else {
                    super::float_rules::flush64(x)
                };
                let mut r = ldexp64(x, b[l] as i32);
                if m != Round::NearestEven && r.is_finite() && r != 0.0 {
                    // Only a denormal result rounds: its error is what scaling back loses.
                    r = round64(r, x - ldexp64(r, -(b[l] as i32)), m);
                }
                out[l] = if dn.outputs {
                    r
                } else {
                    super::float_rules::flush64(r)
                }
                .to_bits();
            }
            e.write_vdst64(inst, &out)?;
        }
        Op::VTruncF64 => f64_op(e, inst, |[a]| a.trunc())?,
        Op::VCeilF64 => f64_op(e, inst, |[a]| a.ceil())?,
        Op::VRndneF64 => f64_op(e, inst, |[a]| a.round_ties_even())?,
        Op::VFloorF64 => f64_op(e, inst, |[a]| a.floor())?,
        Op::VFractF64 => f64_op(e, inst, |[a]| fract64(a))?,
        Op::VRcpF64 => f64_op(e, inst, |[a]| 1.0 / a)?,
        Op::VRsqF64 => f64_op(e, inst, |[a]| 1.0 / a.sqrt())?,
        Op::VSqrtF64 => f64_arith(e, inst, |[a]| square_root(a))?,
        Op::VFrexpMantF64 => f64_op(e, inst, |[a]| frexp64(a).0)?,
        Op::VFrexpExpI32F64 => {
            let a = e.src64(inst, 0)?;
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                out[l] = frexp64(f64::from_bits(a[l])).1 as u32;
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VDivFixupF64 => f64_op(e, inst, |[q, d, n]| div_fixup(q, d, n))?,
        Op::VDivFmasF64 => {
            let m = round64_mode(e);
            let s0 = e.src64(inst, 0)?;
            let s1 = e.src64(inst, 1)?;
            let s2 = e.src64(inst, 2)?;
            let vcc = e.w.vcc();
            let mut out = [0u64; LANES];
            for l in 0..LANES {
                out[l] = div_fmas64(
                    f64::from_bits(s0[l]),
                    f64::from_bits(s1[l]),
                    f64::from_bits(s2[l]),
                    (vcc >> l) & 1 != 0,
                    m,
                )
                .to_bits();
            }
            e.write_vdst64(inst, &out)?;
        }
        Op::VDivScaleF64 => {
            let s0 = e.src64(inst, 0)?;
            let s1 = e.src64(inst, 1)?;
            let s2 = e.src64(inst, 2)?;
            let mask = e.write_mask(inst);
            let mut out = [0u64; LANES];
            let mut vcc = 0u64;
            for l in 0..LANES {
                let (r, flag) = div_scale64(
                    f64::from_bits(s0[l]),
                    f64::from_bits(s1[l]),
                    f64::from_bits(s2[l]),
                );
                out[l] = r.to_bits();
                vcc |= u64::from(flag) << l;
            }
            e.write_vdst64(inst, &out)?;
            e.write_mask_dst(inst.sdst, vcc & mask)?;
        }
        Op::VTrigPreopF64
        | Op::VExpLegacyF32
        | Op::VLogLegacyF32
        | Op::VCubeidF32
        | Op::VCubescF32
        | Op::VCubetcF32
        | Op::VCubemaF32 => {
            return Err(unimplemented("this float opcode is not simulated"));
        }
        _ => return Ok(false),
    }
    Ok(true)
}
