//! Packed math (VOP3P): two 16-bit lanes per register (f16 and i16/u16), two singles per
//! register pair (gfx90a's v_pk_*_f32), dot products, mixed-precision FMA, and the
//! accumulation-register moves. op_sel picks the half feeding the low element, op_sel_hi the
//! half feeding the high element; neg_lo/neg_hi negate float elements.

use super::float_rules::{Denorm, flush32, minmax64};
use super::half::f16_to_f64;
use super::operand::half;
use super::rounding::{Round, round16, round32, two_sum};
use super::valu_loops::{denorm32, denorm64, ieee, round32_mode, round64_mode};
use super::{Exec, R, unimplemented};
use crate::gpu::shader::isa::{Extra, Inst, Op};
use crate::gpu::shader::wave::{LANES, mode};

/// The 16-bit elements (low, high) of source `i` for one lane.
#[inline]
fn elems(inst: &Inst, i: usize, v: u32, float: bool) -> (u32, u32) {
    let m = inst.mods;
    let mut lo = half(v, m.op_sel & (1 << i) != 0);
    let mut hi = half(v, m.op_sel_hi & (1 << i) != 0);
    if float {
        if m.neg & (1 << i) != 0 {
            lo ^= 0x8000;
        }
        if m.neg_hi & (1 << i) != 0 {
            hi ^= 0x8000;
        }
    }
    (lo, hi)
}

fn pk_int<const N: usize>(e: &mut Exec, inst: &Inst, f: impl Fn([u32; N]) -> u32) -> R {
    if inst.mods.neg != 0 || inst.mods.neg_hi != 0 {
        return Err(unimplemented("neg modifiers on packed integer math"));
    }
    let mut srcs = [[0u32; LANES]; N];
    for (i, s) in srcs.iter_mut().enumerate() {
        *s = e.src32(inst, i)?;
    }
    let mut out = [0u32; LANES];
    for l in 0..LANES {
        let (mut lo, mut hi) = ([0u32; N], [0u32; N]);
        for i in 0..N {
            (lo[i], hi[i]) = elems(inst, i, srcs[i][l], false);
        }
        out[l] = (f(lo) & 0xffff) | (f(hi) & 0xffff) << 16;
    }
    e.write_vdst32(inst, &out)
}

fn pk_f16<const N: usize>(e: &mut Exec, inst: &Inst, f: impl Fn([f64; N]) -> f64) -> R {
    let mode = round64_mode(e);
    let mut srcs = [[0u32; LANES]; N];
    for (i, s) in srcs.iter_mut().enumerate() {
        *s = e.src32(inst, i)?;
    }
    let dn: Denorm = denorm64(e);
    let clamp = inst.mods.clamp;
    let dx10 = e.w.mode & mode::DX10_CLAMP != 0;
    let fin = |h: u32| f16_to_f64(h as u16, dn.inputs);
    let fout = |x: f64| {
        let x = if clamp {
            if x.is_nan() {
                if dx10 { 0.0 } else { x }
            } else {
                x.clamp(0.0, 1.0)
            }
        } else {
            x
        };
        u32::from(round16(x, 0.0, mode, dn.outputs))
    };
    let mut out = [0u32; LANES];
    for l in 0..LANES {
        let (mut lo, mut hi) = ([0f64; N], [0f64; N]);
        for i in 0..N {
            let (a, b) = elems(inst, i, srcs[i][l], true);
            lo[i] = fin(a);
            hi[i] = fin(b);
        }
        out[l] = fout(f(lo)) | fout(f(hi)) << 16;
    }
    e.write_vdst32(inst, &out)
}

