//! Typed buffer loads and stores (`buffer_{load,store}_format_*`, which GFX11's MTBUF
//! `tbuffer_*` lower to): each component converted between its memory format and a 32-bit
//! VGPR.
//!
//! The format is GFX10+'s unified one (data and number format in one 7-bit code; the codes
//! are LLVM's `BUF_FMT_*` for gfx11, checked with llvm-mc-22): MTBUF takes it from the
//! instruction, GFX11 MUBUF from word 3 bits 18:12 of the resource. GFX9's split DFMT/NFMT
//! descriptor formats are not decoded here (refused).
//!
//! Executed: the formats of one to four 8-, 16- or 32-bit components, every number format
//! (UNORM, SNORM, USCALED, SSCALED, UINT, SINT, FLOAT where it exists). Refused by name: the
//! packed formats (10_11_11, 11_11_10, 10_10_10_2, 2_10_10_10), the D16 forms, and stores to
//! USCALED/SSCALED.
//!
//! Conversions (what the hardware does is AMD's, documented loosely; where this model chose,
//! it says so):
//! - loads: UNORM `x / (2^n - 1)`, SNORM `max(x / (2^(n-1) - 1), -1)`, USCALED/SSCALED the
//!   integer as a float (all correctly rounded to f32), UINT/SINT zero- or sign-extended,
//!   FLOAT16 widened exactly. Components the format lacks read 0, and W reads 1 (1.0 for the
//!   non-integer formats). The resource's DST_SEL swizzle is not applied (identity).
//! - stores: UNORM/SNORM clamp to [0, 1] / [-1, 1], scale and round to nearest even (NaN
//!   stores 0); UINT/SINT saturate to the component's range (a choice: whether the hardware
//!   saturates or keeps the low bits is not documented where we looked); FLOAT16 rounds to
//!   nearest even. Only the components both the instruction and the format have are
//!   written.
//! - each component is range-checked on its own, like the dwords of an untyped access.

use super::half::{f16_to_f64, f64_to_f16};
use super::vmem::BufferAccess;
use super::{Exec, R, unimplemented};
use crate::gpu::shader::isa::{Inst, Op, Operand};
use crate::gpu::shader::wave::{LANES, lanes};

/// A typed load or store: how many components it moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TypedAccess {
    /// Components (x = 1 … xyzw = 4).
    pub count: u32,
    /// A store.
    pub store: bool,
    /// A D16 form (16-bit components packed two to a VGPR).
    pub d16: bool,
}

impl TypedAccess {
    /// The typed access `op` is, if it is one.
    pub fn of(op: Op) -> Option<Self> {
        let name = op.name();
        let (store, rest) = if let Some(r) = name.strip_prefix("buffer_load_format_") {
            (false, r)
        } else {
            (true, name.strip_prefix("buffer_store_format_")?)
        };
        let (d16, comps) = match rest.strip_prefix("d16_") {
            Some(c) => (true, c),
            None => (false, rest),
        };
        let count = match comps {
            "x" => 1,
            "xy" => 2,
            "xyz" => 3,
            "xyzw" => 4,
            _ => return None,
        };
        Some(Self { count, store, d16 })
    }
}

/// A number format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Num {
    Unorm,
    Snorm,
    Uscaled,
    Sscaled,
    Uint,
    Sint,
    Float,
}

/// A format with one to four components of one width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Format {
    /// Bits per component: 8, 16 or 32.
    bits: u32,
    /// Components in memory.
    comps: u32,
    num: Num,
}

