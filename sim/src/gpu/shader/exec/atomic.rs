//! Atomic read-modify-write operations shared by LDS, FLAT/GLOBAL and MUBUF atomics.

use super::half::{f16_to_f64, f64_to_f16};

/// An atomic operation, named as in the opcode suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// Exchange.
    Swap,
    /// Compare and swap (`data` is the new value, `data2` the comparand).
    CmpSwap,
    /// Integer add.
    Add,
    /// Integer subtract.
    Sub,
    /// Reverse subtract (`data - old`).
    Rsub,
    /// Signed minimum.
    Smin,
    /// Unsigned minimum.
    Umin,
    /// Signed maximum.
    Smax,
    /// Unsigned maximum.
    Umax,
    /// And.
    And,
    /// Or.
    Or,
    /// Xor.
    Xor,
    /// Increment with wrap at `data`: `old >= data ? 0 : old + 1`.
    Inc,
    /// Decrement with wrap: `old == 0 || old > data ? data : old - 1`.
    Dec,
    /// Masked or: `(old & !data) | data2`.
    Mskor,
    /// Single-precision add.
    AddF32,
    /// Single-precision minimum.
    MinF32,
    /// Single-precision maximum.
    MaxF32,
    /// Double-precision add.
    AddF64,
    /// Double-precision minimum.
    MinF64,
    /// Double-precision maximum.
    MaxF64,
    /// Packed half add.
    PkAddF16,
    /// Packed bfloat16 add.
    PkAddBf16,
}

impl AtomicOp {
    /// The operation named by an opcode's suffix (`add`, `cmpswap`, `add_f32`, ...).
    pub fn from_suffix(s: &str) -> Option<Self> {
        Some(match s {
            "swap" | "wrxchg" => Self::Swap,
            "cmpswap" => Self::CmpSwap,
            "add" => Self::Add,
            "sub" => Self::Sub,
            "rsub" => Self::Rsub,
            "smin" => Self::Smin,
            "umin" => Self::Umin,
            "smax" => Self::Smax,
            "umax" => Self::Umax,
            "and" => Self::And,
            "or" => Self::Or,
            "xor" => Self::Xor,
            "inc" => Self::Inc,
            "dec" => Self::Dec,
            "mskor" => Self::Mskor,
            "add_f32" => Self::AddF32,
            "min_f32" => Self::MinF32,
            "max_f32" => Self::MaxF32,
            "add_f64" => Self::AddF64,
            "min_f64" => Self::MinF64,
            "max_f64" => Self::MaxF64,
            "pk_add_f16" => Self::PkAddF16,
            "pk_add_bf16" => Self::PkAddBf16,
            _ => return None,
        })
    }

    /// Whether the operation needs a second data operand.
    pub fn has_data2(self) -> bool {
        matches!(self, Self::CmpSwap | Self::Mskor)
    }

    /// The new value of an integer operation at either width; `None` for the float ones.
    fn apply_integer<W: AtomicWord>(self, old: W, data: W, data2: W) -> Option<W> {
        Some(match self {
            Self::Swap => data,
            Self::CmpSwap => {
                if old == data2 {
                    data
                } else {
                    old
                }
            }
            Self::Add => old.wrapping_add(data),
            Self::Sub => old.wrapping_sub(data),
            Self::Rsub => data.wrapping_sub(old),
            Self::Smin => old.signed_min(data),
            Self::Umin => old.min(data),
            Self::Smax => old.signed_max(data),
            Self::Umax => old.max(data),
            Self::And => old & data,
            Self::Or => old | data,
            Self::Xor => old ^ data,
            // `old < data` here, so `old + 1` cannot overflow.
            Self::Inc => {
                if old >= data {
                    W::ZERO
                } else {
                    old.wrapping_add(W::ONE)
                }
            }
            Self::Dec => {
                if old == W::ZERO || old > data {
                    data
                } else {
                    old.wrapping_sub(W::ONE)
                }
            }
            Self::Mskor => (old & !data) | data2,
            Self::AddF32
            | Self::MinF32
            | Self::MaxF32
            | Self::AddF64
            | Self::MinF64
            | Self::MaxF64
            | Self::PkAddF16
            | Self::PkAddBf16 => return None,
        })
    }

    /// The new 32-bit value.
    pub fn apply32(self, old: u32, data: u32, data2: u32) -> u32 {
        if let Some(new) = self.apply_integer(old, data, data2) {
            return new;
        }
        let f = f32::from_bits;
        match self {
            Self::AddF32 => (f(old) + f(data)).to_bits(),
            Self::MinF32 => super::float_rules::minmax32(f(old), f(data), false, true).to_bits(),
            Self::MaxF32 => super::float_rules::minmax32(f(old), f(data), true, true).to_bits(),
            Self::PkAddF16 => {
                let h = |v: u32, s: u32| f16_to_f64((v >> s) as u16, true);
                let lo = f64_to_f16(h(old, 0) + h(data, 0), true);
                let hi = f64_to_f16(h(old, 16) + h(data, 16), true);
                u32::from(lo) | u32::from(hi) << 16
            }
            Self::PkAddBf16 => {
                let b = |v: u32, s: u32| f32::from_bits(((v >> s) & 0xffff) << 16);
                let r = |x: f32| {
                    // Round to nearest even to bfloat16.
                    let bits = x.to_bits();
                    if x.is_nan() {
                        (bits >> 16) | 0x40
                    } else {
                        (bits + 0x7fff + ((bits >> 16) & 1)) >> 16
                    }
                };
                r(b(old, 0) + b(data, 0)) & 0xffff | (r(b(old, 16) + b(data, 16)) & 0xffff) << 16
            }
            // A 64-bit float operation has no 32-bit form: memory is left as it was.
            _ => old,
        }
    }

