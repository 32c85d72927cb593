//! Load and store data between a lane's VGPRs and the bytes of memory, the same for LDS
//! (`ds_read_*`, `ds_write_*`) and vector memory (`flat`/`global`/`scratch`/`buffer`
//! `_load_*`, `_store_*`): 1 to 16 bytes; byte and short loads zero- or sign-extended into a
//! whole VGPR, or, with D16, into one half of it leaving the other half alone; D16_HI stores
//! take the high halves.

use crate::gpu::shader::wave::Wave;

/// Which part of its VGPR a load writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum D16 {
    /// The whole register (every load without a `_d16` suffix).
    No,
    /// The low half (`_d16`).
    Lo,
    /// The high half (`_d16_hi`).
    Hi,
}

/// A load of `bytes` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Load {
    /// Bytes read (1, 2, 4, 8, 12 or 16).
    pub bytes: u32,
    /// Sign-extend a byte or short.
    pub sext: bool,
    /// Where the value goes.
    pub d16: D16,
}

impl Load {
    /// The load named by a type suffix such as `ubyte_d16_hi` or `b128`: `width` maps the
    /// suffix without its D16 part to (bytes, sign-extended).
    pub fn parse(suffix: &str, width: impl Fn(&str) -> Option<(u32, bool)>) -> Option<Self> {
        let (t, d16) = if let Some(t) = suffix.strip_suffix("_d16_hi") {
            (t, D16::Hi)
        } else if let Some(t) = suffix.strip_suffix("_d16") {
            (t, D16::Lo)
        } else {
            (suffix, D16::No)
        };
        let (bytes, sext) = width(t)?;
        Some(Self { bytes, sext, d16 })
    }

    /// Write the loaded `data` (its first `bytes` bytes) into lane `lane` of the VGPRs from
    /// `dst`.
    pub fn write(self, w: &mut Wave, dst: usize, lane: usize, data: &[u8; 16]) {
        let dword = |k: usize| {
            u32::from_le_bytes([
                data[4 * k],
                data[4 * k + 1],
                data[4 * k + 2],
                data[4 * k + 3],
            ])
        };
        if self.bytes >= 4 {
            for k in 0..(self.bytes / 4) as usize {
                w.v_mut(dst + k)[lane] = dword(k);
            }
            return;
        }
        let bits = 8 * self.bytes;
        let raw = dword(0) & ((1 << bits) - 1);
        let v = if self.sext {
            ((raw << (32 - bits)) as i32 >> (32 - bits)) as u32
        } else {
            raw
        };
        let old = w.v(dst)[lane];
        w.v_mut(dst)[lane] = match self.d16 {
            D16::No => v,
            D16::Lo => (old & 0xffff_0000) | (v & 0xffff),
            D16::Hi => (old & 0xffff) | (v << 16),
        };
    }
}

/// A store of `bytes` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Store {
    /// Bytes written (1, 2, 4, 8, 12 or 16).
    pub bytes: u32,
    /// Store the high half of the VGPR (`_d16_hi`).
    pub hi: bool,
}

impl Store {
    /// The store named by a type suffix such as `short_d16_hi` or `dwordx2`: `bytes` maps
    /// the suffix without its D16 part to a width.
    pub fn parse(suffix: &str, bytes: impl Fn(&str) -> Option<u32>) -> Option<Self> {
        let (t, hi) = match suffix.strip_suffix("_d16_hi") {
            Some(t) => (t, true),
            None => (suffix, false),
        };
        Some(Self {
            bytes: bytes(t)?,
            hi,
        })
    }

    /// The bytes lane `lane` stores from the VGPRs at `data` (the first `bytes` of them).
    pub fn data(self, w: &Wave, data: usize, lane: usize) -> [u8; 16] {
        let mut out = [0u8; 16];
        for k in 0..self.bytes.div_ceil(4) as usize {
            let v = w.v(data + k)[lane];
            let v = if self.hi { v >> 16 } else { v };
            out[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn width(t: &str) -> Option<(u32, bool)> {
        Some(match t {
            "u8" => (1, false),
            "i8" => (1, true),
            "i16" => (2, true),
            "b32" => (4, false),
            "b96" => (12, false),
            _ => return None,
        })
    }

    #[test]
    fn sub_dword_loads_extend_or_fill_one_half() {
        let mut w = Wave::new();
        w.v_mut(3)[5] = 0xaaaa_bbbb;
        let data = {
            let mut d = [0u8; 16];
            d[..4].copy_from_slice(&0x1234_80f0u32.to_le_bytes());
            d
        };
        let load = |s: &str| Load::parse(s, width).unwrap();
        load("i8").write(&mut w, 3, 5, &data);
        assert_eq!(w.v(3)[5], 0xffff_fff0);
        load("u8_d16_hi").write(&mut w, 3, 5, &data);
        assert_eq!(w.v(3)[5], 0x00f0_fff0);
        load("i16_d16").write(&mut w, 3, 5, &data);
        assert_eq!(w.v(3)[5], 0x00f0_80f0);
        load("b96").write(&mut w, 3, 5, &data);
        assert_eq!([w.v(3)[5], w.v(4)[5], w.v(5)[5]], [0x1234_80f0, 0, 0]);
        assert_eq!(Load::parse("f32", width), None);
    }

    #[test]
    fn d16_hi_stores_take_the_high_halves() {
        let mut w = Wave::new();
        w.v_mut(7)[1] = 0x1234_5678;
        let store = Store::parse("short_d16_hi", |t| (t == "short").then_some(2)).unwrap();
        assert_eq!(store, Store { bytes: 2, hi: true });
        assert_eq!(store.data(&w, 7, 1)[..2], [0x34, 0x12]);
    }
}
