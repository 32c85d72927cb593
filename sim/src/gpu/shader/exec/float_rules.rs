//! Floating-point helpers with the hardware's rules: denormal flushing per the MODE register,
//! IEEE-mode min/max NaN handling, half-precision rounding, classification, and the division
//! helper instructions (v_div_scale, v_div_fmas, v_div_fixup).

use super::rounding::{Round, fused, round32, round64, two_sum};

/// Denormal handling of one precision: whether denormal inputs and outputs are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Denorm {
    /// Denormal inputs are used as they are (else read as zero).
    pub inputs: bool,
    /// Denormal results are kept (else written as zero).
    pub outputs: bool,
}

impl Denorm {
    /// Whether nothing is flushed.
    pub fn is_ieee(self) -> bool {
        self.inputs && self.outputs
    }
}

/// Flush a single-precision denormal to a zero of the same sign.
#[inline]
pub fn flush32(x: f32) -> f32 {
    if x.is_subnormal() {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

/// Flush a double-precision denormal.
#[inline]
pub fn flush64(x: f64) -> f64 {
    if x.is_subnormal() {
        f64::from_bits(x.to_bits() & 0x8000_0000_0000_0000)
    } else {
        x
    }
}

/// Quiet a NaN (set the quiet bit), leave other values alone.
#[inline]
pub fn quiet32(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(x.to_bits() | 0x0040_0000)
    } else {
        x
    }
}

/// Quiet a double NaN.
#[inline]
pub fn quiet64(x: f64) -> f64 {
    if x.is_nan() {
        f64::from_bits(x.to_bits() | 0x0008_0000_0000_0000)
    } else {
        x
    }
}

#[inline]
fn is_snan32(x: f32) -> bool {
    x.is_nan() && x.to_bits() & 0x0040_0000 == 0
}

#[inline]
fn is_snan64(x: f64) -> bool {
    x.is_nan() && x.to_bits() & 0x0008_0000_0000_0000 == 0
}

/// v_max_f32 / v_min_f32. In IEEE mode a signalling NaN input gives a quiet NaN; otherwise a
/// NaN input is ignored (IEEE 754-2008 maxNum/minNum). -0 < +0.
#[inline]
pub fn minmax32(a: f32, b: f32, max: bool, ieee: bool) -> f32 {
    if ieee && (is_snan32(a) || is_snan32(b)) {
        return quiet32(if is_snan32(a) { a } else { b });
    }
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        // Equal values, or zeros of either sign: +0 is the larger.
        let (x, y) = (a.to_bits(), b.to_bits());
        return f32::from_bits(if max { x & y } else { x | y });
    }
    if (a > b) == max { a } else { b }
}

/// The double-precision [`minmax32`].
#[inline]
pub fn minmax64(a: f64, b: f64, max: bool, ieee: bool) -> f64 {
    if ieee && (is_snan64(a) || is_snan64(b)) {
        return quiet64(if is_snan64(a) { a } else { b });
    }
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        let (x, y) = (a.to_bits(), b.to_bits());
        return f64::from_bits(if max { x & y } else { x | y });
    }
    if (a > b) == max { a } else { b }
}

/// The median of three (v_med3_f32): NaN-propagating as the hardware's min/max network.
pub fn med3_32(a: f32, b: f32, c: f32, ieee: bool) -> f32 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return minmax32(minmax32(a, b, false, ieee), c, false, ieee);
    }
    let mx = minmax32(minmax32(a, b, true, ieee), c, true, ieee);
    if mx == a {
        minmax32(b, c, true, ieee)
    } else if mx == b {
        minmax32(a, c, true, ieee)
    } else {
        minmax32(a, b, true, ieee)
    }
}

/// `x * 2^n` for doubles, rounded once (like C's scalbn).
pub fn ldexp64(mut x: f64, mut n: i32) -> f64 {
    let p1023 = f64::from_bits(0x7fe0_0000_0000_0000); // 2^1023
    let pm969 = f64::from_bits(0x0360_0000_0000_0000); // 2^-969 = 2^-1022 * 2^53
    if n > 1023 {
        x *= p1023;
        n -= 1023;
        if n > 1023 {
            x *= p1023;
            n -= 1023;
            n = n.min(1023);
        }
    } else if n < -1022 {
        // Scale in two steps that keep the intermediate normal, so only the last multiply
        // rounds.
        x *= pm969;
        n += 969;
        if n < -1022 {
            x *= pm969;
            n += 969;
            n = n.max(-1022);
        }
    }
    x * f64::from_bits(((0x3ff + n) as u64) << 52)
}

