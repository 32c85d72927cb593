//! IEEE half precision: conversions between a half's bits and a double, as the VALU's f16
//! instructions, conversions and atomics read and write them.

/// Round a double to the nearest half (bits), ties to even; `keep_denormals` false flushes
/// half denormal results to zero. NaN stays NaN (quiet), overflow gives infinity.
pub fn f64_to_f16(x: f64, keep_denormals: bool) -> u16 {
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x.is_nan() {
        let payload = ((x.to_bits() >> 42) & 0x3ff) as u16;
        return sign | 0x7c00 | 0x0200 | payload;
    }
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < 6.103_515_625e-5 {
        // Below the smallest normal half (2^-14): a multiple of 2^-24.
        if !keep_denormals {
            // Results that round up to the smallest normal are normal.
            let m = (a * 16_777_216.0).round_ties_even();
            return if m >= 1024.0 { sign | 0x0400 } else { sign };
        }
        let m = (a * 16_777_216.0).round_ties_even() as u16;
        return sign | m;
    }
    let bits = a.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1023;
    let frac = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    let mut m = ((frac - 1.0) * 1024.0).round_ties_even() as u32;
    let mut e = e + 15;
    if m == 1024 {
        m = 0;
        e += 1;
    }
    if e >= 31 {
        return sign | 0x7c00;
    }
    sign | ((e as u16) << 10) | m as u16
}

/// A half (bits) as a double, exactly; `keep_denormals` false reads denormals as zero.
pub fn f16_to_f64(h: u16, keep_denormals: bool) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = (h >> 10) & 0x1f;
    let m = f64::from(h & 0x3ff);
    match e {
        0 if keep_denormals => sign * m * 2f64.powi(-24),
        0 => sign * 0.0,
        31 if m == 0.0 => sign * f64::INFINITY,
        // NaN: the payload (quiet bit included) moves to the top of the double's mantissa.
        31 => f64::from_bits(
            (u64::from(h & 0x8000) << 48) | 0x7ff0_0000_0000_0000 | (u64::from(h & 0x3ff) << 42),
        ),
        _ => sign * (1.0 + m / 1024.0) * 2f64.powi(i32::from(e) - 15),
    }
}
