//! Scalar ALU: SOP1, SOP2, SOPC and SOPK.

use super::{Exec, R, unimplemented};
use crate::gpu::shader::isa::{Inst, Op, Ty};

/// Sign-extend the low `bits` bits of `v`.
fn sext(v: u32, bits: u32) -> u32 {
    ((v << (32 - bits)) as i32 >> (32 - bits)) as u32
}

fn sext64(v: u64, bits: u32) -> u64 {
    ((v << (64 - bits)) as i64 >> (64 - bits)) as u64
}

/// Bitfield extract: offset in `s1[4:0]` (`[5:0]` for 64 bits), width in `s1[22:16]`.
fn bfe32(s0: u32, s1: u32, signed: bool) -> u32 {
    let offset = s1 & 31;
    let width = (s1 >> 16) & 0x7f;
    if width == 0 {
        return 0;
    }
    let v = s0 >> offset;
    if width >= 32 {
        return if signed {
            (s0 as i32 >> offset) as u32
        } else {
            v
        };
    }
    let f = v & ((1u32 << width) - 1);
    if signed { sext(f, width) } else { f }
}

fn bfe64(s0: u64, s1: u32, signed: bool) -> u64 {
    let offset = s1 & 63;
    let width = (s1 >> 16) & 0x7f;
    if width == 0 {
        return 0;
    }
    let v = s0 >> offset;
    if width >= 64 {
        return if signed {
            (s0 as i64 >> offset) as u64
        } else {
            v
        };
    }
    let f = v & ((1u64 << width) - 1);
    if signed { sext64(f, width) } else { f }
}

/// Whole-quad mode: every bit of a quad is set if any bit of it is.
fn wqm(v: u64) -> u64 {
    let mut out = 0u64;
    for q in 0..16 {
        if (v >> (4 * q)) & 0xf != 0 {
            out |= 0xf << (4 * q);
        }
    }
    out
}

fn quadmask(v: u64) -> u64 {
    let mut out = 0u64;
    for q in 0..16 {
        if (v >> (4 * q)) & 0xf != 0 {
            out |= 1 << q;
        }
    }
    out
}

