//! GFX11 (RDNA3) wave matrix multiply-accumulate, `v_wmma_*_16x16x16_*`: `D = A × B + C` for
//! one 16×16×16 product per wave, in wave32 and wave64.
//!
//! Register layouts (AMD's GPUOpen article "How to accelerate AI applications on RDNA 3 using
//! WMMA", whose wave32 example stores `c[16 * (2 * ele + lane / 16) + lane % 16]`; the wave64
//! C/D rule is the same one extended to four lane groups, as LLVM's wave64 types (4 VGPRs of
//! f32 C) require; not checked on hardware):
//! - A (16×16): lane `l` holds row `l % 16`, its 16 K elements packed from bit 0 of the
//!   tuple's first register (f16/bf16: 8 VGPRs, iu8: 4, iu4: 2). B likewise holds column
//!   `l % 16`. Every 16-lane group of the wave must hold the same copy ("replicated"); each
//!   group computes its rows of D from its own copy (a model: what the hardware does with
//!   copies that differ is not documented).
//! - C and D (f32/i32): register `v`, lane `l` is element `(G·v + l / 16, l % 16)` with G the
//!   number of 16-lane groups (2 in wave32: 8 VGPRs; 4 in wave64: 4 VGPRs). f16/bf16 C and D
//!   use the same places, in the low halves of the registers, or the high halves with
//!   `op_sel:[0,0,1]`; the other halves are kept (LLVM packs two results in one tuple so:
//!   review D158059).
//!
//! Arithmetic: the same model as GFX9's MFMA ([`super::mfma`]): products exact in a double,
//! summed with C in K order, rounded once (to f32, or straight to f16/bf16, nearest even);
//! integer products summed exactly, modulo 2^32, or saturated with CLAMP (the LLVM
//! intrinsics' clamp argument). Denormals are kept whatever MODE says (as for MFMA).
//!
//! Modifiers and EXEC, from a summary of AMD's RDNA 3.5 ISA guide (§7.9 and the VOP3P
//! pseudocode), not checked against the RDNA3 guide itself: the integer forms' NEG bits 0 and
//! 1 make A and B signed (LLVM's `neg_lo`); the float forms' NEG bits 0/1 negate the low
//! halves of A/B, NEG_HI bits 0/1 their high halves, and NEG_HI/NEG bit 2 are ABS/NEG of C;
//! op_sel bit 2 picks the halves of an f16/bf16 C and D. A WMMA runs with EXEC forced to all
//! ones (`saved_exec = EXEC; EXEC = -1; D = A × B + C; EXEC = saved_exec`): every lane of D
//! is written whatever EXEC is. Refused: CLAMP on the float forms (LLVM rejects it) and
//! integer NEG bits other than the two signedness bits.

use super::mfma::float_value;
use super::mfma_shape::Elem;
use super::{Exec, R, unimplemented};
use crate::gpu::shader::isa::{Extra, Inst, Operand, Wmma};
use crate::gpu::shader::wave::Lanes;

/// Bits of one A/B element.
fn element_bits(kind: Wmma) -> usize {
    match kind {
        Wmma::I32Iu8 => 8,
        Wmma::I32Iu4 => 4,
        _ => 16,
    }
}

/// Raw element `k` of lane `l` of an A or B tuple.
fn element(rows: &[Lanes], bits: usize, l: usize, k: usize) -> u32 {
    let at = k * bits;
    rows[at / 32][l] >> (at % 32) & ((1u32 << bits) - 1)
}

/// An integer element, signed or not.
fn int_value(raw: u32, bits: usize, signed: bool) -> i64 {
    if signed {
        i64::from(((raw << (32 - bits)) as i32) >> (32 - bits))
    } else {
        i64::from(raw)
    }
}

/// `x` rounded to bfloat16, nearest even (NaN: the quiet NaN).
fn bf16_bits(x: f64) -> u16 {
    let f = x as f32;
    if f.is_nan() {
        return 0x7fc0;
    }
    let bits = f.to_bits();
    let lo = bits & 0xffff_0000;
    if lo == bits {
        return (lo >> 16) as u16;
    }
    // The two bf16 neighbours of `x` (toward zero and away), chosen on the exact value so
    // that rounding to f32 first does not round twice.
    let hi = lo + 0x1_0000;
    let (dlo, dhi) = (
        (x - f64::from(f32::from_bits(lo))).abs(),
        (f64::from(f32::from_bits(hi)) - x).abs(),
    );
    let pick = if dlo < dhi || (dlo == dhi && lo & 0x1_0000 == 0) {
        lo
    } else {
        hi
    };
    (pick >> 16) as u16
}