/// Packed singles; `f` returns each element exactly as a double plus remainder.
fn pk_f32<const N: usize>(e: &mut Exec, inst: &Inst, f: impl Fn([f32; N]) -> (f64, f64)) -> R {
    let mode = round32_mode(e);
    let mut srcs = [[0u64; LANES]; N];
    for (i, s) in srcs.iter_mut().enumerate() {
        *s = e.lanes64(inst.src[i])?;
    }
    let dn = denorm32(e);
    let m = inst.mods;
    let mut out = [0u64; LANES];
    for l in 0..LANES {
        let mut lo = [0f32; N];
        let mut hi = [0f32; N];
        for i in 0..N {
            let v = srcs[i][l];
            let pick = |sel: bool| if sel { (v >> 32) as u32 } else { v as u32 };
            let mut a = pick(m.op_sel & (1 << i) != 0);
            let mut b = pick(m.op_sel_hi & (1 << i) != 0);
            if m.neg & (1 << i) != 0 {
                a ^= 0x8000_0000;
            }
            if m.neg_hi & (1 << i) != 0 {
                b ^= 0x8000_0000;
            }
            let fin = |x: u32| {
                let x = f32::from_bits(x);
                if dn.inputs { x } else { flush32(x) }
            };
            lo[i] = fin(a);
            hi[i] = fin(b);
        }
        let fout = |(s, err): (f64, f64)| {
            let x = round32(s, err, mode);
            let x = if m.clamp { x.clamp(0.0, 1.0) } else { x };
            u64::from(if dn.outputs { x } else { flush32(x) }.to_bits())
        };
        out[l] = fout(f(lo)) | fout(f(hi)) << 32;
    }
    e.write_vdst64(inst, &out)
}

fn sext(v: u32, bits: u32) -> i32 {
    ((v << (32 - bits)) as i32) >> (32 - bits)
}

/// Dot products: sum of `n` element products of width `bits` plus source 2.
fn dot(e: &mut Exec, inst: &Inst, bits: u32, signed: bool) -> R {
    let [a, b, c] = super::valu_loops::srcs32::<3>(e, inst)?;
    let n = 32 / bits;
    let mask = (1u32 << bits) - 1;
    let mut out = [0u32; LANES];
    for l in 0..LANES {
        let mut acc = if signed {
            i64::from(c[l] as i32)
        } else {
            i64::from(c[l])
        };
        for k in 0..n {
            let x = (a[l] >> (k * bits)) & mask;
            let y = (b[l] >> (k * bits)) & mask;
            acc += if signed {
                i64::from(sext(x, bits)) * i64::from(sext(y, bits))
            } else {
                i64::from(x) * i64::from(y)
            };
        }
        out[l] = if inst.mods.clamp {
            if signed {
                acc.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
            } else {
                acc.clamp(0, i64::from(u32::MAX)) as u32
            }
        } else {
            acc as u32
        };
    }
    e.write_vdst32(inst, &out)
}

/// v_fma_mix*: each source is a single (op_sel_hi bit clear) or the half op_sel picks.
fn fma_mix(e: &mut Exec, inst: &Inst) -> R {
    let [a, b, c] = super::valu_loops::srcs32::<3>(e, inst)?;
    let m = inst.mods;
    let d16 = denorm64(e);
    let d32 = denorm32(e);
    let interp = match inst.extra {
        Extra::Interp { rtz } => Some(rtz),
        _ => None,
    };
    let (m32, m16) = if interp == Some(true) {
        (Round::Zero, Round::Zero)
    } else {
        (round32_mode(e), round64_mode(e))
    };
    let arg = |i: usize, v: u32| -> f64 {
        let x = if m.op_sel_hi & (1 << i) != 0 {
            f16_to_f64(half(v, m.op_sel & (1 << i) != 0) as u16, d16.inputs)
        } else {
            let f = f32::from_bits(v);
            f64::from(if d32.inputs { f } else { flush32(f) })
        };
        let x = if m.abs & (1 << i) != 0 { x.abs() } else { x };
        if m.neg & (1 << i) != 0 { -x } else { x }
    };
    let rounding = if interp.is_some() {
        // VINTERP's forms keep denormal results (the guide's pseudocode flushes nothing).
        MixRounding {
            m32,
            m16,
            f32_denormals: true,
            f16_denormals: true,
        }
    } else {
        MixRounding {
            m32,
            m16,
            f32_denormals: d32.outputs,
            f16_denormals: d16.outputs,
        }
    };
    let old = e.lanes32(inst.dst)?;
    let mut out = [0u32; LANES];
    for l in 0..LANES {
        // The product of two f32 (or f16) values is exact in a double (at most 48 significant
        // bits, exponents far inside its range); `two_sum` keeps the addition's exact error,
        // so `round32` rounds the exact a × b + c once.
        let (s, err) = two_sum(arg(0, a[l]) * arg(1, b[l]), arg(2, c[l]));
        out[l] = mix_round(inst.op, (s, err), m.clamp, old[l], &rounding);
    }
    e.write_vdst32(inst, &out)
}

