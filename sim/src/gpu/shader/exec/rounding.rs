//! The MODE register's rounding modes (FP_ROUND: bits 1:0 for singles, 3:2 for halves and
//! doubles): results are computed exactly, or as a rounded value plus the sign of its error,
//! and then rounded to the target precision in the selected direction.

use super::half::{f16_to_f64, f64_to_f16};

/// A rounding direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    /// To nearest, ties to even (0).
    NearestEven,
    /// Toward +infinity (1).
    Up,
    /// Toward -infinity (2).
    Down,
    /// Toward zero (3).
    Zero,
}

impl Round {
    /// Decode a 2-bit FP_ROUND field.
    pub fn from_bits(bits: u32) -> Self {
        match bits & 3 {
            0 => Self::NearestEven,
            1 => Self::Up,
            2 => Self::Down,
            _ => Self::Zero,
        }
    }
}

/// The sign of `x` as -1, 0 or 1.
fn sign(x: f64) -> i32 {
    if x > 0.0 {
        1
    } else if x < 0.0 {
        -1
    } else {
        0
    }
}

/// Move `r`, a rounded result, one step in `mode`'s direction when the exact value lies on
/// the side `t` (sign of exact − r) that the mode rounds to. `up`/`down` give the neighbours.
fn adjust<T: Copy>(
    r: T,
    negative: bool,
    t: i32,
    mode: Round,
    up: impl Fn() -> T,
    down: impl Fn() -> T,
) -> T {
    match mode {
        Round::Up if t > 0 => up(),
        Round::Down if t < 0 => down(),
        Round::Zero if t < 0 && !negative => down(),
        Round::Zero if t > 0 && negative => up(),
        // NearestEven: `r` is already the correctly rounded value.
        _ => r,
    }
}

/// The neighbouring single toward +inf (`up`) or -inf.
pub fn next32(r: f32, up: bool) -> f32 {
    if r.is_nan() || (r == f32::INFINITY && up) || (r == f32::NEG_INFINITY && !up) {
        return r;
    }
    if r == 0.0 {
        return if up {
            f32::from_bits(1)
        } else {
            -f32::from_bits(1)
        };
    }
    let b = r.to_bits();
    f32::from_bits(if up == r.is_sign_negative() {
        b - 1
    } else {
        b + 1
    })
}

/// The neighbouring double toward +inf (`up`) or -inf.
pub fn next64(r: f64, up: bool) -> f64 {
    if r.is_nan() || (r == f64::INFINITY && up) || (r == f64::NEG_INFINITY && !up) {
        return r;
    }
    if r == 0.0 {
        return if up {
            f64::from_bits(1)
        } else {
            -f64::from_bits(1)
        };
    }
    let b = r.to_bits();
    f64::from_bits(if up == r.is_sign_negative() {
        b - 1
    } else {
        b + 1
    })
}

/// The neighbouring half (bits) toward +inf or -inf.
fn next16(h: u16, up: bool) -> u16 {
    let neg = h & 0x8000 != 0;
    let mag = h & 0x7fff;
    if mag > 0x7c00 {
        return h;
    }
    if mag == 0 {
        return if up { 1 } else { 0x8001 };
    }
    if up == neg {
        h - 1
    } else if mag == 0x7c00 {
        h
    } else {
        h + 1
    }
}

/// Round `s + e` to a single in `mode`, where `s` is a double and `e` is the exact (or at least
/// correctly signed) remainder of the exact value. For round-to-nearest the result is correct
/// whenever `s + e` is exact.
pub fn round32(s: f64, e: f64, mode: Round) -> f32 {
    let r = s as f32;
    if s.is_nan() {
        return r;
    }
    let d = s - f64::from(r);
    let t = if d != 0.0 && d.is_finite() {
        sign(d)
    } else if r.is_infinite() && s.is_finite() {
        // Overflowed to infinity: the exact value is on the finite side.
        -sign(f64::from(r))
    } else {
        sign(e)
    };
    if mode == Round::NearestEven {
        // Resolve a tie that the double rounding of `s` may have manufactured.
        if d != 0.0 && e != 0.0 && r.is_finite() {
            let n = next32(r, d > 0.0);
            let half = (f64::from(n) - f64::from(r)) / 2.0;
            if d == half && sign(e) == sign(d) {
                return n;
            }
        }
        return r;
    }
    adjust(
        r,
        r.is_sign_negative(),
        t,
        mode,
        || next32(r, true),
        || next32(r, false),
    )
}

/// Round to a double in `mode`: `s` is the round-to-nearest result and `e` the sign-correct
/// error of it (exact − s).
pub fn round64(s: f64, e: f64, mode: Round) -> f64 {
    if s.is_nan() || mode == Round::NearestEven {
        return s;
    }
    // (An overflow to infinity carries no error here, so directed modes keep the infinity.)
    adjust(
        s,
        s.is_sign_negative(),
        sign(e),
        mode,
        || next64(s, true),
        || next64(s, false),
    )
}

/// Round a double plus remainder to a half (bits) in `mode`; `keep_denormals` false flushes
/// denormal results.
pub fn round16(x: f64, e: f64, mode: Round, keep_denormals: bool) -> u16 {
    let r = f64_to_f16(x, true);
    if x.is_nan() || mode == Round::NearestEven {
        return if keep_denormals {
            r
        } else {
            f64_to_f16(x, false)
        };
    }
    let rv = f16_to_f64(r, true);
    let t = if rv.is_infinite() && x.is_finite() {
        -sign(rv)
    } else if x != rv {
        sign(x - rv)
    } else {
        sign(e)
    };
    let h = adjust(
        r,
        r & 0x8000 != 0,
        t,
        mode,
        || next16(r, true),
        || next16(r, false),
    );
    if !keep_denormals && h & 0x7c00 == 0 {
        h & 0x8000
    } else {
        h
    }
}

/// `a + b` and its exact error.
pub fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    if !s.is_finite() {
        return (s, 0.0);
    }
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `a * b` and its exact error (barring underflow).
pub fn two_product(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    if !p.is_finite() {
        return (p, 0.0);
    }
    (p, a.mul_add(b, -p))
}

/// `sqrt(a)` and an error with the sign of the exact remainder.
pub fn square_root(a: f64) -> (f64, f64) {
    let s = a.sqrt();
    if !s.is_finite() || s == 0.0 {
        return (s, 0.0);
    }
    (s, (-s).mul_add(s, a))
}

/// `fma(a, b, c)` for doubles and an estimate of its error's sign.
pub fn fused(a: f64, b: f64, c: f64) -> (f64, f64) {
    let r = a.mul_add(b, c);
    if !r.is_finite() {
        return (r, 0.0);
    }
    let (p, pe) = two_product(a, b);
    let (s, se) = two_sum(p, c);
    (r, (s - r) + se + pe)
}
