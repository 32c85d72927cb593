//! LDS instructions (DS): reads and writes (single, pairs, d16 halves), atomics, and the
//! cross-lane ds_swizzle / ds_permute / ds_bpermute, which use the LDS crossbar without
//! touching memory.

use std::sync::OnceLock;

use super::atomic::AtomicOp;
use super::load_store::{Load, Store};
use super::{Exec, R, unimplemented};
use crate::gpu::shader::isa::{Inst, Op, Operand};
use crate::gpu::shader::wave::{LANES, lanes};

#[derive(Clone, Copy, Debug)]
enum Kind {
    Read(Load),
    Write(Store),
    Read2 {
        bytes: u32,
        st64: bool,
    },
    Write2 {
        bytes: u32,
        st64: bool,
    },
    Atomic {
        op: AtomicOp,
        wide: bool,
        rtn: bool,
        cmpst: bool,
    },
    Exchange2 {
        wide: bool,
        st64: bool,
    },
    Swizzle,
    Permute,
    Bpermute,
    Nop,
}

fn parse(name: &str) -> Option<Kind> {
    let n = name.strip_prefix("ds_")?;
    if n == "nop" {
        return Some(Kind::Nop);
    }
    match n {
        "swizzle_b32" => return Some(Kind::Swizzle),
        "permute_b32" => return Some(Kind::Permute),
        "bpermute_b32" => return Some(Kind::Bpermute),
        _ => {}
    }
    let width = |t: &str| -> Option<u32> {
        Some(match t {
            "b8" | "u8" | "i8" => 1,
            "b16" | "u16" | "i16" => 2,
            "b32" => 4,
            "b64" => 8,
            "b96" => 12,
            "b128" => 16,
            _ => return None,
        })
    };
    for (prefix, st64) in [("read2st64_", true), ("read2_", false)] {
        if let Some(t) = n.strip_prefix(prefix) {
            return Some(Kind::Read2 {
                bytes: width(t)?,
                st64,
            });
        }
    }
    for (prefix, st64) in [("write2st64_", true), ("write2_", false)] {
        if let Some(t) = n.strip_prefix(prefix) {
            return Some(Kind::Write2 {
                bytes: width(t)?,
                st64,
            });
        }
    }
    if let Some(t) = n.strip_prefix("read_") {
        return Load::parse(t, |t| Some((width(t)?, t.starts_with('i')))).map(Kind::Read);
    }
    if let Some(t) = n.strip_prefix("write_") {
        return Store::parse(t, width).map(Kind::Write);
    }
    for (prefix, st64) in [("wrxchg2st64_rtn_", true), ("wrxchg2_rtn_", false)] {
        if let Some(t) = n.strip_prefix(prefix) {
            return Some(Kind::Exchange2 {
                wide: t == "b64",
                st64,
            });
        }
    }
    // Atomics: <op>[_rtn]_<type>.
    let (body, ty) = n.rsplit_once('_')?;
    let (op, rtn) = match body.strip_suffix("_rtn") {
        Some(b) => (b, true),
        None => (body, false),
    };
    let wide = matches!(ty, "u64" | "i64" | "b64" | "f64");
    let atomic = match (op, ty) {
        ("add", "f32") => AtomicOp::AddF32,
        ("add", "f64") => AtomicOp::AddF64,
        ("min", "f32") => AtomicOp::MinF32,
        ("max", "f32") => AtomicOp::MaxF32,
        ("min", "f64") => AtomicOp::MinF64,
        ("max", "f64") => AtomicOp::MaxF64,
        ("min", "i32" | "i64") => AtomicOp::Smin,
        ("max", "i32" | "i64") => AtomicOp::Smax,
        ("min", _) => AtomicOp::Umin,
        ("max", _) => AtomicOp::Umax,
        ("pk_add", "f16") => AtomicOp::PkAddF16,
        ("pk_add", "bf16") => AtomicOp::PkAddBf16,
        ("cmpst", _) => AtomicOp::CmpSwap,
        (other, _) => AtomicOp::from_suffix(other)?,
    };
    Some(Kind::Atomic {
        op: atomic,
        wide,
        rtn,
        cmpst: op == "cmpst",
    })
}

