//! DS, FLAT/GLOBAL/SCRATCH, MUBUF and MTBUF text.

use std::fmt::Write;

use super::operand::{operand, sgpr};
use crate::gpu::shader::disasm::Operands;
use crate::gpu::shader::disasm::operand::range;
use crate::gpu::shader::gfx11::isa::{Encoding, Inst, Op};
use crate::gpu::shader::gfx11::tables;
use crate::gpu::shader::isa::{Operand, Ty};

/// Write a memory instruction.
pub fn write(out: &mut String, inst: &Inst) {
    out.push_str(inst.op.name());
    match inst.enc {
        Encoding::Ds => ds(out, inst),
        Encoding::Flat => flat(out, inst),
        _ => buffer(out, inst),
    }
}

/// A VGPR tuple of `dwords` starting at `op`.
fn vreg(out: &mut String, op: Operand, dwords: u32) {
    match op {
        Operand::Vgpr(n) => range(out, "v", u32::from(n), dwords),
        _ => operand(out, op, Ty::B32),
    }
}

/// DS: `[vdst,] addr[, data0[, data1]]`, then offsets and `gds`.
fn ds(out: &mut String, inst: &Inst) {
    let ty = inst.row.ty;
    let mut ops = Operands::new(out);
    if ty[0] != Ty::N {
        operand(ops.next(), inst.dst, ty[0]);
    }
    for i in 0..3 {
        if ty[i + 1] != Ty::N {
            operand(ops.next(), inst.src[i], ty[i + 1]);
        }
    }
    let (o0, o1) = (inst.mem.offset as u32, u32::from(inst.mem.offset1));
    if inst.op.name().contains("2addr") {
        if o0 != 0 {
            let _ = write!(out, " offset0:{o0}");
        }
        if o1 != 0 {
            let _ = write!(out, " offset1:{o1}");
        }
    } else {
        let offset = o1 << 8 | o0;
        if inst.op == Op::DsSwizzleB32 && offset != 0 {
            out.push_str(" offset:");
            swizzle(out, offset);
        } else if offset != 0 {
            let _ = write!(out, " offset:{offset}");
        }
    }
    if inst.mem.gds {
        out.push_str(" gds");
    }
}

/// A `ds_swizzle_b32` pattern as LLVM's printer names it.
fn swizzle(out: &mut String, offset: u32) {
    if offset & 0x8000 != 0 {
        let _ = write!(
            out,
            "swizzle(QUAD_PERM,{},{},{},{})",
            offset & 3,
            offset >> 2 & 3,
            offset >> 4 & 3,
            offset >> 6 & 3
        );
        return;
    }
    let (and, or, xor) = (offset & 0x1f, offset >> 5 & 0x1f, offset >> 10 & 0x1f);
    let group = 32 - (!and & 0x1f).leading_zeros();
    if and == 0x1f && or == 0 && xor.is_power_of_two() {
        let _ = write!(out, "swizzle(SWAP,{xor})");
    } else if and == 0x1f && or == 0 && xor > 0 && (xor + 1).is_power_of_two() {
        let _ = write!(out, "swizzle(REVERSE,{})", xor + 1);
    } else if group > 1 && (1 << group) - 1 == !and & 0x1f && or < (1 << group) && xor == 0 {
        let _ = write!(out, "swizzle(BROADCAST,{},{or})", 1 << group);
    } else {
        out.push_str("swizzle(BITMASK_PERM,\"");
        for bit in (0..5).rev() {
            out.push(match (and >> bit & 1, or >> bit & 1, xor >> bit & 1) {
                (0, 0, _) => '0',
                (0, 1, _) => '1',
                (_, _, 0) => 'p',
                _ => 'i',
            });
        }
        out.push_str("\")");
    }
}

/// FLAT, GLOBAL, SCRATCH: `[vdst,] addr[, data][, saddr|off]`, then offset and cache policy.
fn flat(out: &mut String, inst: &Inst) {
    let ty = inst.row.ty;
    let m = inst.mem;
    let mut ops = Operands::new(out);
    if ty[0] != Ty::N {
        operand(ops.next(), inst.dst, ty[0]);
    } else if m.glc && inst.op.name().contains("_atomic_") {
        // An atomic returns the old value when GLC is set (the same opcode either way).
        let cmpswap = inst.op.name().contains("cmpswap");
        let data = ty[2].dwords();
        vreg(ops.next(), inst.dst, if cmpswap { data / 2 } else { data });
    }
    // The `addtid` forms take no address: the lane id is the offset.
    let mut no_address = String::new();
    let o = if inst.op.name().contains("_addtid_") {
        &mut no_address
    } else {
        ops.next()
    };
    match (m.segment, m.sbase) {
        (0, _) | (2, Operand::None) => vreg(o, inst.src[0], 2),
        (1, _) if !m.sve => o.push_str("off"),
        _ => vreg(o, inst.src[0], 1),
    }
    if ty[2] != Ty::N {
        operand(ops.next(), inst.src[1], ty[2]);
    } else if ty[0] == Ty::N && inst.op.name().contains("_addtid_") {
        vreg(ops.next(), inst.src[1], 1);
    }
    if m.segment != 0 {
        match m.sbase {
            Operand::Sgpr(n) => sgpr(ops.next(), n, if m.segment == 2 { 2 } else { 1 }),
            _ => ops.next().push_str("off"),
        }
    }
    if m.offset != 0 {
        let _ = write!(out, " offset:{}", m.offset);
    }
    policy(out, inst);
}

/// `glc`, `slc`, `dlc`.
fn policy(out: &mut String, inst: &Inst) {
    for (set, name) in [
        (inst.mem.glc, " glc"),
        (inst.mem.slc, " slc"),
        (inst.mem.dlc, " dlc"),
    ] {
        if set {
            out.push_str(name);
        }
    }
}

/// MUBUF, MTBUF: `vdata, vaddr|off, srsrc, soffset`, then format, addressing, offset, policy.
fn buffer(out: &mut String, inst: &Inst) {
    let ty = inst.row.ty;
    let m = inst.mem;
    if ty[0] == Ty::N {
        return;
    }
    let mut ops = Operands::new(out);
    if inst.op.name().contains("_lds_") {
        // The LDS loads write LDS (at M0), no VGPR.
    } else if m.tfe {
        // TFE writes one more register: the fetch status.
        vreg(ops.next(), inst.src[1], ty[0].dwords() + 1);
    } else {
        operand(ops.next(), inst.src[1], ty[0]);
    }
    let o = ops.next();
    match (m.idxen, m.offen) {
        (true, true) => vreg(o, inst.src[0], 2),
        (false, false) => o.push_str("off"),
        _ => vreg(o, inst.src[0], 1),
    }
    if let Operand::Sgpr(n) = m.sbase {
        sgpr(ops.next(), n, 4);
    }
    let o = ops.next();
    operand(o, m.soffset, Ty::B32);
    super::scalar::lds_direct_note(o, m.soffset);
    if inst.enc == Encoding::Mtbuf {
        out.push_str(tables::MTBUF_FORMAT[usize::from(m.format & 0x7f)]);
    }
    if m.idxen {
        out.push_str(" idxen");
    }
    if m.offen {
        out.push_str(" offen");
    }
    if m.offset != 0 {
        let _ = write!(out, " offset:{}", m.offset);
    }
    policy(out, inst);
    if m.tfe {
        out.push_str(" tfe");
    }
}
