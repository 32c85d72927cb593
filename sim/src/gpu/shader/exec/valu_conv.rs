//! Conversions between integers, halves, singles and doubles.
//!
//! Float-to-integer conversions truncate toward zero and saturate, with NaN giving 0 (as the
//! ISA specifies for v_cvt_i32_f32 and friends); integer-to-float conversions round to nearest
//! even.

use super::float_rules::{flush32, flush64};
use super::half::f16_to_f64;
use super::operand::half;
use super::rounding::{Round, round16, round32};
use super::valu_loops::{denorm32, denorm64, round32_mode, round64_mode};
use super::{Exec, Fault, unimplemented};
use crate::gpu::shader::isa::{Inst, Op};
use crate::gpu::shader::wave::LANES;

fn f2i(x: f64) -> u32 {
    // `as` saturates and maps NaN to 0, as the hardware does.
    x as i32 as u32
}

fn f2u(x: f64) -> u32 {
    x as u32
}

/// Round toward zero to a half (v_cvt_pkrtz_f16_f32).
fn f64_to_f16_rtz(x: f64, keep_denormals: bool) -> u16 {
    round16(x, 0.0, Round::Zero, keep_denormals)
}

pub fn exec(e: &mut Exec, inst: &Inst) -> Result<bool, Fault> {
    let op = inst.op;
    match op {
        Op::VCvtI32F32
        | Op::VCvtU32F32
        | Op::VCvtRpiI32F32
        | Op::VCvtFlrI32F32
        | Op::VCvtF32I32
        | Op::VCvtF32U32
        | Op::VCvtF16F32
        | Op::VCvtF32Ubyte0
        | Op::VCvtF32Ubyte1
        | Op::VCvtF32Ubyte2
        | Op::VCvtF32Ubyte3
        | Op::VCvtOffF32I4 => {
            let a = e.src32(inst, 0)?;
            let d32 = denorm32(e);
            let d16 = denorm64(e);
            let (m32, m16) = (round32_mode(e), round64_mode(e));
            let fin = |v: u32| {
                let x = f32::from_bits(v);
                f64::from(if d32.inputs { x } else { flush32(x) })
            };
            let fout = |x: f32| if d32.outputs { x } else { flush32(x) }.to_bits();
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                let v = a[l];
                out[l] = match op {
                    Op::VCvtI32F32 => f2i(fin(v)),
                    Op::VCvtU32F32 => f2u(fin(v)),
                    Op::VCvtRpiI32F32 => f2i((fin(v) + 0.5).floor()),
                    Op::VCvtFlrI32F32 => f2i(fin(v).floor()),
                    Op::VCvtF32I32 => fout(round32(f64::from(v as i32), 0.0, m32)),
                    Op::VCvtF32U32 => fout(round32(f64::from(v), 0.0, m32)),
                    Op::VCvtF16F32 => u32::from(round16(fin(v), 0.0, m16, d16.outputs)),
                    Op::VCvtF32Ubyte0 => ((v & 0xff) as f32).to_bits(),
                    Op::VCvtF32Ubyte1 => (((v >> 8) & 0xff) as f32).to_bits(),
                    Op::VCvtF32Ubyte2 => (((v >> 16) & 0xff) as f32).to_bits(),
                    Op::VCvtF32Ubyte3 => ((v >> 24) as f32).to_bits(),
                    _ => fout(f32::from(((v << 28) as i32 >> 28) as i8) / 16.0),
                };
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VCvtF32F16 | Op::VCvtU16F16 | Op::VCvtI16F16 => {
            let a = e.src32(inst, 0)?;
            let d16 = denorm64(e);
            let d32 = denorm32(e);
            let sel = inst.mods.op_sel & 1 != 0;
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                let x = f16_to_f64(half(a[l], sel) as u16, d16.inputs);
                out[l] = match op {
                    Op::VCvtF32F16 => {
                        let r = x as f32;
                        if d32.outputs { r } else { flush32(r) }.to_bits()
                    }
                    Op::VCvtU16F16 => u32::from(x as u16),
                    _ => u32::from(x as i16 as u16),
                };
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VCvtF16U16 | Op::VCvtF16I16 => {
            let a = e.src32(inst, 0)?;
            let d16 = denorm64(e);
            let m16 = round64_mode(e);
            let sel = inst.mods.op_sel & 1 != 0;
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                let v = half(a[l], sel);
                let x = if op == Op::VCvtF16U16 {
                    f64::from(v)
                } else {
                    f64::from(v as u16 as i16)
                };
                out[l] = u32::from(round16(x, 0.0, m16, d16.outputs));
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VCvtI32F64 | Op::VCvtU32F64 | Op::VCvtF32F64 => {
            let a = e.src64(inst, 0)?;
            let d64 = denorm64(e);
            let d32 = denorm32(e);
            let m32 = round32_mode(e);
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                let x = f64::from_bits(a[l]);
                let x = if d64.inputs { x } else { flush64(x) };
                out[l] = match op {
                    Op::VCvtI32F64 => f2i(x),
                    Op::VCvtU32F64 => f2u(x),
                    _ => {
                        let r = round32(x, 0.0, m32);
                        if d32.outputs { r } else { flush32(r) }.to_bits()
                    }
                };
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VCvtF64I32 | Op::VCvtF64U32 | Op::VCvtF64F32 => {
            let a = e.src32(inst, 0)?;
            let d32 = denorm32(e);
            let mut out = [0u64; LANES];
            for l in 0..LANES {
                out[l] = match op {
                    Op::VCvtF64I32 => f64::from(a[l] as i32),
                    Op::VCvtF64U32 => f64::from(a[l]),
                    _ => {
                        let x = f32::from_bits(a[l]);
                        f64::from(if d32.inputs { x } else { flush32(x) })
                    }
                }
                .to_bits();
            }
            e.write_vdst64(inst, &out)?;
        }
        Op::VCvtPkrtzF16F32 | Op::VPackB32F16 => {
            let a = e.src32(inst, 0)?;
            let b = e.src32(inst, 1)?;
            let d16 = denorm64(e);
            let opsel = inst.mods.op_sel;
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                out[l] = if op == Op::VPackB32F16 {
                    half(a[l], opsel & 1 != 0) | half(b[l], opsel & 2 != 0) << 16
                } else {
                    let lo = f64_to_f16_rtz(f64::from(f32::from_bits(a[l])), d16.outputs);
                    let hi = f64_to_f16_rtz(f64::from(f32::from_bits(b[l])), d16.outputs);
                    u32::from(lo) | u32::from(hi) << 16
                };
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VCvtPkU8F32 => {
            let [a, b, c] = super::valu_loops::srcs32::<3>(e, inst)?;
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                let shift = 8 * (b[l] & 3);
                let v = f64::from(f32::from_bits(a[l]))
                    .round_ties_even()
                    .clamp(0.0, 255.0) as u32;
                out[l] = (c[l] & !(0xff << shift)) | (v << shift);
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VCvtNormI16F16
        | Op::VCvtNormU16F16
        | Op::VCvtPknormI16F32
        | Op::VCvtPknormU16F32
        | Op::VCvtPknormI16F16
        | Op::VCvtPknormU16F16
        | Op::VCvtPkaccumU8F32
        | Op::VSatPkU8I16 => {
            return Err(unimplemented("this conversion is not simulated"));
        }
        _ => return Ok(false),
    }
    Ok(true)
}