/// Execute a WMMA.
pub fn exec(e: &mut Exec, inst: &Inst) -> R {
    let Extra::Wmma(kind) = inst.extra else {
        return Err(unimplemented("a WMMA without its kind"));
    };
    let width = e.w.lanes();
    let m = inst.mods;
    let int = matches!(kind, Wmma::I32Iu8 | Wmma::I32Iu4);
    if int && (m.neg_hi != 0 || m.neg & !3 != 0) {
        return Err(unimplemented(
            "integer WMMA NEG bits beyond the signedness of A and B",
        ));
    }
    if m.clamp && !int {
        return Err(unimplemented("WMMA CLAMP on a float form"));
    }
    let Operand::Vgpr(d) = inst.dst else {
        return Err(unimplemented("a WMMA destination outside the VGPRs"));
    };
    let bits = element_bits(kind);
    let ab_regs = 16 * bits / 32;
    let groups = width / 16;
    let cd_regs = 256 / width;
    let a = e.tuple(inst.src[0], ab_regs, false)?;
    let b = e.tuple(inst.src[1], ab_regs, false)?;
    let c = e.tuple(inst.src[2], cd_regs, false)?;
    let hi_half = m.op_sel & 4 != 0;
    let old: Vec<Lanes> = (0..cd_regs).map(|v| *e.w.v(usize::from(d) + v)).collect();
    let mut out = old.clone();
    for (v, row) in out.iter_mut().enumerate() {
        for (l, slot) in row.iter_mut().enumerate().take(width) {
            let group = l / 16;
            let (i, j) = (groups * v + group, l % 16);
            let (a_lane, b_lane) = (16 * group + i, 16 * group + j);
            *slot = if int {
                let (sa, sb) = (m.neg & 1 != 0, m.neg & 2 != 0);
                let mut sum = i64::from(c[v][l] as i32);
                for k in 0..16 {
                    sum += int_value(element(&a, bits, a_lane, k), bits, sa)
                        * int_value(element(&b, bits, b_lane, k), bits, sb);
                }
                if m.clamp {
                    sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
                } else {
                    sum as i32 as u32
                }
            } else {
                let elem = if matches!(kind, Wmma::F32Bf16 | Wmma::Bf16Bf16) {
                    Elem::Bf16
                } else {
                    Elem::F16
                };
                // NEG negates the low halves of a source's dwords (even k), NEG_HI the high
                // halves (odd k).
                let input = |rows: &[Lanes], src: u8, lane: usize, k: usize| {
                    let x = float_value(elem, u64::from(element(rows, bits, lane, k)));
                    let negate = if k % 2 == 0 { m.neg } else { m.neg_hi };
                    if negate >> src & 1 != 0 { -x } else { x }
                };
                let c_half = (if hi_half { c[v][l] >> 16 } else { c[v][l] }) as u64 & 0xffff;
                let mut sum = match kind {
                    Wmma::F16F16 | Wmma::Bf16Bf16 => float_value(elem, c_half),
                    _ => f64::from(f32::from_bits(c[v][l])),
                };
                // C: NEG_HI bit 2 is ABS, NEG bit 2 NEG.
                if m.neg_hi & 4 != 0 {
                    sum = sum.abs();
                }
                if m.neg & 4 != 0 {
                    sum = -sum;
                }
                for k in 0..16 {
                    sum += input(&a, 0, a_lane, k) * input(&b, 1, b_lane, k);
                }
                match kind {
                    Wmma::F16F16 | Wmma::Bf16Bf16 => {
                        let h = if kind == Wmma::F16F16 {
                            super::half::f64_to_f16(sum, true)
                        } else {
                            bf16_bits(sum)
                        };
                        let keep = old[v][l];
                        if hi_half {
                            (keep & 0xffff) | u32::from(h) << 16
                        } else {
                            (keep & 0xffff_0000) | u32::from(h)
                        }
                    }
                    _ => (sum as f32).to_bits(),
                }
            };
        }
    }
    for (v, row) in out.iter().enumerate() {
        e.w.v_mut(usize::from(d) + v)[..width].copy_from_slice(&row[..width]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bf16_rounds_the_exact_value_to_nearest_even() {
        assert_eq!(bf16_bits(1.0), 0x3f80);
        // 1 + 2^-8 is halfway between bf16 1.0 and 1 + 2^-7: ties to even (1.0).
        assert_eq!(bf16_bits(1.0 + 2f64.powi(-8)), 0x3f80);
        // Just above halfway rounds up, though the f32 rounding of it is the halfway point.
        assert_eq!(bf16_bits(1.0 + 2f64.powi(-8) + 2f64.powi(-40)), 0x3f81);
        assert_eq!(bf16_bits(-3.0), 0xc040);
    }
}
