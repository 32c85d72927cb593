//! Reading and writing operands: scalar sources, vector sources with their modifiers (DPP lane
//! permutation, SDWA field selection, float neg/abs), and masked destination writes.

use super::dpp::{dpp_permute, dpp_write_mask};
use super::{Exec, Fault, unimplemented};
use crate::gpu::shader::isa::{Encoding, Extra, Inst, Operand, SdwaSel, Special};
use crate::gpu::shader::wave::{LANES, Lanes};

impl Exec<'_, '_> {
    /// A 32-bit scalar operand (SGPR, constant or special register).
    pub fn scalar32(&self, op: Operand) -> Result<u32, Fault> {
        Ok(match op {
            Operand::Sgpr(n) => self.w.s(usize::from(n)),
            Operand::Inline(v) | Operand::Literal { value: v, .. } => v as u32,
            Operand::Special(s) => self.special(s)? as u32,
            Operand::Vgpr(_) => return Err(unimplemented("a VGPR where a scalar is required")),
            Operand::None => 0,
        })
    }

    /// A 64-bit scalar operand. The aperture registers read as 64-bit give the whole aperture
    /// address (LLVM reads `src_private_base` into a pair and uses the high half), as 32-bit
    /// their high half.
    pub fn scalar64(&self, op: Operand) -> Result<u64, Fault> {
        Ok(match op {
            Operand::Sgpr(n) => self.w.s64(usize::from(n)),
            Operand::Inline(v) | Operand::Literal { value: v, .. } => v,
            Operand::Special(
                s @ (Special::SharedBase
                | Special::SharedLimit
                | Special::PrivateBase
                | Special::PrivateLimit),
            ) => self.special(s)? << 32,
            Operand::Special(s) => self.special(s)?,
            Operand::Vgpr(_) => return Err(unimplemented("a VGPR where a scalar is required")),
            Operand::None => 0,
        })
    }

    fn special(&self, s: Special) -> Result<u64, Fault> {
        let ap = self.shared.apertures;
        Ok(match s {
            Special::SharedBase => ap.shared_base >> 32,
            Special::SharedLimit => (ap.shared_base + super::Apertures::SIZE - 1) >> 32,
            Special::PrivateBase => ap.private_base >> 32,
            Special::PrivateLimit => (ap.private_base + super::Apertures::SIZE - 1) >> 32,
            Special::PopsExitingWaveId => 0,
            Special::Vccz => u64::from(self.w.vcc() == 0),
            Special::Execz => u64::from(self.w.exec() == 0),
            Special::Scc => u64::from(self.w.scc),
            Special::LdsDirect => return Err(unimplemented("LDS direct reads")),
        })
    }

    /// Raw 32-bit lanes of an operand (no modifiers).
    pub fn lanes32(&self, op: Operand) -> Result<Lanes, Fault> {
        Ok(match op {
            Operand::Vgpr(r) => *self.w.v(usize::from(r)),
            other => [self.scalar32(other)?; LANES],
        })
    }

    /// Raw 64-bit lanes of an operand (register pairs for VGPRs).
    pub fn lanes64(&self, op: Operand) -> Result<[u64; LANES], Fault> {
        Ok(match op {
            Operand::Vgpr(r) => self.w.v64(usize::from(r)),
            other => [self.scalar64(other)?; LANES],
        })
    }

    /// Source `i` of a VALU instruction as 32-bit lanes: DPP-permuted (source 0), SDWA-selected,
    /// and with neg/abs applied to the sign bit of its type.
    pub fn src32(&self, inst: &Inst, i: usize) -> Result<Lanes, Fault> {
        let ty = inst.op.info().sig[2 + i];
        let mut v = self.src32_unmodified(inst, i)?;
        let sign = if ty.is_16bit() {
            1u32 << 15
        } else {
            1u32 << 31
        };
        let m = inst.mods;
        if m.sext & (1 << i) != 0 && ty.is_16bit() {
            for x in &mut v {
                *x = *x as u16 as i16 as i32 as u32;
            }
        }
        if inst.enc != Encoding::Vop3p {
            if m.abs & (1 << i) != 0 {
                for x in &mut v {
                    *x &= !sign;
                }
            }
            if m.neg & (1 << i) != 0 {
                for x in &mut v {
                    *x ^= sign;
                }
            }
        }
        Ok(v)
    }

    /// Source `i` with DPP and SDWA applied but without neg/abs (for half-precision operations,
    /// which apply them after op_sel picks a half).
    pub fn src32_unmodified(&self, inst: &Inst, i: usize) -> Result<Lanes, Fault> {
        let mut v = self.lanes32(inst.src[i])?;
        match inst.extra {
            Extra::Dpp(_) | Extra::Dpp8(_) if i == 0 => {
                v = dpp_permute(&v, inst.extra, self.w.exec()).0;
            }
            Extra::Sdwa(s) => {
                let (sel, sext) = if i == 0 {
                    (s.src0_sel, s.src0_sext)
                } else {
                    (s.src1_sel, s.src1_sext)
                };
                sdwa_select(&mut v, sel, sext);
            }
            _ => {}
        }
        Ok(v)
    }