pub fn sop2(e: &mut Exec, inst: &Inst) -> R {
    let wide = inst.op.info().sig[2] == Ty::B64;
    if wide {
        return sop2_64(e, inst);
    }
    let a = e.scalar32(inst.src[0])?;
    let b = e.scalar32(inst.src[1])?;
    let scc = e.w.scc;
    let (d, new_scc): (u32, Option<bool>) = match inst.op {
        Op::SAddU32 => {
            let (d, c) = a.overflowing_add(b);
            (d, Some(c))
        }
        Op::SSubU32 => {
            let (d, c) = a.overflowing_sub(b);
            (d, Some(c))
        }
        Op::SAddI32 => {
            let (d, o) = (a as i32).overflowing_add(b as i32);
            (d as u32, Some(o))
        }
        Op::SSubI32 => {
            let (d, o) = (a as i32).overflowing_sub(b as i32);
            (d as u32, Some(o))
        }
        Op::SAddcU32 => {
            let s = u64::from(a) + u64::from(b) + u64::from(scc);
            (s as u32, Some(s >> 32 != 0))
        }
        Op::SSubbU32 => {
            let s = u64::from(a)
                .wrapping_sub(u64::from(b))
                .wrapping_sub(u64::from(scc));
            (s as u32, Some(u64::from(b) + u64::from(scc) > u64::from(a)))
        }
        Op::SMinI32 => {
            let c = (a as i32) < (b as i32);
            (if c { a } else { b }, Some(c))
        }
        Op::SMinU32 => {
            let c = a < b;
            (if c { a } else { b }, Some(c))
        }
        Op::SMaxI32 => {
            let c = (a as i32) > (b as i32);
            (if c { a } else { b }, Some(c))
        }
        Op::SMaxU32 => {
            let c = a > b;
            (if c { a } else { b }, Some(c))
        }
        Op::SCselectB32 => (if scc { a } else { b }, None),
        Op::SAndB32 => nz(a & b),
        Op::SOrB32 => nz(a | b),
        Op::SXorB32 => nz(a ^ b),
        Op::SAndn2B32 => nz(a & !b),
        Op::SOrn2B32 => nz(a | !b),
        Op::SNandB32 => nz(!(a & b)),
        Op::SNorB32 => nz(!(a | b)),
        Op::SXnorB32 => nz(!(a ^ b)),
        Op::SLshlB32 => nz(a << (b & 31)),
        Op::SLshrB32 => nz(a >> (b & 31)),
        Op::SAshrI32 => nz(((a as i32) >> (b & 31)) as u32),
        Op::SBfmB32 => ((((1u64 << (a & 31)) - 1) as u32) << (b & 31), None),
        Op::SBfmB64 => return e.write_sdst64(inst.dst, bfm64(a, b)),
        Op::SMulI32 => (a.wrapping_mul(b), None),
        Op::SBfeU32 => nz(bfe32(a, b, false)),
        Op::SBfeI32 => nz(bfe32(a, b, true)),
        Op::SAbsdiffI32 => nz((a as i32).wrapping_sub(b as i32).unsigned_abs()),
        Op::SMulHiU32 => (((u64::from(a) * u64::from(b)) >> 32) as u32, None),
        Op::SMulHiI32 => (
            ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32,
            None,
        ),
        Op::SLshl1AddU32 | Op::SLshl2AddU32 | Op::SLshl3AddU32 | Op::SLshl4AddU32 => {
            let n = match inst.op {
                Op::SLshl1AddU32 => 1,
                Op::SLshl2AddU32 => 2,
                Op::SLshl3AddU32 => 3,
                _ => 4,
            };
            let s = (u64::from(a) << n) + u64::from(b);
            (s as u32, Some(s >> 32 != 0))
        }
        Op::SPackLlB32B16 => ((a & 0xffff) | (b << 16), None),
        Op::SPackLhB32B16 => ((a & 0xffff) | (b & 0xffff_0000), None),
        Op::SPackHhB32B16 => ((a >> 16) | (b & 0xffff_0000), None),
        _ => return Err(unimplemented("scalar ALU opcode not simulated")),
    };
    e.write_sdst32(inst.dst, d)?;
    if let Some(s) = new_scc {
        e.w.scc = s;
    }
    Ok(())
}

/// Result and SCC = result != 0.
fn nz(v: u32) -> (u32, Option<bool>) {
    (v, Some(v != 0))
}

fn sop2_64(e: &mut Exec, inst: &Inst) -> R {
    let sig = inst.op.info().sig;
    let a = e.scalar64(inst.src[0])?;
    let b = if sig[3] == Ty::B64 {
        e.scalar64(inst.src[1])?
    } else {
        u64::from(e.scalar32(inst.src[1])?)
    };
    let scc = e.w.scc;
    let nz64 = |v: u64| (v, Some(v != 0));
    let (d, new_scc): (u64, Option<bool>) = match inst.op {
        Op::SCselectB64 => (if scc { a } else { b }, None),
        Op::SAndB64 => nz64(a & b),
        Op::SOrB64 => nz64(a | b),
        Op::SXorB64 => nz64(a ^ b),
        Op::SAndn2B64 => nz64(a & !b),
        Op::SOrn2B64 => nz64(a | !b),
        Op::SNandB64 => nz64(!(a & b)),
        Op::SNorB64 => nz64(!(a | b)),
        Op::SXnorB64 => nz64(!(a ^ b)),
        Op::SLshlB64 => nz64(a << (b & 63)),
        Op::SLshrB64 => nz64(a >> (b & 63)),
        Op::SAshrI64 => nz64(((a as i64) >> (b & 63)) as u64),
        Op::SBfeU64 => nz64(bfe64(a, b as u32, false)),
        Op::SBfeI64 => nz64(bfe64(a, b as u32, true)),
        _ => return Err(unimplemented("scalar ALU opcode not simulated")),
    };
    e.write_sdst64(inst.dst, d)?;
    if let Some(s) = new_scc {
        e.w.scc = s;
    }
    Ok(())
}

