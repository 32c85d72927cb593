//! Atomic read-modify-write operations shared by LDS, FLAT/GLOBAL and MUBUF atomics.

use super::float::{f16_to_f64, f64_to_f16};

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

    /// The new 32-bit value.
    pub fn apply32(self, old: u32, data: u32, data2: u32) -> u32 {
        let f = f32::from_bits;
        match self {
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
            Self::Smin => (old as i32).min(data as i32) as u32,
            Self::Umin => old.min(data),
            Self::Smax => (old as i32).max(data as i32) as u32,
            Self::Umax => old.max(data),
            Self::And => old & data,
            Self::Or => old | data,
            Self::Xor => old ^ data,
            Self::Inc => {
                if old >= data {
                    0
                } else {
                    old + 1
                }
            }
            Self::Dec => {
                if old == 0 || old > data {
                    data
                } else {
                    old - 1
                }
            }
            Self::Mskor => (old & !data) | data2,
            Self::AddF32 => (f(old) + f(data)).to_bits(),
            Self::MinF32 => super::float::minmax32(f(old), f(data), false, true).to_bits(),
            Self::MaxF32 => super::float::minmax32(f(old), f(data), true, true).to_bits(),
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
            Self::AddF64 | Self::MinF64 | Self::MaxF64 => old,
        }
    }

    /// The new 64-bit value.
    pub fn apply64(self, old: u64, data: u64, data2: u64) -> u64 {
        let f = f64::from_bits;
        match self {
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
            Self::Smin => (old as i64).min(data as i64) as u64,
            Self::Umin => old.min(data),
            Self::Smax => (old as i64).max(data as i64) as u64,
            Self::Umax => old.max(data),
            Self::And => old & data,
            Self::Or => old | data,
            Self::Xor => old ^ data,
            Self::Inc => {
                if old >= data {
                    0
                } else {
                    old + 1
                }
            }
            Self::Dec => {
                if old == 0 || old > data {
                    data
                } else {
                    old - 1
                }
            }
            Self::Mskor => (old & !data) | data2,
            Self::AddF64 => (f(old) + f(data)).to_bits(),
            Self::MinF64 => super::float::minmax64(f(old), f(data), false, true).to_bits(),
            Self::MaxF64 => super::float::minmax64(f(old), f(data), true, true).to_bits(),
            _ => old,
        }
    }
}
