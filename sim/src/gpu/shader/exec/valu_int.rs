//! Integer vector ALU: 32-bit, 16-bit and 64-bit arithmetic, logic, shifts, bitfields and
//! carries. CLAMP saturates the add/sub family (it has no effect on the other integer ops).

use super::operand::half;
use super::valu_loops::{bin32, srcs32, tri32, un32};
use super::{Exec, Fault};
use crate::gpu::shader::isa::{Inst, Op};
use crate::gpu::shader::wave::LANES;

fn sext24(v: u32) -> i64 {
    i64::from(((v << 8) as i32) >> 8)
}

fn u24(v: u32) -> u64 {
    u64::from(v & 0xff_ffff)
}

fn bfe_u(a: u32, off: u32, width: u32) -> u32 {
    let (off, width) = (off & 31, width & 31);
    if width == 0 {
        0
    } else if off + width < 32 {
        (a << (32 - off - width)) >> (32 - width)
    } else {
        a >> off
    }
}

fn bfe_i(a: u32, off: u32, width: u32) -> u32 {
    let (off, width) = (off & 31, width & 31);
    if width == 0 {
        0
    } else if off + width < 32 {
        (((a << (32 - off - width)) as i32) >> (32 - width)) as u32
    } else {
        ((a as i32) >> off) as u32
    }
}

fn med3<T: Ord + Copy>(a: T, b: T, c: T) -> T {
    a.max(b).min(a.min(b).max(c))
}

fn byte_permute(data: u64, sel: u32) -> u32 {
    let byte = |i: u32| ((data >> (8 * i)) & 0xff) as u32;
    let sign = |i: u32| if byte(i) & 0x80 != 0 { 0xff } else { 0 };
    match sel & 0xff {
        s @ 0..=7 => byte(s),
        8 => sign(1),
        9 => sign(3),
        10 => sign(5),
        11 => sign(7),
        12 => 0,
        _ => 0xff,
    }
}

fn sad_u8(a: u32, b: u32) -> u32 {
    (0..4)
        .map(|i| ((a >> (8 * i)) & 0xff).abs_diff((b >> (8 * i)) & 0xff))
        .sum()
}

fn sat_u16(v: u32) -> u32 {
    v.min(0xffff)
}

fn sat_i16(v: i32) -> u32 {
    (v.clamp(-32768, 32767) as u32) & 0xffff
}

/// The low (or, per op_sel, high) half of a source for VOP3 16-bit ops.
fn h(inst: &Inst, i: usize, v: u32) -> u32 {
    half(v, inst.mods.op_sel & (1 << i) != 0)
}

/// Write a 16-bit result: to the low half (high half zeroed), or with VOP3 op_sel[3] to the high
/// half (low half kept).
fn write16(e: &mut Exec, inst: &Inst, vals: &[u32; LANES]) -> Result<(), Fault> {
    if inst.mods.op_sel & 8 != 0 {
        if let crate::gpu::shader::isa::Operand::Vgpr(r) = inst.dst {
            let old = *e.w.v(usize::from(r));
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                out[l] = (old[l] & 0xffff) | (vals[l] << 16);
            }
            return e.write_vdst32(inst, &out);
        }
    }
    let mut out = [0u32; LANES];
    for l in 0..LANES {
        out[l] = vals[l] & 0xffff;
    }
    e.write_vdst32(inst, &out)
}

fn bin16(e: &mut Exec, inst: &Inst, f: impl Fn(u32, u32) -> u32) -> Result<(), Fault> {
    let [a, b] = srcs32::<2>(e, inst)?;
    let mut out = [0u32; LANES];
    for l in 0..LANES {
        out[l] = f(h(inst, 0, a[l]), h(inst, 1, b[l]));
    }
    write16(e, inst, &out)
}

fn tri16(e: &mut Exec, inst: &Inst, f: impl Fn(u32, u32, u32) -> u32) -> Result<(), Fault> {
    let [a, b, c] = srcs32::<3>(e, inst)?;
    let mut out = [0u32; LANES];
    for l in 0..LANES {
        out[l] = f(h(inst, 0, a[l]), h(inst, 1, b[l]), h(inst, 2, c[l]));
    }
    write16(e, inst, &out)
}