/// SOP2 s_bfm_b64 has 32-bit sources and a 64-bit result.
fn bfm64(a: u32, b: u32) -> u64 {
    let w = a & 63;
    let mask = if w == 0 { 0 } else { u64::MAX >> (64 - w) };
    mask << (b & 63)
}

pub fn sop1(e: &mut Exec, inst: &Inst) -> R {
    let sig = inst.op.info().sig;
    let exec = e.w.exec();
    let scc = e.w.scc;
    match inst.op {
        Op::SMovB32 => {
            let v = e.scalar32(inst.src[0])?;
            e.write_sdst32(inst.dst, v)
        }
        Op::SMovB64 => {
            let v = e.scalar64(inst.src[0])?;
            e.write_sdst64(inst.dst, v)
        }
        Op::SCmovB32 => {
            if scc {
                let v = e.scalar32(inst.src[0])?;
                e.write_sdst32(inst.dst, v)?;
            }
            Ok(())
        }
        Op::SCmovB64 => {
            if scc {
                let v = e.scalar64(inst.src[0])?;
                e.write_sdst64(inst.dst, v)?;
            }
            Ok(())
        }
        Op::SGetpcB64 => {
            let pc = e.w.pc;
            e.write_sdst64(inst.dst, pc)
        }
        Op::SSetpcB64 => {
            e.w.pc = e.scalar64(inst.src[0])?;
            Ok(())
        }
        Op::SSwappcB64 => {
            let target = e.scalar64(inst.src[0])?;
            let ret = e.w.pc;
            e.write_sdst64(inst.dst, ret)?;
            e.w.pc = target;
            Ok(())
        }
        Op::SAndSaveexecB64
        | Op::SOrSaveexecB64
        | Op::SXorSaveexecB64
        | Op::SAndn2SaveexecB64
        | Op::SOrn2SaveexecB64
        | Op::SNandSaveexecB64
        | Op::SNorSaveexecB64
        | Op::SXnorSaveexecB64
        | Op::SAndn1SaveexecB64
        | Op::SOrn1SaveexecB64 => {
            let s = e.read_mask(inst.src[0])?;
            let new = match inst.op {
                Op::SAndSaveexecB64 => s & exec,
                Op::SOrSaveexecB64 => s | exec,
                Op::SXorSaveexecB64 => s ^ exec,
                Op::SAndn2SaveexecB64 => s & !exec,
                Op::SOrn2SaveexecB64 => s | !exec,
                Op::SNandSaveexecB64 => !(s & exec),
                Op::SNorSaveexecB64 => !(s | exec),
                Op::SXnorSaveexecB64 => !(s ^ exec),
                Op::SAndn1SaveexecB64 => !s & exec,
                _ => !s | exec,
            } & e.w.lane_mask();
            e.write_mask_dst(inst.dst, exec)?;
            e.w.set_exec(new);
            e.w.scc = new != 0;
            Ok(())
        }
        Op::SAndn1WrexecB64 | Op::SAndn2WrexecB64 => {
            let s = e.read_mask(inst.src[0])?;
            let new = if inst.op == Op::SAndn1WrexecB64 {
                !s & exec
            } else {
                s & !exec
            } & e.w.lane_mask();
            e.w.set_exec(new);
            e.write_mask_dst(inst.dst, new)?;
            e.w.scc = new != 0;
            Ok(())
        }
        _ if sig[2] == Ty::B64 || sig[0] == Ty::B64 => sop1_64(e, inst),
        _ => {
            let a = e.scalar32(inst.src[0])?;
            let (d, new_scc) = match inst.op {
                Op::SNotB32 => nz(!a),
                Op::SWqmB32 => nz(wqm(u64::from(a)) as u32),
                Op::SBrevB32 => (a.reverse_bits(), None),
                Op::SBcnt0I32B32 => nz(a.count_zeros()),
                Op::SBcnt1I32B32 => nz(a.count_ones()),
                Op::SFf0I32B32 => (
                    if a == u32::MAX {
                        u32::MAX
                    } else {
                        (!a).trailing_zeros()
                    },
                    None,
                ),
                Op::SFf1I32B32 => (if a == 0 { u32::MAX } else { a.trailing_zeros() }, None),
                Op::SFlbitI32B32 => (if a == 0 { u32::MAX } else { a.leading_zeros() }, None),
                Op::SFlbitI32 => (flbit(i64::from(a as i32), 32), None),
                Op::SSextI32I8 => (sext(a, 8), None),
                Op::SSextI32I16 => (sext(a, 16), None),
                Op::SBitset0B32 => {
                    let d = e.scalar32(inst.dst)? & !(1u32 << (a & 31));
                    (d, None)
                }
                Op::SBitset1B32 => {
                    let d = e.scalar32(inst.dst)? | (1u32 << (a & 31));
                    (d, None)
                }
                Op::SQuadmaskB32 => nz(quadmask(u64::from(a)) as u32),
                Op::SAbsI32 => nz((a as i32).unsigned_abs()),
                Op::SMovrelsB32 => {
                    let src = match inst.src[0] {
                        crate::gpu::shader::isa::Operand::Sgpr(n) => usize::from(n),
                        _ => return Err(unimplemented("s_movrels from a non-SGPR")),
                    };
                    let idx = src + e.w.m0() as usize;
                    (if idx < 128 { e.w.s(idx) } else { 0 }, None)
                }
                Op::SMovreldB32 => {
                    let dst = match inst.dst {
                        crate::gpu::shader::isa::Operand::Sgpr(n) => usize::from(n),
                        _ => return Err(unimplemented("s_movreld to a non-SGPR")),
                    };
                    let idx = dst + e.w.m0() as usize;
                    if idx < 128 {
                        e.w.set_s(idx, a);
                    }
                    return Ok(());
                }
                _ => return Err(unimplemented("scalar ALU opcode not simulated")),
            };
            e.write_sdst32(inst.dst, d)?;
            if let Some(s) = new_scc {
                e.w.scc = s;
            }
            Ok(())
        }
    }
}