fn kind(op: Op) -> Option<Kind> {
    // Inline in the static (no heap): nothing is left behind when a plugin is unloaded.
    static TABLE: OnceLock<[Option<Kind>; Op::COUNT]> = OnceLock::new();
    TABLE.get_or_init(|| {
        std::array::from_fn::<Op, { Op::COUNT }, _>(|i| Op::ALL[i]).map(|op| {
            if op.info().family == crate::gpu::shader::isa::Family::Ds {
                parse(op.name())
            } else {
                None
            }
        })
    })[op as usize]
}

fn vreg(op: Operand) -> Option<usize> {
    match op {
        Operand::Vgpr(r) => Some(usize::from(r)),
        _ => None,
    }
}

pub fn exec(e: &mut Exec, inst: &Inst) -> R {
    let Some(kind) = kind(inst.op) else {
        return Err(unimplemented("LDS opcode not simulated"));
    };
    let mem = inst.mem();
    if mem.gds {
        return Err(unimplemented("the global data share (GDS)"));
    }
    let exec = e.w.exec();
    let addr = e.lanes32(inst.src[0])?;
    let off = mem.offset as u32;
    match kind {
        Kind::Nop => Ok(()),
        Kind::Read(load) => {
            let dst = vreg(inst.dst).ok_or_else(|| unimplemented("DS read without a VGPR"))?;
            for l in lanes(exec) {
                let mut buf = [0u8; 16];
                e.lds
                    .read(addr[l].wrapping_add(off), &mut buf[..load.bytes as usize]);
                load.write(e.w, dst, l, &buf);
            }
            Ok(())
        }
        Kind::Write(store) => {
            let data = vreg(inst.src[1]).ok_or_else(|| unimplemented("DS write without a VGPR"))?;
            for l in lanes(exec) {
                let buf = store.data(e.w, data, l);
                e.lds
                    .write(addr[l].wrapping_add(off), &buf[..store.bytes as usize]);
            }
            Ok(())
        }
        Kind::Read2 { bytes, st64 } | Kind::Write2 { bytes, st64 } => {
            let stride = bytes * if st64 { 64 } else { 1 };
            let (o0, o1) = (mem.offset as u32 * stride, u32::from(mem.offset1) * stride);
            let dw = (bytes / 4) as usize;
            let is_read = matches!(kind, Kind::Read2 { .. });
            for l in lanes(exec) {
                let base = addr[l];
                for (i, o) in [o0, o1].into_iter().enumerate() {
                    let a = base.wrapping_add(o);
                    for k in 0..dw {
                        let ak = a.wrapping_add(4 * k as u32);
                        if is_read {
                            let dst =
                                vreg(inst.dst).ok_or_else(|| unimplemented("DS read2 target"))?;
                            let v = e.lds.read_u32(ak);
                            e.w.v_mut(dst + i * dw + k)[l] = v;
                        } else {
                            let data = vreg(inst.src[1 + i])
                                .ok_or_else(|| unimplemented("DS write2 data"))?;
                            let v = e.w.v(data + k)[l];
                            e.lds.write_u32(ak, v);
                        }
                    }
                }
            }
            Ok(())
        }
        Kind::Atomic {
            op,
            wide,
            rtn,
            cmpst,
        } => {
            let d0 = vreg(inst.src[1]);
            let d1 = vreg(inst.src[2]);
            let dst = if rtn { vreg(inst.dst) } else { None };
            for l in lanes(exec) {
                let a = addr[l].wrapping_add(off);
                let get = |r: Option<usize>, k: usize| r.map_or(0, |r| e.w.v(r + k)[l]);
                if wide {
                    let v0 = u64::from(get(d0, 0)) | u64::from(get(d0, 1)) << 32;
                    let v1 = u64::from(get(d1, 0)) | u64::from(get(d1, 1)) << 32;
                    // ds_cmpst: DATA0 is the comparand, DATA1 the new value.
                    let (data, data2) = if cmpst { (v1, v0) } else { (v0, v1) };
                    let old = e.lds.read_u64(a);
                    if e.lds.in_range(a, 8) {
                        e.lds.write_u64(a, op.apply64(old, data, data2));
                    }
                    if let Some(d) = dst {
                        e.w.v_mut(d)[l] = old as u32;
                        e.w.v_mut(d + 1)[l] = (old >> 32) as u32;
                    }
                } else {
                    let (v0, v1) = (get(d0, 0), get(d1, 0));
                    let (data, data2) = if cmpst { (v1, v0) } else { (v0, v1) };
                    let old = e.lds.read_u32(a);
                    let float_cmp = matches!(inst.op, Op::DsCmpstF32 | Op::DsCmpstRtnF32);
                    let new = if float_cmp {
                        if f32::from_bits(old) == f32::from_bits(data2) {
                            data
                        } else {
                            old
                        }
                    } else {
                        op.apply32(old, data, data2)
                    };
                    if e.lds.in_range(a, 4) {
                        e.lds.write_u32(a, new);
                    }
                    if let Some(d) = dst {
                        e.w.v_mut(d)[l] = old;
                    }
                }
            }
            Ok(())
        }
        Kind::Exchange2 { wide, st64 } => {
            let bytes = if wide { 8 } else { 4 };
            let stride = bytes * if st64 { 64 } else { 1 };
            let (o0, o1) = (mem.offset as u32 * stride, u32::from(mem.offset1) * stride);
            let dst = vreg(inst.dst).ok_or_else(|| unimplemented("wrxchg2 target"))?;
            let dw = (bytes / 4) as usize;
            for l in lanes(exec) {
                for (i, o) in [o0, o1].into_iter().enumerate() {
                    let a = addr[l].wrapping_add(o);
                    let data =
                        vreg(inst.src[1 + i]).ok_or_else(|| unimplemented("wrxchg2 data"))?;
                    for k in 0..dw {
                        let ak = a.wrapping_add(4 * k as u32);
                        let old = e.lds.read_u32(ak);
                        let v = e.w.v(data + k)[l];
                        e.lds.write_u32(ak, v);
                        e.w.v_mut(dst + i * dw + k)[l] = old;
                    }
                }
            }
            Ok(())
        }
        Kind::Swizzle => {
            let src = addr;
            let pattern = mem.offset as u32;
            let mut out = [0u32; LANES];
            for (l, o) in out.iter_mut().enumerate() {
                let s = if pattern & 0x8000 != 0 {
                    (l & !3) | ((pattern >> (2 * (l & 3))) & 3) as usize
                } else {
                    let and = (pattern & 0x1f) as usize;
                    let or = ((pattern >> 5) & 0x1f) as usize;
                    let xor = ((pattern >> 10) & 0x1f) as usize;
                    (l & 0x20) | ((((l & 0x1f) & and) | or) ^ xor)
                };
                *o = if exec >> s & 1 != 0 { src[s] } else { 0 };
            }
            let dst = vreg(inst.dst).ok_or_else(|| unimplemented("ds_swizzle target"))?;
            e.w.write_v(dst, &out, exec);
            Ok(())
        }
        Kind::Bpermute | Kind::Permute => {
            let data = e.lanes32(inst.src[1])?;
            let mut out = [0u32; LANES];
            // The lane index wraps at the wave's width (wave32: 5 bits).
            let wrap = e.w.lanes() - 1;
            if matches!(kind, Kind::Bpermute) {
                for (l, o) in out.iter_mut().enumerate() {
                    let s = (addr[l].wrapping_add(off) >> 2) as usize & wrap;
                    *o = if exec >> s & 1 != 0 { data[s] } else { 0 };
                }
            } else {
                for l in lanes(exec) {
                    let d = (addr[l].wrapping_add(off) >> 2) as usize & wrap;
                    out[d] = data[l];
                }
            }
            let dst = vreg(inst.dst).ok_or_else(|| unimplemented("permute target"))?;
            e.w.write_v(dst, &out, exec);
            Ok(())
        }
    }
}