/// GFX11's unified buffer formats, by code (`BUF_FMT_*` names without the prefix).
const FORMATS: [&str; 64] = [
    "INVALID",
    "8_UNORM",
    "8_SNORM",
    "8_USCALED",
    "8_SSCALED",
    "8_UINT",
    "8_SINT",
    "16_UNORM",
    "16_SNORM",
    "16_USCALED",
    "16_SSCALED",
    "16_UINT",
    "16_SINT",
    "16_FLOAT",
    "8_8_UNORM",
    "8_8_SNORM",
    "8_8_USCALED",
    "8_8_SSCALED",
    "8_8_UINT",
    "8_8_SINT",
    "32_UINT",
    "32_SINT",
    "32_FLOAT",
    "16_16_UNORM",
    "16_16_SNORM",
    "16_16_USCALED",
    "16_16_SSCALED",
    "16_16_UINT",
    "16_16_SINT",
    "16_16_FLOAT",
    "10_11_11_FLOAT",
    "11_11_10_FLOAT",
    "10_10_10_2_UNORM",
    "10_10_10_2_SNORM",
    "10_10_10_2_UINT",
    "10_10_10_2_SINT",
    "2_10_10_10_UNORM",
    "2_10_10_10_SNORM",
    "2_10_10_10_USCALED",
    "2_10_10_10_SSCALED",
    "2_10_10_10_UINT",
    "2_10_10_10_SINT",
    "8_8_8_8_UNORM",
    "8_8_8_8_SNORM",
    "8_8_8_8_USCALED",
    "8_8_8_8_SSCALED",
    "8_8_8_8_UINT",
    "8_8_8_8_SINT",
    "32_32_UINT",
    "32_32_SINT",
    "32_32_FLOAT",
    "16_16_16_16_UNORM",
    "16_16_16_16_SNORM",
    "16_16_16_16_USCALED",
    "16_16_16_16_SSCALED",
    "16_16_16_16_UINT",
    "16_16_16_16_SINT",
    "16_16_16_16_FLOAT",
    "32_32_32_UINT",
    "32_32_32_SINT",
    "32_32_32_FLOAT",
    "32_32_32_32_UINT",
    "32_32_32_32_SINT",
    "32_32_32_32_FLOAT",
];

impl Format {
    /// The format of `code`, or why it is refused.
    fn decode(code: u8) -> Result<Self, String> {
        let Some(&name) = FORMATS.get(usize::from(code)) else {
            return Err(format!("buffer format {code} (reserved)"));
        };
        let refuse = || format!("buffer format BUF_FMT_{name}");
        let (widths, num) = name.rsplit_once('_').ok_or_else(refuse)?;
        let num = match num {
            "UNORM" => Num::Unorm,
            "SNORM" => Num::Snorm,
            "USCALED" => Num::Uscaled,
            "SSCALED" => Num::Sscaled,
            "UINT" => Num::Uint,
            "SINT" => Num::Sint,
            "FLOAT" => Num::Float,
            _ => return Err(refuse()),
        };
        let widths: Vec<&str> = widths.split('_').collect();
        let bits = match widths[0] {
            "8" => 8,
            "16" => 16,
            "32" => 32,
            _ => return Err(refuse()),
        };
        if widths.iter().any(|w| *w != widths[0]) {
            return Err(refuse());
        }
        Ok(Self {
            bits,
            comps: widths.len() as u32,
            num,
        })
    }

    /// Bytes per component.
    fn bytes(self) -> u32 {
        self.bits / 8
    }

    /// A component read from memory (`raw`: its low `bits` bits) as a VGPR value.
    fn load(self, raw: u32) -> u32 {
        let n = self.bits;
        let unsigned = f64::from(raw);
        let signed = f64::from(sext(raw, n));
        match self.num {
            Num::Unorm => ((unsigned / f64::from(max_u(n))) as f32).to_bits(),
            Num::Snorm => ((signed / f64::from(max_s(n))).max(-1.0) as f32).to_bits(),
            Num::Uscaled => (unsigned as f32).to_bits(),
            Num::Sscaled => (signed as f32).to_bits(),
            Num::Sint => sext(raw, n) as u32,
            Num::Float if n == 16 => (f16_to_f64(raw as u16, true) as f32).to_bits(),
            Num::Uint | Num::Float => raw,
        }
    }

    /// What a component the format lacks reads: 0, and 1 for W.
    fn missing(self, component: u32) -> u32 {
        match (component, self.num) {
            (3, Num::Uint | Num::Sint) => 1,
            (3, _) => 1.0f32.to_bits(),
            _ => 0,
        }
    }

    /// A VGPR value converted for a component in memory (its low `bits` bits count).
    fn store(self, v: u32) -> Result<u32, String> {
        let n = self.bits;
        let f = f64::from(f32::from_bits(v));
        let scaled = |x: f64, max: u32| {
            if x.is_nan() {
                0
            } else {
                (x * f64::from(max)).round_ties_even() as i64 as u32
            }
        };
        Ok(match self.num {
            Num::Unorm => scaled(f.clamp(0.0, 1.0), max_u(n)),
            Num::Snorm => scaled(f.clamp(-1.0, 1.0), max_s(n)),
            Num::Uint if n < 32 => v.min(max_u(n)),
            Num::Sint if n < 32 => (v as i32).clamp(-(max_s(n) as i32) - 1, max_s(n) as i32) as u32,
            Num::Float if n == 16 => u32::from(f64_to_f16(f, true)),
            Num::Uint | Num::Sint | Num::Float => v,
            Num::Uscaled | Num::Sscaled => {
                return Err("a typed store to a USCALED/SSCALED format".into());
            }
        })
    }
}