    /// The new 64-bit value.
    pub fn apply64(self, old: u64, data: u64, data2: u64) -> u64 {
        if let Some(new) = self.apply_integer(old, data, data2) {
            return new;
        }
        let f = f64::from_bits;
        match self {
            Self::AddF64 => (f(old) + f(data)).to_bits(),
            Self::MinF64 => super::float_rules::minmax64(f(old), f(data), false, true).to_bits(),
            Self::MaxF64 => super::float_rules::minmax64(f(old), f(data), true, true).to_bits(),
            // A 32-bit float operation has no 64-bit form: memory is left as it was.
            _ => old,
        }
    }
}

/// A memory word an integer atomic works on (u32 or u64).
trait AtomicWord:
    Copy
    + Ord
    + std::ops::BitAnd<Output = Self>
    + std::ops::BitOr<Output = Self>
    + std::ops::BitXor<Output = Self>
    + std::ops::Not<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    fn wrapping_add(self, other: Self) -> Self;
    fn wrapping_sub(self, other: Self) -> Self;
    /// Minimum of the two read as two's-complement signed values.
    fn signed_min(self, other: Self) -> Self;
    /// Maximum of the two read as two's-complement signed values.
    fn signed_max(self, other: Self) -> Self;
}

macro_rules! atomic_word {
    ($unsigned:ty, $signed:ty) => {
        impl AtomicWord for $unsigned {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            fn wrapping_add(self, other: Self) -> Self {
                <$unsigned>::wrapping_add(self, other)
            }
            fn wrapping_sub(self, other: Self) -> Self {
                <$unsigned>::wrapping_sub(self, other)
            }
            fn signed_min(self, other: Self) -> Self {
                (self as $signed).min(other as $signed) as $unsigned
            }
            fn signed_max(self, other: Self) -> Self {
                (self as $signed).max(other as $signed) as $unsigned
            }
        }
    };
}

atomic_word!(u32, i32);
atomic_word!(u64, i64);

#[cfg(test)]
mod tests {
    use super::AtomicOp::*;

    #[test]
    fn integer_operations_at_both_widths() {
        assert_eq!(
            Smin.apply32(5, u32::MAX, 0),
            u32::MAX,
            "-1 is the signed minimum"
        );
        assert_eq!(Umin.apply32(5, u32::MAX, 0), 5);
        assert_eq!(Smax.apply64(u64::MAX, 3, 0), 3);
        assert_eq!(Umax.apply64(u64::MAX, 3, 0), u64::MAX);
        assert_eq!(Inc.apply32(7, 7, 0), 0, "inc wraps to 0 at data");
        assert_eq!(Inc.apply64(6, 7, 0), 7);
        assert_eq!(Dec.apply32(0, 9, 0), 9, "dec wraps from 0 to data");
        assert_eq!(Dec.apply32(10, 9, 0), 9, "and from above data");
        assert_eq!(Dec.apply64(4, 9, 0), 3);
        assert_eq!(Rsub.apply32(3, 10, 0), 7);
        assert_eq!(Sub.apply64(0, 1, 0), u64::MAX);
        assert_eq!(CmpSwap.apply32(4, 8, 4), 8);
        assert_eq!(CmpSwap.apply64(5, 8, 4), 5);
        assert_eq!(Mskor.apply32(0xff00, 0x0f00, 0x0011), 0xf011);
    }

    #[test]
    fn float_operations_and_width_mismatches() {
        assert_eq!(
            f32::from_bits(AddF32.apply32(1.5f32.to_bits(), 2.25f32.to_bits(), 0)),
            3.75
        );
        assert_eq!(
            f64::from_bits(AddF64.apply64(1.5f64.to_bits(), 2.0f64.to_bits(), 0)),
            3.5
        );
        assert_eq!(
            AddF64.apply32(123, 456, 0),
            123,
            "no 32-bit form: memory unchanged"
        );
        assert_eq!(
            AddF32.apply64(123, 456, 0),
            123,
            "no 64-bit form: memory unchanged"
        );
        // Packed halves: (1.0, 2.0) + (0.5, 0.25) = (1.5, 2.25).
        let old = 0x3c00 | 0x4000 << 16;
        let data = 0x3800 | 0x3400 << 16;
        assert_eq!(PkAddF16.apply32(old, data, 0), 0x3e00 | 0x4080 << 16);
    }
}