    /// Source `i` as 64-bit lanes with neg/abs on bit 63 (DPP permutes source 0).
    pub fn src64(&self, inst: &Inst, i: usize) -> Result<[u64; LANES], Fault> {
        let mut v = self.lanes64(inst.src[i])?;
        if i == 0 && matches!(inst.extra, Extra::Dpp(_) | Extra::Dpp8(_)) {
            let lo: Lanes = std::array::from_fn(|l| v[l] as u32);
            let hi: Lanes = std::array::from_fn(|l| (v[l] >> 32) as u32);
            let (lo, _) = dpp_permute(&lo, inst.extra, self.w.exec());
            let (hi, _) = dpp_permute(&hi, inst.extra, self.w.exec());
            v = std::array::from_fn(|l| u64::from(lo[l]) | u64::from(hi[l]) << 32);
        }
        let m = inst.mods;
        if m.abs & (1 << i) != 0 {
            for x in &mut v {
                *x &= !(1u64 << 63);
            }
        }
        if m.neg & (1 << i) != 0 {
            for x in &mut v {
                *x ^= 1u64 << 63;
            }
        }
        Ok(v)
    }

    /// The lanes a VALU instruction writes: EXEC, narrowed by DPP row/bank masks and invalid
    /// source lanes.
    pub fn write_mask(&self, inst: &Inst) -> u64 {
        dpp_write_mask(inst.extra, self.w.exec())
    }

    /// Write a 32-bit VALU result to the destination register, applying the SDWA destination
    /// selection when present.
    pub fn write_vdst32(&mut self, inst: &Inst, vals: &Lanes) -> Result<(), Fault> {
        let Operand::Vgpr(r) = inst.dst else {
            return Err(unimplemented("a non-VGPR vector destination"));
        };
        let mask = self.write_mask(inst);
        let r = usize::from(r);
        if let Extra::Sdwa(s) = inst.extra {
            let old = *self.w.v(r);
            let (shift, width) = s.dst_sel.field();
            let mut out = [0u32; LANES];
            for l in 0..LANES {
                out[l] = sdwa_dst(old[l], vals[l], shift, width, s.dst_unused);
            }
            self.w.write_v(r, &out, mask);
        } else {
            self.w.write_v(r, vals, mask);
        }
        Ok(())
    }

    /// Write a 64-bit VALU result.
    pub fn write_vdst64(&mut self, inst: &Inst, vals: &[u64; LANES]) -> Result<(), Fault> {
        let Operand::Vgpr(r) = inst.dst else {
            return Err(unimplemented("a non-VGPR vector destination"));
        };
        let mask = self.write_mask(inst);
        self.w.write_v64(usize::from(r), vals, mask);
        Ok(())
    }

    /// Write a scalar destination (32 bits).
    pub fn write_sdst32(&mut self, op: Operand, v: u32) -> Result<(), Fault> {
        match op {
            Operand::Sgpr(n) => {
                self.w.set_s(usize::from(n), v);
                Ok(())
            }
            Operand::None => Ok(()),
            _ => Err(unimplemented("a non-SGPR scalar destination")),
        }
    }

    /// Write a scalar destination pair (64 bits).
    pub fn write_sdst64(&mut self, op: Operand, v: u64) -> Result<(), Fault> {
        match op {
            Operand::Sgpr(n) => {
                self.w.set_s64(usize::from(n), v);
                Ok(())
            }
            Operand::None => Ok(()),
            _ => Err(unimplemented("a non-SGPR scalar destination")),
        }
    }

    /// Write a lane mask (compare result or carry) to a scalar pair (wave32: to one
    /// register). The whole mask is written, with 0 in the bits of inactive lanes.
    pub fn write_mask_dst(&mut self, op: Operand, mask: u64) -> Result<(), Fault> {
        if self.w.wave32 {
            self.write_sdst32(op, mask as u32)
        } else {
            self.write_sdst64(op, mask)
        }
    }

    /// A lane-mask source (carry in, `v_cndmask` selector, a saveexec source): 64 bits in
    /// wave64, 32 in wave32.
    pub fn read_mask(&self, op: Operand) -> Result<u64, Fault> {
        if self.w.wave32 {
            self.scalar32(op).map(u64::from)
        } else {
            self.scalar64(op)
        }
    }
}

/// Apply an SDWA source selection in place.
fn sdwa_select(v: &mut Lanes, sel: SdwaSel, sext: bool) {
    if sel == SdwaSel::Dword {
        return;
    }
    let (shift, width) = sel.field();
    for x in v.iter_mut() {
        let f = (*x >> shift) & ((1u32 << width) - 1);
        *x = if sext {
            ((f << (32 - width)) as i32 >> (32 - width)) as u32
        } else {
            f
        };
    }
}

/// An SDWA destination write: the result's low `width` bits placed at `shift`, the rest zero,
/// sign extension of the field, or the old value.
fn sdwa_dst(old: u32, val: u32, shift: u32, width: u32, unused: u8) -> u32 {
    if width == 32 {
        return val;
    }
    let fmask = ((1u32 << width) - 1) << shift;
    let field = (val << shift) & fmask;
    match unused {
        0 => field,
        1 => {
            let top = shift + width;
            let v = field;
            if top < 32 && (v >> (top - 1)) & 1 != 0 {
                v | !((1u32 << top) - 1)
            } else {
                v
            }
        }
        _ => (old & !fmask) | field,
    }
}

/// Bits 15:0 or 31:16 of each lane per an op_sel bit.
#[inline]
pub fn half(v: u32, hi: bool) -> u32 {
    if hi { v >> 16 } else { v & 0xffff }
}