/// Leading-bit count: for unsigned ops the number of leading zeros, for signed the number of
/// leading bits equal to the sign; -1 when there is no such boundary.
fn flbit(v: i64, bits: u32) -> u32 {
    if v == 0 || v == -1 {
        return u32::MAX;
    }
    let x = if v < 0 { !v } else { v } as u64;
    if bits == 32 {
        (x as u32).leading_zeros()
    } else {
        x.leading_zeros()
    }
}

fn sop1_64(e: &mut Exec, inst: &Inst) -> R {
    let sig = inst.op.info().sig;
    let a = if sig[2] == Ty::B64 {
        e.scalar64(inst.src[0])?
    } else {
        u64::from(e.scalar32(inst.src[0])?)
    };
    match inst.op {
        Op::SBcnt0I32B64 => return scalar_count(e, inst, a.count_zeros()),
        Op::SBcnt1I32B64 => return scalar_count(e, inst, a.count_ones()),
        Op::SFf0I32B64 => {
            let d = if a == u64::MAX {
                u32::MAX
            } else {
                (!a).trailing_zeros()
            };
            return e.write_sdst32(inst.dst, d);
        }
        Op::SFf1I32B64 => {
            let d = if a == 0 { u32::MAX } else { a.trailing_zeros() };
            return e.write_sdst32(inst.dst, d);
        }
        Op::SFlbitI32B64 => {
            let d = if a == 0 { u32::MAX } else { a.leading_zeros() };
            return e.write_sdst32(inst.dst, d);
        }
        Op::SFlbitI32I64 => return e.write_sdst32(inst.dst, flbit(a as i64, 64)),
        _ => {}
    }
    let (d, new_scc) = match inst.op {
        Op::SNotB64 => (!a, Some(!a != 0)),
        Op::SWqmB64 => {
            let v = wqm(a);
            (v, Some(v != 0))
        }
        Op::SBrevB64 => (a.reverse_bits(), None),
        Op::SQuadmaskB64 => {
            let v = quadmask(a);
            (v, Some(v != 0))
        }
        Op::SBitset0B64 => (e.scalar64(inst.dst)? & !(1u64 << (a & 63)), None),
        Op::SBitset1B64 => (e.scalar64(inst.dst)? | (1u64 << (a & 63)), None),
        Op::SBitreplicateB64B32 => {
            let mut v = 0u64;
            for i in 0..32 {
                if (a >> i) & 1 != 0 {
                    v |= 3 << (2 * i);
                }
            }
            (v, None)
        }
        Op::SMovrelsB64 | Op::SMovreldB64 => {
            return Err(unimplemented("64-bit s_movrels/s_movreld not simulated"));
        }
        _ => return Err(unimplemented("scalar ALU opcode not simulated")),
    };
    e.write_sdst64(inst.dst, d)?;
    if let Some(s) = new_scc {
        e.w.scc = s;
    }
    Ok(())
}