/// `x * 2^n` for singles, rounded once.
pub fn ldexp32(x: f32, n: i32) -> f32 {
    // Exact in double for every single and |n| <= 300; beyond, the result saturates anyway.
    let n = n.clamp(-300, 300);
    (f64::from(x) * 2f64.powi(n)) as f32
}

/// frexp: mantissa in [0.5, 1) with the sign of `x`, and exponent; NaN, infinities and zero
/// give (x, 0).
pub fn frexp64(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let (x, bias) = if x.is_subnormal() {
        (x * 2f64.powi(64), -64)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1022;
    let m = f64::from_bits((bits & 0x800f_ffff_ffff_ffff) | 0x3fe0_0000_0000_0000);
    (m, e + bias)
}

/// The class bits of v_cmp_class: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0,
/// 6 +0, 7 +denormal, 8 +normal, 9 +inf.
pub fn class64(x: f64, is_snan: bool) -> u32 {
    let neg = x.is_sign_negative();
    let bit = if x.is_nan() {
        i32::from(!is_snan)
    } else if x.is_infinite() {
        if neg { 2 } else { 9 }
    } else if x == 0.0 {
        if neg { 5 } else { 6 }
    } else if x.is_subnormal() {
        if neg { 4 } else { 7 }
    } else if neg {
        3
    } else {
        8
    };
    1 << bit
}

/// Class of a single (bits).
pub fn class32(bits: u32) -> u32 {
    let x = f32::from_bits(bits);
    let snan = x.is_nan() && bits & 0x0040_0000 == 0;
    if x.is_subnormal() {
        return if x.is_sign_negative() { 1 << 4 } else { 1 << 7 };
    }
    class64(f64::from(x), snan)
}

/// Class of a double (bits).
pub fn class_f64(bits: u64) -> u32 {
    let x = f64::from_bits(bits);
    class64(x, x.is_nan() && bits & 0x0008_0000_0000_0000 == 0)
}

/// Class of a half (bits).
pub fn class16(h: u16) -> u32 {
    let e = (h >> 10) & 0x1f;
    let neg = h & 0x8000 != 0;
    let bit = match (e, h & 0x3ff) {
        (31, 0) => {
            if neg {
                2
            } else {
                9
            }
        }
        (31, m) => u32::from(m & 0x200 != 0),
        (0, 0) => {
            if neg {
                5
            } else {
                6
            }
        }
        (0, _) => {
            if neg {
                4
            } else {
                7
            }
        }
        _ => {
            if neg {
                3
            } else {
                8
            }
        }
    };
    1 << bit
}

/// Biased exponent field of a single.
fn exp32(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xff) as i32
}

fn exp64(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff) as i32
}

/// v_div_scale_f32: (result, VCC bit). `s0` is the value to scale (the denominator or the
/// numerator), `s1` the denominator, `s2` the numerator. After the ISA pseudocode: both operands
/// are scaled by 2^64 when the numerator is tiny or the denominator denormal, by 2^-64 when
/// the reciprocal would be denormal; when only one of them can be scaled VCC tells
/// v_div_fmas to rescale the quotient. (The direction of the scale in the "huge denominator,
/// denormal quotient" case is inferred from what makes the division sequence correct; the
/// public pseudocode we could consult is ambiguous there.)
pub fn div_scale32(s0: f32, s1: f32, s2: f32) -> (f32, bool) {
    let (d, n) = (f64::from(s1), f64::from(s2));
    if n == 0.0 || d == 0.0 {
        return (f32::NAN, false);
    }
    if exp32(s2) - exp32(s1) >= 96 {
        // N/D near the largest single: only the denominator is scaled.
        return (if s0 == s1 { ldexp32(s0, 64) } else { s0 }, true);
    }
    if s1.is_subnormal() {
        return (ldexp32(s0, 64), false);
    }
    let rcp_denorm = (1.0 / d).abs() < f64::from(f32::MIN_POSITIVE);
    let quot = (n / d).abs();
    let quot_denorm = quot < f64::from(f32::MIN_POSITIVE) && quot != 0.0;
    if rcp_denorm && quot_denorm {
        // A huge denominator and a denormal quotient: only the denominator is scaled, down, so
        // its reciprocal is normal; v_div_fmas scales the small quotient back down.
        return (if s0 == s1 { ldexp32(s0, -64) } else { s0 }, true);
    }
    if rcp_denorm {
        return (ldexp32(s0, -64), false);
    }
    if quot_denorm {
        return (if s0 == s2 { ldexp32(s0, 64) } else { s0 }, true);
    }
    if exp32(s2) <= 23 {
        // The numerator is tiny: scale both.
        return (ldexp32(s0, 64), false);
    }
    (s0, false)
}