/// Add/sub with a carry (or borrow) out to SDST and optionally a carry in from source 2.
fn carry(e: &mut Exec, inst: &Inst, sub: bool, rev: bool, carry_in: bool) -> Result<(), Fault> {
    let a = e.src32(inst, 0)?;
    let b = e.src32(inst, 1)?;
    let cin = if carry_in {
        e.read_mask(inst.src[2])?
    } else {
        0
    };
    let exec = e.write_mask(inst);
    let (x, y) = if rev { (b, a) } else { (a, b) };
    let mut out = [0u32; LANES];
    let mut cout = 0u64;
    for l in 0..LANES {
        let c = (cin >> l) & 1;
        let (r, co) = if sub {
            let r = u64::from(x[l])
                .wrapping_sub(u64::from(y[l]))
                .wrapping_sub(c);
            (r as u32, u64::from(y[l]) + c > u64::from(x[l]))
        } else {
            let r = u64::from(x[l]) + u64::from(y[l]) + c;
            (r as u32, r >> 32 != 0)
        };
        out[l] = if inst.mods.clamp && co {
            if sub { 0 } else { u32::MAX }
        } else {
            r
        };
        cout |= u64::from(co) << l;
    }
    e.write_vdst32(inst, &out)?;
    e.write_mask_dst(inst.sdst, cout & exec)
}

fn shift64(e: &mut Exec, inst: &Inst, f: impl Fn(u64, u32) -> u64) -> Result<(), Fault> {
    let s = e.src32(inst, 0)?;
    let v = e.src64(inst, 1)?;
    let mut out = [0u64; LANES];
    for l in 0..LANES {
        out[l] = f(v[l], s[l] & 63);
    }
    e.write_vdst64(inst, &out)
}

fn mad64(e: &mut Exec, inst: &Inst, signed: bool) -> Result<(), Fault> {
    let a = e.src32(inst, 0)?;
    let b = e.src32(inst, 1)?;
    let c = e.src64(inst, 2)?;
    let exec = e.write_mask(inst);
    let mut out = [0u64; LANES];
    let mut cout = 0u64;
    for l in 0..LANES {
        let (r, co) = if signed {
            let p = i128::from(a[l] as i32) * i128::from(b[l] as i32) + i128::from(c[l] as i64);
            (
                p as u64,
                p > i128::from(i64::MAX) || p < i128::from(i64::MIN),
            )
        } else {
            let p = u128::from(a[l]) * u128::from(b[l]) + u128::from(c[l]);
            (p as u64, p >> 64 != 0)
        };
        out[l] = r;
        cout |= u64::from(co) << l;
    }
    e.write_vdst64(inst, &out)?;
    e.write_mask_dst(inst.sdst, cout & exec)
}

