//! Memory instructions: DS offsets and swizzle patterns, FLAT/GLOBAL/SCRATCH address forms,
//! MUBUF addressing flags and the cache-policy bits of each target.

use std::fmt::Write;

use super::Operands;
use super::operand::{operand, sgpr};
use crate::gpu::shader::decode::ds_has_two_offsets;
use crate::gpu::shader::isa::{CachePolicy, Encoding, Family, Inst, Op, Operand, Ty};
use crate::gpu::target::GfxTarget;

pub fn write(out: &mut String, inst: &Inst, target: GfxTarget) {
    out.push_str(inst.op.name());
    match inst.enc {
        Encoding::Ds => ds(out, inst),
        Encoding::Flat => flat(out, inst, target),
        Encoding::Mubuf => mubuf(out, inst, target),
        _ => {}
    }
}

fn cache_policy(out: &mut String, cpol: CachePolicy, target: GfxTarget) {
    match target {
        GfxTarget::Gfx90a | GfxTarget::Gfx1100 => {
            for (set, name) in [(cpol.glc, " glc"), (cpol.slc, " slc"), (cpol.scc, " scc")] {
                if set {
                    out.push_str(name);
                }
            }
        }
        GfxTarget::Gfx942 => {
            for (set, name) in [(cpol.glc, " sc0"), (cpol.slc, " nt"), (cpol.scc, " sc1")] {
                if set {
                    out.push_str(name);
                }
            }
        }
    }
}

fn ds(out: &mut String, inst: &Inst) {
    let sig = inst.op.info().sig;
    let mem = inst.mem();
    let mut ops = Operands::new(out);
    if inst.dst.is_some() {
        operand(ops.next(), inst.dst, sig[0]);
    }
    for i in 0..3 {
        if inst.src[i].is_some() {
            operand(
                ops.next(),
                inst.src[i],
                if i == 0 { Ty::B32 } else { sig[2 + i] },
            );
        }
    }
    if ds_has_two_offsets(inst.op) {
        if mem.offset != 0 {
            let _ = write!(out, " offset0:{}", mem.offset);
        }
        if mem.offset1 != 0 {
            let _ = write!(out, " offset1:{}", mem.offset1);
        }
    } else if inst.op == Op::DsSwizzleB32 {
        if mem.offset != 0 {
            out.push_str(" offset:");
            swizzle(out, mem.offset as u32);
        }
    } else if mem.offset != 0 {
        let _ = write!(out, " offset:{}", mem.offset);
    }
    if mem.gds {
        out.push_str(" gds");
    }
}

/// ds_swizzle_b32's offset: QUAD_PERM (bit 15 set, 14 clear) or a bitmask permutation (bit 15
/// clear), written in LLVM's macro forms when one applies.
fn swizzle(out: &mut String, imm: u32) {
    if imm & 0xc000 == 0x8000 {
        let _ = write!(
            out,
            "swizzle(QUAD_PERM,{},{},{},{})",
            imm & 3,
            (imm >> 2) & 3,
            (imm >> 4) & 3,
            (imm >> 6) & 3
        );
        return;
    }
    if imm & 0x8000 != 0 {
        let _ = write!(out, "{imm}");
        return;
    }
    let and = imm & 0x1f;
    let or = (imm >> 5) & 0x1f;
    let xor = (imm >> 10) & 0x1f;
    let group = 0x1f - and + 1;
    if and == 0x1f && or == 0 && xor.is_power_of_two() {
        let _ = write!(out, "swizzle(SWAP,{xor})");
    } else if and == 0x1f && or == 0 && xor > 0 && (xor + 1).is_power_of_two() {
        let _ = write!(out, "swizzle(REVERSE,{})", xor + 1);
    } else if group > 1 && group.is_power_of_two() && or < group && xor == 0 {
        let _ = write!(out, "swizzle(BROADCAST,{group},{or})");
    } else {
        out.push_str("swizzle(BITMASK_PERM,\"");
        for bit in (0..5).rev() {
            let c = if and >> bit & 1 != 0 {
                if xor >> bit & 1 != 0 { 'i' } else { 'p' }
            } else if or >> bit & 1 != 0 {
                '1'
            } else {
                '0'
            };
            out.push(c);
        }
        out.push_str("\")");
    }
}

fn flat(out: &mut String, inst: &Inst, target: GfxTarget) {
    let info = inst.op.info();
    let sig = info.sig;
    let mem = inst.mem();
    let mut ops = Operands::new(out);
    if inst.dst.is_some() {
        operand(ops.next(), inst.dst, sig[0]);
    }
    let addr_dwords = match info.family {
        Family::Flat => 2,
        Family::Global if !inst.src[2].is_some() => 2,
        _ => 1,
    };
    let o = ops.next();
    match inst.src[0] {
        Operand::Vgpr(n) => super::operand::vgpr(o, n, addr_dwords),
        _ => o.push_str("off"),
    }
    if inst.src[1].is_some() {
        operand(ops.next(), inst.src[1], sig[3]);
    }
    if info.family != Family::Flat {
        let o = ops.next();
        match inst.src[2] {
            Operand::Sgpr(s) => sgpr(o, s, if info.family == Family::Global { 2 } else { 1 }),
            _ => o.push_str("off"),
        }
    }
    if mem.offset != 0 {
        let _ = write!(out, " offset:{}", mem.offset);
    }
    cache_policy(out, mem.cpol, target);
    if mem.lds {
        out.push_str(" lds");
    }
}

fn mubuf(out: &mut String, inst: &Inst, target: GfxTarget) {
    let sig = inst.op.info().sig;
    let mem = inst.mem();
    if sig.iter().all(|t| *t == Ty::N) {
        // Cache invalidations and write-backs: gfx90a's have no cache-policy operands,
        // gfx942's only the scope bits.
        if target == GfxTarget::Gfx942 {
            let scope = CachePolicy {
                slc: false,
                ..mem.cpol
            };
            cache_policy(out, scope, target);
        }
        return;
    }
    let mut ops = Operands::new(out);
    // VDATA: what a store or atomic sends (an atomic returns into its first registers).
    if inst.src[1].is_some() {
        operand(ops.next(), inst.src[1], sig[3]);
    } else if inst.dst.is_some() {
        operand(ops.next(), inst.dst, sig[0]);
    }
    let o = ops.next();
    match inst.src[0] {
        Operand::Vgpr(n) => {
            let count = if mem.offen && mem.idxen { 2 } else { 1 };
            super::operand::vgpr(o, n, count);
        }
        _ => o.push_str("off"),
    }
    sgpr(ops.next(), mem.srsrc, 4);
    operand(ops.next(), inst.src[2], Ty::B32);
    if mem.idxen {
        out.push_str(" idxen");
    }
    if mem.offen {
        out.push_str(" offen");
    }
    if mem.offset != 0 {
        let _ = write!(out, " offset:{}", mem.offset);
    }
    cache_policy(out, mem.cpol, target);
    if mem.lds {
        out.push_str(" lds");
    }
}
