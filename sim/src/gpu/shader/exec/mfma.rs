//! Matrix fused multiply-add (the dense `v_mfma_*` opcodes of gfx90a and gfx942):
//! `D = A × B + C` per block, A and B from VGPRs or AGPRs, C and D in VGPRs or AGPRs.
//!
//! Arithmetic, as assumed here (AMD documents the layouts, not the adder tree):
//! - f16, bf16 and f32 inputs: every product is exact in a double; the products are summed with
//!   C in k order in double precision and the sum is rounded once to f32, round to nearest
//!   even. The hardware accumulates in f32 with its own (unpublished) order, so results agree
//!   bit-exactly whenever the exact sum fits a single (as for the integers and short dyadic
//!   fractions the tests use) and may differ in the last bit otherwise.
//! - Denormals are kept, and the MODE register's rounding and denormal fields are not applied
//!   (the ISA guides describe MFMA without a MODE dependency; not confirmed on hardware).
//! - i8: exact products summed with C modulo 2^32 (no saturation: the MAI encoding has no
//!   clamp bit).
//! - f64: a chain of fused multiply-adds, `d = fma(a[k], b[k], d)` for k ascending from `d = C`
//!   (one rounding per step, as the f64 unit's FMA does; the order is an assumption).
//!
//! Modifiers: CBSZ/ABID broadcast one block of A to its 2^CBSZ-block group; BLGP permutes the
//! lanes B is read from (on gfx942 f64 opcodes its bits negate A, B and C instead). A modifier
//! the opcode does not define, or a value outside its documented range, is refused as an
//! illegal instruction naming the modifier (what the hardware does with it is not documented).
//!
//! EXEC: a matrix instruction computes with every lane's operands; the simulator runs it only
//! with all 64 lanes enabled and refuses it otherwise (what partial EXEC does to D is not
//! documented; compilers only emit MFMA in wave-uniform control flow).
//!
//! Hazards: the ISA requires independent instructions or `s_nop`s between an MFMA and a reader
//! of its result (and around v_accvgpr moves); a functional simulator completes each
//! instruction before the next, so it neither needs nor checks those wait states. A program
//! that omits them runs here as if it had them.
//!
//! Not simulated (refused as illegal instructions): the sparse `v_smfmac_*`, the fp8/bf8 and
//! xf32 opcodes of gfx942.

use super::mfma_shape::{Elem, Shape, shape};
use super::{Exec, Fault, R, unimplemented};
use crate::gpu::shader::isa::{Extra, Inst, Operand};
use crate::gpu::shader::wave::{LANES, Lanes};

/// Execute a matrix instruction.
pub fn exec(e: &mut Exec, inst: &Inst) -> R {
    let Some(s) = shape(inst.op) else {
        return Err(unimplemented(
            "sparse, fp8/bf8 and xf32 matrix opcodes are not simulated",
        ));
    };
    let Extra::Mai { cbsz, abid, blgp } = inst.extra else {
        return Err(unimplemented("matrix opcode without its MAI fields"));
    };
    check_modifiers(&s, cbsz, abid, blgp)?;
    if e.w.exec() != u64::MAX {
        return Err(unimplemented(
            "MFMA with EXEC not all ones (its effect on D is undocumented)",
        ));
    }
    let wide = s.elem == Elem::F64;
    let [a, b] = [0, 1].map(|i| match inst.src[i] {
        Operand::Vgpr(_) => e.tuple(inst.src[i], s.ab_dwords(), wide),
        _ => Err(unimplemented(
            "an A or B matrix operand outside the VGPR and AGPR files",
        )),
    });
    let (a, b) = (a?, b?);
    let c = e.tuple(inst.src[2], s.cd_dwords(), wide)?;
    let Operand::Vgpr(dst) = inst.dst else {
        return Err(unimplemented("a matrix result outside the vector file"));
    };
    // B as read after the lane-group pattern.
    let (b, neg) = if s.controls.blgp_is_neg {
        (b, blgp)
    } else {
        let permuted = b
            .iter()
            .map(|row| std::array::from_fn(|l| row[blgp_source(blgp, l)]))
            .collect();
        (permuted, 0)
    };
    let d = match s.elem {
        Elem::I8 => int_product(&s, &a, &b, &c, cbsz, abid),
        Elem::F64 => f64_product(&s, &a, &b, &c, cbsz, abid, neg),
        _ => float_product(&s, &a, &b, &c, cbsz, abid),
    };
    for (r, row) in d.iter().enumerate() {
        e.w.write_v(usize::from(dst) + r, row, u64::MAX);
    }
    Ok(())
}