fn scalar_count(e: &mut Exec, inst: &Inst, n: u32) -> R {
    e.write_sdst32(inst.dst, n)?;
    e.w.scc = n != 0;
    Ok(())
}

pub fn sopc(e: &mut Exec, inst: &Inst) -> R {
    let scc = match inst.op {
        Op::SCmpEqU64 | Op::SCmpLgU64 => {
            let a = e.scalar64(inst.src[0])?;
            let b = e.scalar64(inst.src[1])?;
            if inst.op == Op::SCmpEqU64 {
                a == b
            } else {
                a != b
            }
        }
        Op::SBitcmp0B64 | Op::SBitcmp1B64 => {
            let a = e.scalar64(inst.src[0])?;
            let b = e.scalar32(inst.src[1])?;
            let bit = (a >> (b & 63)) & 1;
            if inst.op == Op::SBitcmp0B64 {
                bit == 0
            } else {
                bit == 1
            }
        }
        _ => {
            let a = e.scalar32(inst.src[0])?;
            let b = e.scalar32(inst.src[1])?;
            let (ai, bi) = (a as i32, b as i32);
            match inst.op {
                Op::SCmpEqI32 | Op::SCmpEqU32 => a == b,
                Op::SCmpLgI32 | Op::SCmpLgU32 => a != b,
                Op::SCmpGtI32 => ai > bi,
                Op::SCmpGeI32 => ai >= bi,
                Op::SCmpLtI32 => ai < bi,
                Op::SCmpLeI32 => ai <= bi,
                Op::SCmpGtU32 => a > b,
                Op::SCmpGeU32 => a >= b,
                Op::SCmpLtU32 => a < b,
                Op::SCmpLeU32 => a <= b,
                Op::SBitcmp0B32 => (a >> (b & 31)) & 1 == 0,
                Op::SBitcmp1B32 => (a >> (b & 31)) & 1 == 1,
                _ => return Err(unimplemented("scalar compare opcode not simulated")),
            }
        }
    };
    e.w.scc = scc;
    Ok(())
}

/// The hardware registers `s_getreg`/`s_setreg` address (GFX9 ids).
const HW_REG_MODE: u32 = 1;
const HW_REG_STATUS: u32 = 2;
const HW_REG_TRAPSTS: u32 = 3;
const HW_REG_HW_ID: u32 = 4;
const HW_REG_GPR_ALLOC: u32 = 5;
const HW_REG_LDS_ALLOC: u32 = 6;
const HW_REG_IB_STS: u32 = 7;
const HW_REG_SH_MEM_BASES: u32 = 15;