/// How a `v_fma_mix*` result is rounded: the FP_ROUND modes of the f32 FMA and of the f16
/// conversion, and whether denormal results are kept.
struct MixRounding {
    m32: Round,
    m16: Round,
    f32_denormals: bool,
    f16_denormals: bool,
}

/// A `v_fma_mix*` (and GFX11 VINTERP) result from the exact `a × b + c` (a double and its
/// exact error): a fused multiply-add in f32, rounded once to f32; for the f16 forms that f32
/// converted to f16 (a second rounding) into the half the opcode names.
///
/// Sure: the f32 FMA is a single rounding (RDNA3 ISA guide pseudocode for V_FMA_MIX*_F16 and
/// VINTERP: the operands become f32, `fma(...)` of f32 values, then `16'F(...)` / f32_to_f16
/// for the f16 forms). LLVM agrees: it selects `v_fma_mixlo_f16` for
/// `fpround(fma(f32, f32, f32))` and for `fpround(fmul(f32, f32))` (VOP3PInstructions.td,
/// MadFmaMixFP16Pats), which is correct only if the hardware rounds to f32 first. Inferred:
/// that GFX9/CDNA (`v_fma_mix*` on gfx90a/gfx942) round the same way (the Vega and CDNA ISA
/// guides were not checked here), which FP_ROUND field rounds the f32 intermediate of an f16
/// form (the f32 one is used), and that the intermediate is not flushed by the f32 denormal
/// mode (only the f16 result follows the f16 mode).
fn mix_round(op: Op, (s, err): (f64, f64), clamp: bool, old: u32, r: &MixRounding) -> u32 {
    let f = round32(s, err, r.m32);
    // Clamping after rounding is the same as before: [0, 1]'s ends are representable.
    let f = if clamp { f.clamp(0.0, 1.0) } else { f };
    let half = || u32::from(round16(f64::from(f), 0.0, r.m16, r.f16_denormals));
    match op {
        Op::VFmaMixF32 => if r.f32_denormals { f } else { flush32(f) }.to_bits(),
        Op::VFmaMixloF16 => (old & 0xffff_0000) | half(),
        _ => (old & 0xffff) | half() << 16,
    }
}

