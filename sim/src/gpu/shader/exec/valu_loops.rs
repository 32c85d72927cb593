//! The lane loops every VALU group shares: sources are read into 64-lane arrays, the operation
//! runs over all lanes (loops the compiler can vectorize), and the result is written under
//! EXEC; with the float modes (denormals, rounding, IEEE) and output modifiers they apply.

use super::float_rules::{Denorm, flush32, flush64};
use super::rounding::{Round, round32, round64};
use super::{Exec, R};
use crate::gpu::shader::isa::Inst;
use crate::gpu::shader::wave::{LANES, Lanes, mode};

/// `dst = f(src0)` on 32-bit lanes.
pub fn un32(e: &mut Exec, inst: &Inst, f: impl Fn(u32) -> u32) -> R {
    let a = e.src32(inst, 0)?;
    let mut out = [0u32; LANES];
    for l in 0..LANES {
        out[l] = f(a[l]);
    }
    e.write_vdst32(inst, &out)
}

/// `dst = f(src0, src1)` on 32-bit lanes.
pub fn bin32(e: &mut Exec, inst: &Inst, f: impl Fn(u32, u32) -> u32) -> R {
    let a = e.src32(inst, 0)?;
    let b = e.src32(inst, 1)?;
    let mut out = [0u32; LANES];
    for l in 0..LANES {
        out[l] = f(a[l], b[l]);
    }
    e.write_vdst32(inst, &out)
}

/// `dst = f(src0, src1, src2)` on 32-bit lanes.
pub fn tri32(e: &mut Exec, inst: &Inst, f: impl Fn(u32, u32, u32) -> u32) -> R {
    let a = e.src32(inst, 0)?;
    let b = e.src32(inst, 1)?;
    let c = e.src32(inst, 2)?;
    let mut out = [0u32; LANES];
    for l in 0..LANES {
        out[l] = f(a[l], b[l], c[l]);
    }
    e.write_vdst32(inst, &out)
}

/// The single-precision denormal mode of the wave.
pub fn denorm32(e: &Exec) -> Denorm {
    let (inputs, outputs) = e.w.denorm32();
    Denorm { inputs, outputs }
}

/// The half/double denormal mode of the wave.
pub fn denorm64(e: &Exec) -> Denorm {
    let (inputs, outputs) = e.w.denorm16_64();
    Denorm { inputs, outputs }
}

/// Whether the wave is in IEEE mode.
pub fn ieee(e: &Exec) -> bool {
    e.w.mode & mode::IEEE != 0
}

/// Output modifiers on a single: omod scale, then clamp to [0, 1] (NaN becomes 0 with
/// DX10_CLAMP).
#[inline]
fn out_mods32(x: f32, omod: u8, clamp: bool, dx10: bool) -> f32 {
    let x = match omod {
        1 => x * 2.0,
        2 => x * 4.0,
        3 => x * 0.5,
        _ => x,
    };
    if clamp {
        if x.is_nan() {
            return if dx10 { 0.0 } else { x };
        }
        return x.clamp(0.0, 1.0);
    }
    x
}

/// Output modifiers on a double (or a half computed as one).
#[inline]
pub fn out_mods64(x: f64, omod: u8, clamp: bool, dx10: bool) -> f64 {
    let x = match omod {
        1 => x * 2.0,
        2 => x * 4.0,
        3 => x * 0.5,
        _ => x,
    };
    if clamp {
        if x.is_nan() {
            return if dx10 { 0.0 } else { x };
        }
        return x.clamp(0.0, 1.0);
    }
    x
}

/// The single-precision rounding mode.
pub fn round32_mode(e: &Exec) -> Round {
    Round::from_bits(e.w.mode)
}

/// The half/double rounding mode.
pub fn round64_mode(e: &Exec) -> Round {
    Round::from_bits(e.w.mode >> 2)
}

/// A single-precision operation whose result depends on the rounding mode: `rne` computes it
/// rounded to nearest even (the fast path), `exact` as a double plus the sign-correct remainder.
pub fn f32_arith<const N: usize>(
    e: &mut Exec,
    inst: &Inst,
    rne: impl Fn([f32; N]) -> f32,
    exact: impl Fn([f32; N]) -> (f64, f64),
) -> R {
    match round32_mode(e) {
        Round::NearestEven => f32_op(e, inst, rne),
        mode => f32_op(e, inst, |a| {
            let (s, err) = exact(a);
            round32(s, err, mode)
        }),
    }
}

/// The double-precision [`f32_arith`]: `exact` returns the round-to-nearest result and the sign
/// of its error.
pub fn f64_arith<const N: usize>(
    e: &mut Exec,
    inst: &Inst,
    exact: impl Fn([f64; N]) -> (f64, f64),
) -> R {
    let mode = round64_mode(e);
    f64_op(e, inst, |a| {
        let (s, err) = exact(a);
        round64(s, err, mode)
    })
}

/// A single-precision operation over `n` sources (1 to 3) whose result does not depend on the
/// rounding mode (or, for the transcendental approximations, is not specified to): inputs
/// flushed and outputs flushed per the denormal mode, output modifiers applied.
pub fn f32_op<const N: usize>(e: &mut Exec, inst: &Inst, f: impl Fn([f32; N]) -> f32) -> R {
    let mut srcs = [[0u32; LANES]; N];
    for (i, s) in srcs.iter_mut().enumerate() {
        *s = e.src32(inst, i)?;
    }
    let dn = denorm32(e);
    let mods = inst.mods;
    let dx10 = e.w.mode & mode::DX10_CLAMP != 0;
    let mut out = [0u32; LANES];
    if dn.is_ieee() && mods.omod == 0 && !mods.clamp {
        for l in 0..LANES {
            let args: [f32; N] = std::array::from_fn(|i| f32::from_bits(srcs[i][l]));
            out[l] = f(args).to_bits();
        }
    } else {
        for l in 0..LANES {
            let args: [f32; N] = std::array::from_fn(|i| {
                let x = f32::from_bits(srcs[i][l]);
                if dn.inputs { x } else { flush32(x) }
            });
            let mut r = out_mods32(f(args), mods.omod, mods.clamp, dx10);
            if !dn.outputs {
                r = flush32(r);
            }
            out[l] = r.to_bits();
        }
    }
    e.write_vdst32(inst, &out)
}

/// A double-precision operation over `N` sources.
pub fn f64_op<const N: usize>(e: &mut Exec, inst: &Inst, f: impl Fn([f64; N]) -> f64) -> R {
    let mut srcs = [[0u64; LANES]; N];
    for (i, s) in srcs.iter_mut().enumerate() {
        *s = e.src64(inst, i)?;
    }
    let dn = denorm64(e);
    let mods = inst.mods;
    let dx10 = e.w.mode & mode::DX10_CLAMP != 0;
    let mut out = [0u64; LANES];
    for l in 0..LANES {
        let args: [f64; N] = std::array::from_fn(|i| {
            let x = f64::from_bits(srcs[i][l]);
            if dn.inputs { x } else { flush64(x) }
        });
        let mut r = out_mods64(f(args), mods.omod, mods.clamp, dx10);
        if !dn.outputs {
            r = flush64(r);
        }
        out[l] = r.to_bits();
    }
    e.write_vdst64(inst, &out)
}

/// Sources as 32-bit lanes (no float handling).
pub fn srcs32<const N: usize>(e: &Exec, inst: &Inst) -> Result<[Lanes; N], super::Fault> {
    let mut s = [[0u32; LANES]; N];
    for (i, v) in s.iter_mut().enumerate() {
        *v = e.src32(inst, i)?;
    }
    Ok(s)
}