fn hwreg_fields(imm: u32) -> (u32, u32, u32) {
    let id = imm & 0x3f;
    let offset = (imm >> 6) & 0x1f;
    let size = ((imm >> 11) & 0x1f) + 1;
    (id, offset, size)
}

/// GFX11 hardware registers whose ids differ from GFX9's.
mod gfx11_hwreg {
    pub const FLAT_SCR_LO: u32 = 20;
    pub const FLAT_SCR_HI: u32 = 21;
    pub const HW_ID1: u32 = 23;
    pub const HW_ID2: u32 = 24;
    pub const SHADER_CYCLES: u32 = 29;
}

/// A GFX11 hardware register that is not at its GFX9 id (None: read it as GFX9 does).
fn read_gfx11_hwreg(e: &Exec, id: u32) -> Option<u32> {
    use gfx11_hwreg::{FLAT_SCR_HI, FLAT_SCR_LO, HW_ID1, HW_ID2, SHADER_CYCLES};
    Some(match id {
        FLAT_SCR_LO => e.w.flat_scratch() as u32,
        FLAT_SCR_HI => (e.w.flat_scratch() >> 32) as u32,
        // WAVE_ID 4:0 (the wave's index in its workgroup stands in), the rest 0.
        HW_ID1 => e.w.wave_in_group & 0x1f,
        HW_ID2 => 0,
        // A 20-bit free-running cycle counter, at the s_memtime clock.
        SHADER_CYCLES => {
            (crate::gpu::clock::monotonic_raw_ns() * (super::smem::SHADER_CLOCK_HZ / 1_000_000_000))
                as u32
                & 0xf_ffff
        }
        // The others are at their GFX9 ids (MODE, STATUS, TRAPSTS, the allocations), except
        // GFX9's HW_ID (4), which GFX11 split into HW_ID1 and HW_ID2.
        _ => return None,
    })
}

fn read_hwreg(e: &Exec, id: u32) -> Result<u32, super::Fault> {
    if !e.shared.target.is_gfx9() {
        if let Some(v) = read_gfx11_hwreg(e, id) {
            return Ok(v);
        }
        if id == HW_REG_HW_ID {
            return Err(unimplemented("GFX9's HW_ID on GFX11"));
        }
    }
    Ok(match id {
        HW_REG_MODE => e.w.mode,
        HW_REG_STATUS => {
            // SCC (bit 0), EXECZ (9), VCCZ (10); the other status bits are 0 for a running
            // compute wave.
            u32::from(e.w.scc) | u32::from(e.w.exec() == 0) << 9 | u32::from(e.w.vcc() == 0) << 10
        }
        HW_REG_TRAPSTS => e.w.trapsts,
        // WAVE_ID in 3:0, SIMD_ID 5:4, CU_ID 11:8, SE_ID 14:13: the wave's index in its
        // workgroup stands in for the slot the hardware would report.
        HW_REG_HW_ID => e.w.wave_in_group & 0xf,
        HW_REG_SH_MEM_BASES => {
            let ap = e.shared.apertures;
            ((ap.private_base >> 48) as u32 & 0xffff) | ((ap.shared_base >> 48) as u32) << 16
        }
        // Allocation and IB status, TBA/TMA (no trap handler is installed) and gfx942's XCC_ID
        // read 0.
        HW_REG_GPR_ALLOC | HW_REG_LDS_ALLOC | HW_REG_IB_STS | 16..=20 => 0,
        _ => {
            return Err(unimplemented(
                "s_getreg of a hardware register not simulated",
            ));
        }
    })
}

