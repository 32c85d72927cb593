//! Vector compares (VOPC and their VOP3/SDWA forms): the result is a lane mask written to VCC or
//! an SGPR pair (0 for inactive lanes); the CMPX forms also write EXEC.

use std::sync::OnceLock;

use super::float_rules::{class_f64, class16, class32, flush32, flush64};
use super::half::f16_to_f64;
use super::operand::half;
use super::valu_loops::{denorm32, denorm64};
use super::{Exec, Fault};
use crate::gpu::shader::isa::{Family, Inst, Op};
use crate::gpu::shader::wave::LANES;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    F16,
    F32,
    F64,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
}

#[derive(Clone, Copy, Debug)]
struct Spec {
    kind: Kind,
    /// Condition index: float f,lt,eq,le,gt,lg,ge,o,u,nge,nlg,ngt,nle,neq,nlt,tru; integer
    /// f,lt,eq,le,gt,ne,ge,t.
    cond: u8,
    class: bool,
    exec: bool,
}

const FLOAT_CONDS: [&str; 16] = [
    "f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt",
    "tru",
];
const INT_CONDS: [&str; 8] = ["f", "lt", "eq", "le", "gt", "ne", "ge", "t"];

fn parse(name: &str) -> Option<Spec> {
    let (exec, rest) = if let Some(r) = name.strip_prefix("v_cmpx_") {
        (true, r)
    } else {
        (false, name.strip_prefix("v_cmp_")?)
    };
    let (cond, ty) = rest.rsplit_once('_')?;
    let kind = match ty {
        "f16" => Kind::F16,
        "f32" => Kind::F32,
        "f64" => Kind::F64,
        "i16" => Kind::I16,
        "u16" => Kind::U16,
        "i32" => Kind::I32,
        "u32" => Kind::U32,
        "i64" => Kind::I64,
        "u64" => Kind::U64,
        _ => return None,
    };
    if cond == "class" {
        return Some(Spec {
            kind,
            cond: 0,
            class: true,
            exec,
        });
    }
    let float = matches!(kind, Kind::F16 | Kind::F32 | Kind::F64);
    let table: &[&str] = if float { &FLOAT_CONDS } else { &INT_CONDS };
    let cond = table.iter().position(|c| *c == cond)? as u8;
    Some(Spec {
        kind,
        cond,
        class: false,
        exec,
    })
}

fn spec(op: Op) -> Option<Spec> {
    // Inline in the static (no heap): nothing is left behind when a plugin is unloaded.
    static TABLE: OnceLock<[Option<Spec>; Op::COUNT]> = OnceLock::new();
    TABLE.get_or_init(|| {
        std::array::from_fn::<Op, { Op::COUNT }, _>(|i| Op::ALL[i]).map(|op| {
            if op.info().family == Family::Vopc {
                parse(op.name())
            } else {
                None
            }
        })
    })[op as usize]
}

#[inline]
fn fcmp(a: f64, b: f64, cond: u8) -> bool {
    let un = a.is_nan() || b.is_nan();
    match cond {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => !un && a != b,
        6 => a >= b,
        7 => !un,
        8 => un,
        9 => !(a >= b),
        10 => un || a == b,
        11 => !(a > b),
        12 => !(a <= b),
        13 => a != b,
        14 => !(a < b),
        _ => true,
    }
}

#[inline]
fn icmp<T: PartialOrd + Copy>(a: T, b: T, cond: u8) -> bool {
    match cond {
        0 => false,
        1 => a < b,
        2 => a == b,
        3 => a <= b,
        4 => a > b,
        5 => a != b,
        6 => a >= b,
        _ => true,
    }
}

pub fn exec(e: &mut Exec, inst: &Inst) -> Result<bool, Fault> {
    let Some(s) = spec(inst.op) else {
        return Ok(false);
    };
    let active = e.write_mask(inst);
    let mut result = 0u64;
    let opsel = inst.mods.op_sel;
    match s.kind {
        Kind::F64 | Kind::I64 | Kind::U64 => {
            let a = e.src64(inst, 0)?;
            let dn = denorm64(e);
            if s.class {
                let b = e.src32(inst, 1)?;
                for l in 0..LANES {
                    result |= u64::from(class_f64(a[l]) & b[l] != 0) << l;
                }
            } else {
                let b = e.src64(inst, 1)?;
                for l in 0..LANES {
                    let r = match s.kind {
                        Kind::F64 => {
                            let f = |x: u64| {
                                let v = f64::from_bits(x);
                                if dn.inputs { v } else { flush64(v) }
                            };
                            fcmp(f(a[l]), f(b[l]), s.cond)
                        }
                        Kind::I64 => icmp(a[l] as i64, b[l] as i64, s.cond),
                        _ => icmp(a[l], b[l], s.cond),
                    };
                    result |= u64::from(r) << l;
                }
            }
        }
        _ => {
            let a = e.src32(inst, 0)?;
            let b = e.src32(inst, 1)?;
            let dn32 = denorm32(e);
            let dn16 = denorm64(e);
            for l in 0..LANES {
                let (x, y) = (a[l], b[l]);
                let r = if s.class {
                    match s.kind {
                        Kind::F16 => class16(half(x, opsel & 1 != 0) as u16) & y != 0,
                        _ => class32(x) & y != 0,
                    }
                } else {
                    match s.kind {
                        Kind::F32 => {
                            let f = |v: u32| {
                                let v = f32::from_bits(v);
                                f64::from(if dn32.inputs { v } else { flush32(v) })
                            };
                            fcmp(f(x), f(y), s.cond)
                        }
                        Kind::F16 => fcmp(
                            f16_to_f64(half(x, opsel & 1 != 0) as u16, dn16.inputs),
                            f16_to_f64(half(y, opsel & 2 != 0) as u16, dn16.inputs),
                            s.cond,
                        ),
                        Kind::I16 => icmp(
                            half(x, opsel & 1 != 0) as i16,
                            half(y, opsel & 2 != 0) as i16,
                            s.cond,
                        ),
                        Kind::U16 => icmp(half(x, opsel & 1 != 0), half(y, opsel & 2 != 0), s.cond),
                        Kind::I32 => icmp(x as i32, y as i32, s.cond),
                        _ => icmp(x, y, s.cond),
                    }
                };
                result |= u64::from(r) << l;
            }
        }
    }
    let result = result & active;
    e.write_mask_dst(inst.dst, result)?;
    if s.exec {
        e.w.set_exec(result);
    }
    Ok(true)
}