/// The largest unsigned value of `n` bits (n < 32).
fn max_u(n: u32) -> u32 {
    (1u32 << n) - 1
}

/// The largest signed value of `n` bits.
fn max_s(n: u32) -> u32 {
    (1u32 << (n - 1)) - 1
}

/// The low `n` bits of `raw`, sign-extended.
fn sext(raw: u32, n: u32) -> i32 {
    if n >= 32 {
        raw as i32
    } else {
        ((raw << (32 - n)) as i32) >> (32 - n)
    }
}

/// Execute a typed buffer access.
pub fn exec(e: &mut Exec, inst: &Inst, access: TypedAccess) -> R {
    if access.d16 {
        return Err(unimplemented("typed buffer D16 forms"));
    }
    let mem = inst.mem();
    let lanes_at = BufferAccess::of(e, inst)?;
    let code = if mem.format != 0 {
        mem.format
    } else if e.shared.target.is_gfx9() {
        return Err(unimplemented("GFX9 descriptor buffer formats (DFMT/NFMT)"));
    } else {
        (lanes_at.word3() >> 12 & 0x7f) as u8
    };
    let format = Format::decode(code).map_err(unimplemented)?;
    let size = format.bytes();
    let reg = |op: Operand| match op {
        Operand::Vgpr(r) => Ok(usize::from(r)),
        _ => Err(unimplemented("a typed buffer access without VGPR data")),
    };
    e.mem.refresh();
    let exec = e.w.exec();
    if access.store {
        let data = reg(inst.src[1])?;
        for l in lanes(exec) {
            for k in 0..access.count.min(format.comps) {
                let v = format
                    .store(e.w.v(data + k as usize)[l])
                    .map_err(unimplemented)?;
                if let Some(a) = lanes_at.at(l, k * size, size) {
                    e.mem.write(a, &v.to_le_bytes()[..size as usize])?;
                }
            }
        }
        return Ok(());
    }
    let dst = reg(inst.dst)?;
    // Every lane reads before any VGPR is written: a faulting lane leaves them all unchanged.
    let mut results = [[0u32; 4]; LANES];
    for l in lanes(exec) {
        for k in 0..access.count {
            results[l][k as usize] = if k < format.comps {
                let mut b = [0u8; 4];
                if let Some(a) = lanes_at.at(l, k * size, size) {
                    e.mem.read(a, &mut b[..size as usize])?;
                }
                format.load(u32::from_le_bytes(b))
            } else {
                format.missing(k)
            };
        }
    }
    for l in lanes(exec) {
        for (k, &value) in results[l].iter().take(access.count as usize).enumerate() {
            e.w.v_mut(dst + k)[l] = value;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_decode_by_gfx11_code_and_packed_ones_are_refused_by_name() {
        let f = Format::decode(42).unwrap();
        assert_eq!((f.bits, f.comps, f.num), (8, 4, Num::Unorm));
        let f = Format::decode(63).unwrap();
        assert_eq!((f.bits, f.comps, f.num), (32, 4, Num::Float));
        assert_eq!(
            Format::decode(30).unwrap_err(),
            "buffer format BUF_FMT_10_11_11_FLOAT"
        );
        assert!(Format::decode(0).is_err());
        assert!(Format::decode(64).unwrap_err().contains("reserved"));
    }

    #[test]
    fn normalized_conversions_round_trip_their_end_points() {
        let unorm8 = Format::decode(1).unwrap();
        assert_eq!(f32::from_bits(unorm8.load(255)), 1.0);
        assert_eq!(f32::from_bits(unorm8.load(51)), 0.2);
        assert_eq!(unorm8.store(0.2f32.to_bits()), Ok(51));
        assert_eq!(unorm8.store(2.0f32.to_bits()), Ok(255));
        let snorm16 = Format::decode(8).unwrap();
        assert_eq!(f32::from_bits(snorm16.load(0x8000)), -1.0);
        assert_eq!(snorm16.store((-1.0f32).to_bits()), Ok(0x8001 | 0xffff_0000));
        let sint8 = Format::decode(6).unwrap();
        assert_eq!(sint8.store(-300i32 as u32), Ok(-128i32 as u32));
        assert_eq!(sint8.load(0x80), -128i32 as u32);
    }
}