/// Refuse CBSZ, ABID and BLGP values the opcode does not define.
fn check_modifiers(s: &Shape, cbsz: u8, abid: u8, blgp: u8) -> Result<(), Fault> {
    let c = s.controls;
    if c.cbsz_abid {
        // At most log2(blocks) (and 4) doublings; ABID picks a block of the group.
        let max_cbsz = s.blocks.trailing_zeros().min(4);
        if u32::from(cbsz) > max_cbsz {
            return Err(unimplemented(format!(
                "CBSZ {cbsz} exceeds {max_cbsz} for a {}-block matrix opcode",
                s.blocks
            )));
        }
        if abid >> cbsz != 0 {
            return Err(unimplemented(format!(
                "ABID {abid} is outside the 2^CBSZ = {} block group",
                1 << cbsz
            )));
        }
    } else if cbsz != 0 {
        return Err(unimplemented("CBSZ is not defined for this matrix opcode"));
    } else if abid != 0 {
        return Err(unimplemented("ABID is not defined for this matrix opcode"));
    }
    if !c.blgp && blgp != 0 {
        return Err(unimplemented("BLGP is not defined for this matrix opcode"));
    }
    Ok(())
}

/// The lane B's value for lane `l` is read from under lane-group pattern `blgp`: 1 and 2
/// broadcast the low or high 32 lanes, 3 rotates down by 16 lanes, 4–7 broadcast one group of
/// 16 lanes.
fn blgp_source(blgp: u8, l: usize) -> usize {
    match blgp {
        1 => l % 32,
        2 => 32 + l % 32,
        3 => (l + 16) % 64,
        4..=7 => 16 * usize::from(blgp - 4) + l % 16,
        _ => l,
    }
}

/// The block of A that block `block` multiplies under CBSZ/ABID.
fn a_block(block: usize, cbsz: u8, abid: u8) -> usize {
    ((block >> cbsz) << cbsz) + usize::from(abid)
}

/// Raw bits of element `e` of lane `l` of an A or B tuple.
fn element(rows: &[Lanes], elem: Elem, l: usize, e: usize) -> u64 {
    let bits = elem.bits();
    if bits == 64 {
        return u64::from(rows[2 * e][l]) | u64::from(rows[2 * e + 1][l]) << 32;
    }
    let at = e * bits;
    let word = rows[at / 32][l];
    u64::from(word >> (at % 32)) & ((1u64 << bits) - 1)
}

/// A and B as dense `[block][row][k]` and `[block][col][k]` arrays of element values, each
/// converted by `value`.
fn dense<T: Copy + Default>(
    s: &Shape,
    rows: &[Lanes],
    value: impl Fn(u64) -> T,
) -> Vec<Vec<Vec<T>>> {
    let mut out = vec![vec![vec![T::default(); s.k]; s.m]; s.blocks];
    for l in 0..LANES {
        for e in 0..s.elems_per_lane() {
            let (blk, i, k) = s.a_slot(l, e);
            out[blk][i][k] = value(element(rows, s.elem, l, e));
        }
    }
    out
}

/// A floating-point input element as a double (exact).
pub(super) fn float_value(elem: Elem, bits: u64) -> f64 {
    match elem {
        Elem::F16 => super::half::f16_to_f64(bits as u16, true),
        Elem::Bf16 => f64::from(f32::from_bits((bits as u32) << 16)),
        _ => f64::from(f32::from_bits(bits as u32)),
    }
}