/// v_div_scale_f64 (thresholds 768 and 53, scale 2^128).
pub fn div_scale64(s0: f64, s1: f64, s2: f64) -> (f64, bool) {
    if s2 == 0.0 || s1 == 0.0 {
        return (f64::NAN, false);
    }
    if exp64(s2) - exp64(s1) >= 768 {
        return (if s0 == s1 { ldexp64(s0, 128) } else { s0 }, true);
    }
    if s1.is_subnormal() {
        return (ldexp64(s0, 128), false);
    }
    let rcp = 1.0 / s1;
    let rcp_denorm = rcp.is_subnormal() || rcp == 0.0;
    let quot = s2 / s1;
    let quot_denorm = quot.is_subnormal();
    if rcp_denorm && quot_denorm {
        return (if s0 == s1 { ldexp64(s0, -128) } else { s0 }, true);
    }
    if rcp_denorm {
        return (ldexp64(s0, -128), false);
    }
    if quot_denorm {
        return (if s0 == s2 { ldexp64(s0, 128) } else { s0 }, true);
    }
    if exp64(s2) <= 53 {
        return (ldexp64(s0, 128), false);
    }
    (s0, false)
}

/// v_div_fmas_f32: `fma(s0, s1, s2)`, rescaled by 2^±64 when VCC is set (up when the quotient
/// estimate `s2` is large, i.e. the denominator was scaled; down when the numerator was), with
/// a single rounding in `mode` (the hardware scales inside the fused operation, so a result
/// that becomes denormal is rounded once).
pub fn div_fmas32(s0: f32, s1: f32, s2: f32, vcc: bool, mode: Round) -> f32 {
    let k = if !vcc {
        0
    } else if s2.abs() >= 2.0 {
        64
    } else {
        -64
    };
    if !(s0.is_finite() && s1.is_finite() && s2.is_finite()) {
        return ldexp32(s0.mul_add(s1, s2), k);
    }
    let (s, e) = two_sum(f64::from(s0) * f64::from(s1), f64::from(s2));
    let scale = 2f64.powi(k);
    round32(s * scale, e * scale, mode)
}

/// v_div_fmas_f64 (2^±128).
pub fn div_fmas64(s0: f64, s1: f64, s2: f64, vcc: bool, mode: Round) -> f64 {
    let (r, e) = fused(s0, s1, s2);
    if !vcc {
        return round64(r, e, mode);
    }
    let k = if s2.abs() >= 2.0 { 128 } else { -128 };
    let scaled = ldexp64(r, k);
    if !scaled.is_finite() || scaled == 0.0 && r == 0.0 {
        return scaled;
    }
    // Scaling into the denormal range rounds: the total error is what scaling back loses plus
    // the fused operation's own.
    let back = ldexp64(scaled, -k);
    let err = (r - back) + e;
    if mode == Round::NearestEven {
        if err == 0.0 || !(scaled.is_subnormal() || scaled == 0.0) {
            return scaled;
        }
        // A tie manufactured by rounding twice: break it by the sign of the remainder.
        let d = r - back;
        if d != 0.0 {
            let n = super::rounding::next64(scaled, d > 0.0);
            let half = (ldexp64(n, -k) - back) / 2.0;
            if d == half && (e > 0.0) == (d > 0.0) && e != 0.0 {
                return n;
            }
        }
        return scaled;
    }
    round64(scaled, err, mode)
}

/// v_div_fixup_f32/f64 (in doubles): the special cases of `s2 / s1` around quotient `s0`.
pub fn div_fixup(s0: f64, s1: f64, s2: f64) -> f64 {
    let neg = s1.is_sign_negative() != s2.is_sign_negative();
    let signed = |v: f64| if neg { -v } else { v };
    if s2.is_nan() {
        return quiet64(s2);
    }
    if s1.is_nan() {
        return quiet64(s1);
    }
    if s1 == 0.0 && s2 == 0.0 {
        return f64::NAN;
    }
    if s1.is_infinite() && s2.is_infinite() {
        return f64::NAN;
    }
    if s1 == 0.0 || s2.is_infinite() {
        return signed(f64::INFINITY);
    }
    if s1.is_infinite() || s2 == 0.0 {
        return signed(0.0);
    }
    if s0.is_nan() {
        return signed(f64::INFINITY);
    }
    signed(s0.abs())
}
