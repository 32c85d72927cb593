//! Scalar memory: s_load, s_buffer_load, s_store, the clocks, and cache hints.

use std::sync::atomic::{Ordering, fence};

use super::{Exec, Fault, R, unimplemented};
use crate::gpu::clock;
use crate::gpu::shader::isa::{Inst, Op, Operand};

/// Nominal shader clock of `s_memtime`, in Hz. The hardware counts core clocks; the simulator
/// counts nanoseconds of CLOCK_MONOTONIC_RAW (the value is only ever used for intervals).
pub const SHADER_CLOCK_HZ: u64 = 1_000_000_000;

fn sgpr_index(op: Operand) -> Result<usize, Fault> {
    match op {
        Operand::Sgpr(n) => Ok(usize::from(n)),
        _ => Err(unimplemented("a scalar memory operand that is not an SGPR")),
    }
}

/// A buffer resource (V#) of 4 SGPRs: base address and NUM_RECORDS.
fn buffer(e: &Exec, base: usize) -> (u64, u64) {
    let w0 = e.w.s(base);
    let w1 = e.w.s(base + 1);
    let w2 = e.w.s(base + 2);
    (u64::from(w0) | u64::from(w1 & 0xffff) << 32, u64::from(w2))
}

pub fn exec(e: &mut Exec, inst: &Inst) -> R {
    let mem = inst.mem();
    match inst.op {
        Op::SMemtime => {
            let t = clock::monotonic_raw_ns() * (SHADER_CLOCK_HZ / 1_000_000_000);
            return e.write_sdst64(inst.dst, t);
        }
        Op::SMemrealtime => return e.write_sdst64(inst.dst, clock::gpu_timestamp()),
        Op::SDcacheInv | Op::SDcacheInvVol | Op::SDcacheWb | Op::SDcacheWbVol => {
            fence(Ordering::SeqCst);
            return Ok(());
        }
        // Hints with no architectural effect here: there is no scalar cache whose dirty lines
        // a discard could drop (s_store writes memory at once), and no address-translation
        // cache for a probe to fill.
        Op::SDcacheDiscard | Op::SDcacheDiscardX2 | Op::SAtcProbe | Op::SAtcProbeBuffer => {
            return Ok(());
        }
        _ => {}
    }
    let name = inst.op.name();
    let dwords = inst.op.info().sig[0].dwords();
    let soffset = if mem.soffset_en {
        e.scalar32(inst.src[1])?
    } else {
        0
    };
    // s_load/s_store: the 64-bit base plus the sign-extended 21-bit immediate plus the SGPR
    // offset, an unsigned 32-bit byte offset (LLVM's gfx9 SMEM operand docs: "If offset is
    // specified as a register, it supplies an unsigned byte offset. If offset is specified as
    // a 21-bit immediate, it supplies a signed byte offset"), summed in 64 bits; the two low
    // bits of the address are ignored (dword access). Fairly sure.
    let offset = (i64::from(mem.offset) as u64).wrapping_add(u64::from(soffset));
    let base_reg = sgpr_index(inst.src[0])?;
    e.mem.refresh();
    if name.starts_with("s_load_") {
        let addr = e.w.s64(base_reg).wrapping_add(offset) & !3;
        let dst = sgpr_index(inst.dst)?;
        let mut buf = [0u8; 64];
        let bytes = &mut buf[..4 * dwords as usize];
        e.mem.read(addr, bytes)?;
        for i in 0..dwords as usize {
            let b = &bytes[4 * i..4 * i + 4];
            e.w.set_s(dst + i, u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        }
        Ok(())
    } else if name.starts_with("s_buffer_load_") {
        let (base, records) = buffer(e, base_reg);
        let dst = sgpr_index(inst.dst)?;
        // A buffer offset is 32 bits, as in MUBUF: immediate plus SGPR offset wrap there, and
        // each dword's offset too. (Less sure than for MUBUF: no document found says so for
        // the scalar unit; LLVM treats an s_buffer_load immediate as unsigned and never emits
        // a sum that would wrap.)
        let start = (mem.offset as u32).wrapping_add(soffset) & !3;
        for i in 0..dwords {
            let o = u64::from(start.wrapping_add(4 * i));
            // Out-of-range dwords of a buffer read as zero.
            let v = if o + 4 <= records {
                e.mem.read_u32(base.wrapping_add(o))?
            } else {
                0
            };
            e.w.set_s(dst + i as usize, v);
        }
        Ok(())
    } else if name.starts_with("s_store_") {
        let addr = e.w.s64(base_reg).wrapping_add(offset) & !3;
        let src = sgpr_index(inst.dst)?;
        let n = inst.op.info().sig[0].dwords() as usize;
        let mut bytes = [0u8; 16];
        for i in 0..n {
            bytes[4 * i..4 * i + 4].copy_from_slice(&e.w.s(src + i).to_le_bytes());
        }
        e.mem.write(addr, &bytes[..4 * n])?;
        Ok(())
    } else {
        Err(unimplemented("scalar memory opcode not simulated"))
    }
}