pub fn exec(e: &mut Exec, inst: &Inst) -> Result<bool, Fault> {
    let clamp = inst.mods.clamp;
    match inst.op {
        Op::VCndmaskB32 => {
            let a = e.src32(inst, 0)?;
            let b = e.src32(inst, 1)?;
            let m = e.read_mask(inst.src[2])?;
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                out[l] = if (m >> l) & 1 != 0 { b[l] } else { a[l] };
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VMulI32I24 => bin32(e, inst, |a, b| (sext24(a) * sext24(b)) as u32)?,
        Op::VMulHiI32I24 => bin32(e, inst, |a, b| ((sext24(a) * sext24(b)) >> 32) as u32)?,
        Op::VMulU32U24 => bin32(e, inst, |a, b| (u24(a) * u24(b)) as u32)?,
        Op::VMulHiU32U24 => bin32(e, inst, |a, b| ((u24(a) * u24(b)) >> 32) as u32)?,
        Op::VMinI32 => bin32(e, inst, |a, b| (a as i32).min(b as i32) as u32)?,
        Op::VMaxI32 => bin32(e, inst, |a, b| (a as i32).max(b as i32) as u32)?,
        Op::VMinU32 => bin32(e, inst, u32::min)?,
        Op::VMaxU32 => bin32(e, inst, u32::max)?,
        Op::VLshrrevB32 => bin32(e, inst, |a, b| b >> (a & 31))?,
        Op::VAshrrevI32 => bin32(e, inst, |a, b| ((b as i32) >> (a & 31)) as u32)?,
        Op::VLshlrevB32 => bin32(e, inst, |a, b| b << (a & 31))?,
        Op::VAndB32 => bin32(e, inst, |a, b| a & b)?,
        Op::VOrB32 => bin32(e, inst, |a, b| a | b)?,
        Op::VXorB32 => bin32(e, inst, |a, b| a ^ b)?,
        Op::VXnorB32 => bin32(e, inst, |a, b| !(a ^ b))?,
        Op::VNotB32 => un32(e, inst, |a| !a)?,
        Op::VBfrevB32 => un32(e, inst, u32::reverse_bits)?,
        Op::VFfbhU32 => un32(
            e,
            inst,
            |a| if a == 0 { u32::MAX } else { a.leading_zeros() },
        )?,
        Op::VFfblB32 => un32(
            e,
            inst,
            |a| if a == 0 { u32::MAX } else { a.trailing_zeros() },
        )?,
        Op::VFfbhI32 => un32(e, inst, |a| {
            let v = a as i32;
            if v == 0 || v == -1 {
                u32::MAX
            } else {
                (if v < 0 { !a } else { a }).leading_zeros()
            }
        })?,
        Op::VAddI32 if clamp => bin32(e, inst, |a, b| (a as i32).saturating_add(b as i32) as u32)?,
        Op::VSubI32 if clamp => bin32(e, inst, |a, b| (a as i32).saturating_sub(b as i32) as u32)?,
        Op::VAddU32 if clamp => bin32(e, inst, u32::saturating_add)?,
        Op::VAddU32 | Op::VAddI32 => bin32(e, inst, u32::wrapping_add)?,
        Op::VSubU32 if clamp => bin32(e, inst, u32::saturating_sub)?,
        Op::VSubU32 | Op::VSubI32 => bin32(e, inst, u32::wrapping_sub)?,
        Op::VSubrevU32 if clamp => bin32(e, inst, |a, b| b.saturating_sub(a))?,
        Op::VSubrevU32 => bin32(e, inst, |a, b| b.wrapping_sub(a))?,
        Op::VAddCoU32 => carry(e, inst, false, false, false)?,
        Op::VSubCoU32 => carry(e, inst, true, false, false)?,
        Op::VSubrevCoU32 => carry(e, inst, true, true, false)?,
        Op::VAddcCoU32 => carry(e, inst, false, false, true)?,
        Op::VSubbCoU32 => carry(e, inst, true, false, true)?,
        Op::VSubbrevCoU32 => carry(e, inst, true, true, true)?,
        // 16-bit integer ops (VOP2 and their VOP3 forms).
        Op::VAddI16 if clamp => bin16(e, inst, |a, b| {
            sat_i16(i32::from(a as i16) + i32::from(b as i16))
        })?,
        Op::VSubI16 if clamp => bin16(e, inst, |a, b| {
            sat_i16(i32::from(a as i16) - i32::from(b as i16))
        })?,
        Op::VAddU16 if clamp => bin16(e, inst, |a, b| sat_u16(a + b))?,
        Op::VAddU16 | Op::VAddI16 => bin16(e, inst, u32::wrapping_add)?,
        Op::VSubU16 if clamp => bin16(e, inst, u32::saturating_sub)?,
        Op::VSubU16 | Op::VSubI16 => bin16(e, inst, u32::wrapping_sub)?,
        Op::VSubrevU16 if clamp => bin16(e, inst, |a, b| b.saturating_sub(a))?,
        Op::VSubrevU16 => bin16(e, inst, |a, b| b.wrapping_sub(a))?,
        Op::VMulLoU16 => bin16(e, inst, u32::wrapping_mul)?,
        Op::VLshlrevB16 => bin16(e, inst, |a, b| b << (a & 15))?,
        Op::VLshrrevB16 => bin16(e, inst, |a, b| (b & 0xffff) >> (a & 15))?,
        Op::VAshrrevI16 => bin16(e, inst, |a, b| (i32::from(b as i16) >> (a & 15)) as u32)?,
        Op::VMaxU16 => bin16(e, inst, u32::max)?,
        Op::VMinU16 => bin16(e, inst, u32::min)?,
        Op::VMaxI16 => bin16(e, inst, |a, b| (a as i16).max(b as i16) as u32)?,
        Op::VMinI16 => bin16(e, inst, |a, b| (a as i16).min(b as i16) as u32)?,
        Op::VMadU16 | Op::VMadLegacyU16 => {
            if clamp {
                tri16(e, inst, |a, b, c| sat_u16(a * b + c))?;
            } else {
                tri16(e, inst, |a, b, c| a.wrapping_mul(b).wrapping_add(c))?;
            }
        }
        Op::VMadI16 | Op::VMadLegacyI16 => tri16(e, inst, |a, b, c| {
            let r = i32::from(a as i16) * i32::from(b as i16) + i32::from(c as i16);
            if clamp { sat_i16(r) } else { r as u32 }
        })?,
        Op::VMin3I16 => tri16(e, inst, |a, b, c| {
            (a as i16).min(b as i16).min(c as i16) as u32
        })?,
        Op::VMax3I16 => tri16(e, inst, |a, b, c| {
            (a as i16).max(b as i16).max(c as i16) as u32
        })?,
        Op::VMed3I16 => tri16(e, inst, |a, b, c| med3(a as i16, b as i16, c as i16) as u32)?,
        Op::VMin3U16 => tri16(e, inst, |a, b, c| a.min(b).min(c))?,
        Op::VMax3U16 => tri16(e, inst, |a, b, c| a.max(b).max(c))?,
        Op::VMed3U16 => tri16(e, inst, med3)?,
        Op::VMadU32U16 => {
            let [a, b, c] = srcs32::<3>(e, inst)?;
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                out[l] = h(inst, 0, a[l])
                    .wrapping_mul(h(inst, 1, b[l]))
                    .wrapping_add(c[l]);
            }
            e.write_vdst32(inst, &out)?;
        }
        Op::VMadI32I16 => {
            let [a, b, c] = srcs32::<3>(e, inst)?;
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                let p = i32::from(h(inst, 0, a[l]) as i16) * i32::from(h(inst, 1, b[l]) as i16);
                out[l] = (p as u32).wrapping_add(c[l]);
            }
            e.write_vdst32(inst, &out)?;
        }
        // Three-source 32-bit ops.
        Op::VMadI32I24 => tri32(e, inst, |a, b, c| {
            ((sext24(a) * sext24(b)) as u32).wrapping_add(c)
        })?,
        Op::VMadU32U24 => tri32(e, inst, |a, b, c| {
            ((u24(a) * u24(b)) as u32).wrapping_add(c)
        })?,
        Op::VBfeU32 => tri32(e, inst, bfe_u)?,
        Op::VBfeI32 => tri32(e, inst, bfe_i)?,
        Op::VBfiB32 => tri32(e, inst, |a, b, c| (a & b) | (!a & c))?,
        Op::VAlignbitB32 => tri32(e, inst, |a, b, c| {
            ((u64::from(a) << 32 | u64::from(b)) >> (c & 31)) as u32
        })?,
        Op::VAlignbyteB32 => {
            tri32(e, inst, |a, b, c| {
                ((u64::from(a) << 32 | u64::from(b)) >> (8 * (c & 3))) as u32
            })?;
        }
        Op::VMin3I32 => tri32(e, inst, |a, b, c| {
            (a as i32).min(b as i32).min(c as i32) as u32
        })?,
        Op::VMax3I32 => tri32(e, inst, |a, b, c| {
            (a as i32).max(b as i32).max(c as i32) as u32
        })?,
        Op::VMed3I32 => tri32(e, inst, |a, b, c| med3(a as i32, b as i32, c as i32) as u32)?,
        Op::VMin3U32 => tri32(e, inst, |a, b, c| a.min(b).min(c))?,
        Op::VMax3U32 => tri32(e, inst, |a, b, c| a.max(b).max(c))?,
        Op::VMed3U32 => tri32(e, inst, med3)?,
        Op::VSadU8 => tri32(e, inst, |a, b, c| sad_u8(a, b).wrapping_add(c))?,
        Op::VSadHiU8 => tri32(e, inst, |a, b, c| (sad_u8(a, b) << 16).wrapping_add(c))?,
        Op::VSadU16 => tri32(e, inst, |a, b, c| {
            ((a & 0xffff).abs_diff(b & 0xffff) + (a >> 16).abs_diff(b >> 16)).wrapping_add(c)
        })?,
        Op::VSadU32 => tri32(e, inst, |a, b, c| a.abs_diff(b).wrapping_add(c))?,
        Op::VMsadU8 => tri32(e, inst, |a, b, c| {
            let s: u32 = (0..4)
                .filter(|i| (b >> (8 * i)) & 0xff != 0)
                .map(|i| ((a >> (8 * i)) & 0xff).abs_diff((b >> (8 * i)) & 0xff))
                .sum();
            s.wrapping_add(c)
        })?,
        Op::VLerpU8 => tri32(e, inst, |a, b, c| {
            (0..4).fold(0u32, |acc, i| {
                let x = (a >> (8 * i)) & 0xff;
                let y = (b >> (8 * i)) & 0xff;
                let r = (c >> (8 * i)) & 1;
                acc | (((x + y + r) >> 1) & 0xff) << (8 * i)
            })
        })?,
        Op::VPermB32 => tri32(e, inst, |a, b, c| {
            let data = u64::from(a) << 32 | u64::from(b);
            (0..4).fold(0u32, |acc, i| {
                acc | byte_permute(data, c >> (8 * i)) << (8 * i)
            })
        })?,
        Op::VLshlAddU32 => tri32(e, inst, |a, b, c| (a << (b & 31)).wrapping_add(c))?,
        Op::VAddLshlU32 => tri32(e, inst, |a, b, c| a.wrapping_add(b) << (c & 31))?,
        Op::VAdd3U32 => tri32(e, inst, |a, b, c| a.wrapping_add(b).wrapping_add(c))?,
        Op::VLshlOrB32 => tri32(e, inst, |a, b, c| (a << (b & 31)) | c)?,
        Op::VAndOrB32 => tri32(e, inst, |a, b, c| (a & b) | c)?,
        Op::VOr3B32 => tri32(e, inst, |a, b, c| a | b | c)?,
        Op::VXadU32 => tri32(e, inst, |a, b, c| (a ^ b).wrapping_add(c))?,
        Op::VMulLoU32 => bin32(e, inst, u32::wrapping_mul)?,
        Op::VMulHiU32 => bin32(e, inst, |a, b| ((u64::from(a) * u64::from(b)) >> 32) as u32)?,
        Op::VMulHiI32 => {
            bin32(e, inst, |a, b| {
                ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32
            })?;
        }
        Op::VBcntU32B32 => bin32(e, inst, |a, b| a.count_ones().wrapping_add(b))?,
        Op::VBfmB32 => bin32(e, inst, |a, b| {
            (((1u64 << (a & 31)) - 1) as u32) << (b & 31)
        })?,
        Op::VCvtPkU16U32 => bin32(e, inst, |a, b| sat_u16(a) | sat_u16(b) << 16)?,
        Op::VCvtPkI16I32 => bin32(e, inst, |a, b| sat_i16(a as i32) | sat_i16(b as i32) << 16)?,
        Op::VLshlrevB64 => shift64(e, inst, |v, s| v << s)?,
        Op::VLshrrevB64 => shift64(e, inst, |v, s| v >> s)?,
        Op::VAshrrevI64 => shift64(e, inst, |v, s| ((v as i64) >> s) as u64)?,
        Op::VMadU64U32 => mad64(e, inst, false)?,
        Op::VMadI64I32 => mad64(e, inst, true)?,
        Op::VLshlAddU64 => {
            let a = e.src64(inst, 0)?;
            let b = e.src32(inst, 1)?;
            let c = e.src64(inst, 2)?;
            let mut out = [0u64; LANES];
            for l in 0..LANES {
                out[l] = (a[l] << (b[l] & 63)).wrapping_add(c[l]);
            }
            e.write_vdst64(inst, &out)?;
        }
        _ => return Ok(false),
    }
    Ok(true)
}