fn write_hwreg(e: &mut Exec, imm: u32, value: u32) -> R {
    let (id, offset, size) = hwreg_fields(imm);
    let mask = if size >= 32 {
        u32::MAX
    } else {
        ((1u32 << size) - 1) << offset
    };
    let field = value.wrapping_shl(offset) & mask;
    match id {
        HW_REG_MODE => {
            e.w.mode = (e.w.mode & !mask) | field;
            Ok(())
        }
        HW_REG_TRAPSTS => {
            e.w.trapsts = (e.w.trapsts & !mask) | field;
            Ok(())
        }
        // Read-only or privileged registers: user writes are ignored by the hardware.
        HW_REG_STATUS
        | HW_REG_HW_ID
        | HW_REG_GPR_ALLOC
        | HW_REG_LDS_ALLOC
        | HW_REG_IB_STS
        | HW_REG_SH_MEM_BASES
        | 16..=20 => Ok(()),
        _ => Err(unimplemented(
            "s_setreg of a hardware register not simulated",
        )),
    }
}

pub fn sopk(e: &mut Exec, inst: &Inst) -> R {
    let imm = inst.imm();
    let simm = sext(imm, 16);
    match inst.op {
        Op::SMovkI32 => e.write_sdst32(inst.dst, simm),
        Op::SCmovkI32 => {
            if e.w.scc {
                e.write_sdst32(inst.dst, simm)?;
            }
            Ok(())
        }
        Op::SCmpkEqI32
        | Op::SCmpkLgI32
        | Op::SCmpkGtI32
        | Op::SCmpkGeI32
        | Op::SCmpkLtI32
        | Op::SCmpkLeI32
        | Op::SCmpkEqU32
        | Op::SCmpkLgU32
        | Op::SCmpkGtU32
        | Op::SCmpkGeU32
        | Op::SCmpkLtU32
        | Op::SCmpkLeU32 => {
            let a = e.scalar32(inst.src[0])?;
            let (ai, bi) = (a as i32, simm as i32);
            let b = imm;
            e.w.scc = match inst.op {
                Op::SCmpkEqI32 => ai == bi,
                Op::SCmpkLgI32 => ai != bi,
                Op::SCmpkGtI32 => ai > bi,
                Op::SCmpkGeI32 => ai >= bi,
                Op::SCmpkLtI32 => ai < bi,
                Op::SCmpkLeI32 => ai <= bi,
                Op::SCmpkEqU32 => a == b,
                Op::SCmpkLgU32 => a != b,
                Op::SCmpkGtU32 => a > b,
                Op::SCmpkGeU32 => a >= b,
                Op::SCmpkLtU32 => a < b,
                _ => a <= b,
            };
            Ok(())
        }
        Op::SAddkI32 => {
            let d = e.scalar32(inst.dst)?;
            let (v, o) = (d as i32).overflowing_add(simm as i32);
            e.write_sdst32(inst.dst, v as u32)?;
            e.w.scc = o;
            Ok(())
        }
        Op::SMulkI32 => {
            let d = e.scalar32(inst.dst)?;
            e.write_sdst32(inst.dst, d.wrapping_mul(simm))
        }
        Op::SGetregB32 => {
            let (id, offset, size) = hwreg_fields(imm);
            let v = read_hwreg(e, id)?;
            let v = if size >= 32 {
                v >> offset
            } else {
                (v >> offset) & ((1u32 << size) - 1)
            };
            e.write_sdst32(inst.dst, v)
        }
        Op::SSetregB32 | Op::SSetregImm32B32 => {
            let v = e.scalar32(inst.src[0])?;
            write_hwreg(e, imm, v)
        }
        Op::SCallB64 => {
            let ret = e.w.pc;
            e.write_sdst64(inst.dst, ret)?;
            e.w.pc = ret.wrapping_add((i64::from(simm as i32) * 4) as u64);
            Ok(())
        }
        _ => Err(unimplemented("SOPK opcode not simulated")),
    }
}