pub fn exec(e: &mut Exec, inst: &Inst) -> R {
    let ie = ieee(e);
    let clamp = inst.mods.clamp;
    let sat_u = |v: u32| if clamp { v.min(0xffff) } else { v };
    let sat_i = |v: i32| {
        if clamp {
            v.clamp(-32768, 32767) as u32
        } else {
            v as u32
        }
    };
    let s16 = |v: u32| i32::from(v as u16 as i16);
    match inst.op {
        Op::VPkAddU16 => pk_int(e, inst, |[a, b]| sat_u(a + b)),
        Op::VPkSubU16 => pk_int(e, inst, |[a, b]| {
            if clamp {
                a.saturating_sub(b)
            } else {
                a.wrapping_sub(b)
            }
        }),
        Op::VPkAddI16 => pk_int(e, inst, |[a, b]| sat_i(s16(a) + s16(b))),
        Op::VPkSubI16 => pk_int(e, inst, |[a, b]| sat_i(s16(a) - s16(b))),
        Op::VPkMulLoU16 => pk_int(e, inst, |[a, b]| a.wrapping_mul(b)),
        Op::VPkMadU16 => pk_int(e, inst, |[a, b, c]| sat_u(a * b + c)),
        Op::VPkMadI16 => pk_int(e, inst, |[a, b, c]| sat_i(s16(a) * s16(b) + s16(c))),
        Op::VPkLshlrevB16 => pk_int(e, inst, |[a, b]| b << (a & 15)),
        Op::VPkLshrrevB16 => pk_int(e, inst, |[a, b]| b >> (a & 15)),
        Op::VPkAshrrevI16 => pk_int(e, inst, |[a, b]| (s16(b) >> (a & 15)) as u32),
        Op::VPkMaxU16 => pk_int(e, inst, |[a, b]| a.max(b)),
        Op::VPkMinU16 => pk_int(e, inst, |[a, b]| a.min(b)),
        Op::VPkMaxI16 => pk_int(e, inst, |[a, b]| s16(a).max(s16(b)) as u32),
        Op::VPkMinI16 => pk_int(e, inst, |[a, b]| s16(a).min(s16(b)) as u32),
        Op::VPkAddF16 => pk_f16(e, inst, |[a, b]| a + b),
        Op::VPkMulF16 => pk_f16(e, inst, |[a, b]| a * b),
        Op::VPkFmaF16 => pk_f16(e, inst, |[a, b, c]| a.mul_add(b, c)),
        Op::VPkMinF16 => pk_f16(e, inst, |[a, b]| minmax64(a, b, false, ie)),
        Op::VPkMaxF16 => pk_f16(e, inst, |[a, b]| minmax64(a, b, true, ie)),
        Op::VPkFmaF32 => pk_f32(e, inst, |[a, b, c]| {
            two_sum(f64::from(a) * f64::from(b), f64::from(c))
        }),
        Op::VPkMulF32 => pk_f32(e, inst, |[a, b]| (f64::from(a) * f64::from(b), 0.0)),
        Op::VPkAddF32 => pk_f32(e, inst, |[a, b]| two_sum(f64::from(a), f64::from(b))),
        Op::VPkMovB32 => {
            let a = e.lanes64(inst.src[0])?;
            let b = e.lanes64(inst.src[1])?;
            let m = inst.mods;
            let mut out = [0u64; LANES];
            for l in 0..LANES {
                let lo = if m.op_sel & 1 != 0 {
                    a[l] >> 32
                } else {
                    a[l] & 0xffff_ffff
                };
                let hi = if m.op_sel & 2 != 0 {
                    b[l] >> 32
                } else {
                    b[l] & 0xffff_ffff
                };
                out[l] = lo | hi << 32;
            }
            e.write_vdst64(inst, &out)
        }
        Op::VDot2F32F16 => {
            let [a, b, c] = super::valu_loops::srcs32::<3>(e, inst)?;
            let d16 = denorm64(e);
            let m32 = round32_mode(e);
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                let (a0, a1) = elems(inst, 0, a[l], true);
                let (b0, b1) = elems(inst, 1, b[l], true);
                let f = |h: u32| f16_to_f64(h as u16, d16.inputs);
                let r = f(a0) * f(b0) + f(a1) * f(b1) + f64::from(f32::from_bits(c[l]));
                out[l] = round32(r, 0.0, m32).to_bits();
            }
            e.write_vdst32(inst, &out)
        }
        Op::VDot2I32I16 => dot(e, inst, 16, true),
        Op::VDot2U32U16 => dot(e, inst, 16, false),
        Op::VDot4I32I8 => dot(e, inst, 8, true),
        Op::VDot4U32U8 => dot(e, inst, 8, false),
        Op::VDot8I32I4 => dot(e, inst, 4, true),
        Op::VDot8U32U4 => dot(e, inst, 4, false),
        Op::VFmaMixF32 | Op::VFmaMixloF16 | Op::VFmaMixhiF16 => fma_mix(e, inst),
        Op::VAccvgprReadB32 | Op::VAccvgprWriteB32 => {
            let v = e.lanes32(inst.src[0])?;
            e.write_vdst32(inst, &v)
        }
        _ => Err(unimplemented("packed or matrix opcode not simulated")),
    }
}