/// f16, bf16 and f32 matrices into f32 accumulators.
fn float_product(
    s: &Shape,
    a: &[Lanes],
    b: &[Lanes],
    c: &[Lanes],
    cbsz: u8,
    abid: u8,
) -> Vec<Lanes> {
    let av = dense(s, a, |x| float_value(s.elem, x));
    let bv = dense(s, b, |x| float_value(s.elem, x));
    let mut d = vec![[0u32; LANES]; s.cd_dwords()];
    for (r, row) in d.iter_mut().enumerate() {
        for (l, out) in row.iter_mut().enumerate() {
            let (blk, i, j) = s.d_slot(r, l);
            let ar = &av[a_block(blk, cbsz, abid)][i];
            let bc = &bv[blk][j];
            let mut sum = f64::from(f32::from_bits(c[r][l]));
            for k in 0..s.k {
                sum += ar[k] * bc[k];
            }
            *out = (sum as f32).to_bits();
        }
    }
    d
}

/// i8 matrices into i32 accumulators.
fn int_product(s: &Shape, a: &[Lanes], b: &[Lanes], c: &[Lanes], cbsz: u8, abid: u8) -> Vec<Lanes> {
    let av = dense(s, a, |x| i32::from(x as u8 as i8));
    let bv = dense(s, b, |x| i32::from(x as u8 as i8));
    let mut d = vec![[0u32; LANES]; s.cd_dwords()];
    for (r, row) in d.iter_mut().enumerate() {
        for (l, out) in row.iter_mut().enumerate() {
            let (blk, i, j) = s.d_slot(r, l);
            let ar = &av[a_block(blk, cbsz, abid)][i];
            let bc = &bv[blk][j];
            let mut sum = c[r][l] as i32;
            for k in 0..s.k {
                sum = sum.wrapping_add(ar[k] * bc[k]);
            }
            *out = sum as u32;
        }
    }
    d
}

/// f64 matrices; `neg` bits 0, 1, 2 negate A, B and C (gfx942).
fn f64_product(
    s: &Shape,
    a: &[Lanes],
    b: &[Lanes],
    c: &[Lanes],
    cbsz: u8,
    abid: u8,
    neg: u8,
) -> Vec<Lanes> {
    let sign = |bit: u8| if neg & bit != 0 { -1.0 } else { 1.0 };
    let av = dense(s, a, |x| sign(1) * f64::from_bits(x));
    let bv = dense(s, b, |x| sign(2) * f64::from_bits(x));
    let mut d = vec![[0u32; LANES]; s.cd_dwords()];
    for p in 0..s.cd_dwords() / 2 {
        for l in 0..LANES {
            let (blk, i, j) = s.d_slot(p, l);
            let ar = &av[a_block(blk, cbsz, abid)][i];
            let bc = &bv[blk][j];
            let cv = f64::from_bits(u64::from(c[2 * p][l]) | u64::from(c[2 * p + 1][l]) << 32);
            let mut acc = sign(4) * cv;
            for k in 0..s.k {
                acc = ar[k].mul_add(bc[k], acc);
            }
            let bits = acc.to_bits();
            d[2 * p][l] = bits as u32;
            d[2 * p + 1][l] = (bits >> 32) as u32;
        }
    }
    d
}

impl Exec<'_, '_> {
    /// `n` consecutive registers of a matrix operand, one row per register. A and B are
    /// VGPR/AGPR tuples (LLVM's assembler accepts nothing else); C may also be an inline
    /// constant, which every element takes (`wide`: a double, repeated as register pairs).
    pub(super) fn tuple(&self, op: Operand, n: usize, wide: bool) -> Result<Vec<Lanes>, Fault> {
        match op {
            Operand::Vgpr(r) => Ok((0..n).map(|i| *self.w.v(usize::from(r) + i)).collect()),
            Operand::Inline(v) | Operand::Literal { value: v, .. } => Ok((0..n)
                .map(|i| {
                    let word = if wide && i % 2 == 1 { v >> 32 } else { v };
                    [word as u32; LANES]
                })
                .collect()),
            _ => Err(unimplemented(
                "a matrix operand that is neither a register tuple nor a constant",
            )),
        }
    }
}
