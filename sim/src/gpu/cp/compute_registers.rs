//! The compute pipe's registers as a PM4 compute queue programs them: `SET_SH_REG` writes the
//! persistent shader (SH) registers of the queue's pipe, and `DISPATCH_DIRECT` launches a grid
//! from what they hold at that moment. The values persist from one dispatch to the next (a
//! stream sets only what changes), per queue: each PM4 queue is its own HQD with its own
//! register state.
//!
//! Offsets are GFX9's (gc_9_0 register offsets, SOC15 GC segment 0 at 0x2000, as KFDTest's
//! `Dispatch.cpp` and tinygrad write them), and GFX11's are the same absolute addresses
//! (gc_11_0_0_offset.h: e.g. regCOMPUTE_PGM_LO 0x1bac in GC segment 0 at 0x1260, which is
//! 0x2E0C, as tinygrad's gfx1100 PM4 experiments spell it) except COMPUTE_PGM_RSRC3, at 0x2E28
//! there and at 0x2E2D on gfx90a/gfx942 (the addresses tinygrad's register modules give; the
//! GFX11 offset header's own line for RSRC3 was not read here): `SET_SH_REG` names a register by its dword offset
//! from `PACKET3_SET_SH_REG_START` (0x2C00), `SET_UCONFIG_REG` from
//! `PACKET3_SET_UCONFIG_REG_START` (0xC000). The registers modelled are the `COMPUTE_*` block a
//! compute dispatch uses; a write to any other register halts the queue, as an unmodelled PM4
//! command does. Registers that only tune scheduling, tracing or counters
//! (`COMPUTE_RESOURCE_LIMITS`, `COMPUTE_STATIC_THREAD_MGMT_SE*`, `COMPUTE_PIPELINESTAT_ENABLE`,
//! `COMPUTE_PERFCOUNT_ENABLE`, `COMPUTE_THREAD_TRACE_ENABLE`, `COMPUTE_RESTART_*`, the
//! dispatch packet address) are kept and have no effect on what a dispatch computes.

use super::pm4::RegisterSpace;
use super::queue_error::QueueError;
use crate::gpu::dispatch::RegisterDispatch;
use crate::gpu::target::GfxTarget;

/// `PACKET3_SET_SH_REG_START` (soc15d.h).
const SH_REG_START: u32 = 0x2C00;
/// `PACKET3_SET_UCONFIG_REG_START` (soc15d.h).
const UCONFIG_REG_START: u32 = 0xC000;

/// Absolute dword addresses of the registers modelled.
mod reg {
    pub(super) const FIRST: u32 = 0x2E00;
    pub(super) const START_X: u32 = 0x2E04;
    pub(super) const NUM_THREAD_X: u32 = 0x2E07;
    pub(super) const PIPELINESTAT_ENABLE: u32 = 0x2E0A;
    pub(super) const PERFCOUNT_ENABLE: u32 = 0x2E0B;
    pub(super) const PGM_LO: u32 = 0x2E0C;
    pub(super) const PGM_HI: u32 = 0x2E0D;
    pub(super) const DISPATCH_PKT_ADDR_LO: u32 = 0x2E0E;
    pub(super) const DISPATCH_PKT_ADDR_HI: u32 = 0x2E0F;
    pub(super) const DISPATCH_SCRATCH_BASE_LO: u32 = 0x2E10;
    pub(super) const DISPATCH_SCRATCH_BASE_HI: u32 = 0x2E11;
    pub(super) const PGM_RSRC1: u32 = 0x2E12;
    pub(super) const PGM_RSRC2: u32 = 0x2E13;
    pub(super) const RESOURCE_LIMITS: u32 = 0x2E15;
    pub(super) const STATIC_THREAD_MGMT_SE0: u32 = 0x2E16;
    pub(super) const STATIC_THREAD_MGMT_SE1: u32 = 0x2E17;
    pub(super) const TMPRING_SIZE: u32 = 0x2E18;
    pub(super) const STATIC_THREAD_MGMT_SE2: u32 = 0x2E19;
    pub(super) const STATIC_THREAD_MGMT_SE3: u32 = 0x2E1A;
    pub(super) const RESTART_X: u32 = 0x2E1B;
    pub(super) const RESTART_Z: u32 = 0x2E1D;
    pub(super) const THREAD_TRACE_ENABLE: u32 = 0x2E1E;
    /// gfx90a and gfx942 (KFDTest's `Dispatch.cpp` writes it there for Aldebaran and Aqua
    /// Vanjaram; gc_9_4_2_offset.h itself not read here).
    pub(super) const PGM_RSRC3: u32 = 0x2E2D;
    /// GFX11 (0x1bc8 in GC segment 0 at 0x1260: the address tinygrad's gc 11.0.0 register
    /// module gives regCOMPUTE_PGM_RSRC3).
    pub(super) const PGM_RSRC3_GFX11: u32 = 0x2E28;
    pub(super) const USER_DATA_0: u32 = 0x2E40;
    pub(super) const USER_DATA_15: u32 = 0x2E4F;
    /// `GRBM_GFX_INDEX` (gc_9_0: 0x2200 in GC segment 1 at 0xA000; unsure for 9.4.x): which
    /// shader engine, array and instance later register accesses reach.
    pub(super) const GRBM_GFX_INDEX: u32 = 0xC200;
}

/// COMPUTE_DISPATCH_INITIATOR bits.
mod initiator {
    pub(super) const COMPUTE_SHADER_EN: u32 = 1 << 0;
    pub(super) const FORCE_START_AT_000: u32 = 1 << 2;
    pub(super) const USE_THREAD_DIMENSIONS: u32 = 1 << 5;
    /// GFX10+ (gc_11_0_0_sh_mask.h: COMPUTE_DISPATCH_INITIATOR__CS_W32_EN__SHIFT 0xf; tinygrad's
    /// RDNA3 PM4 experiments write `CS_W32_EN = 1 << 15` too): the dispatch runs in wave32;
    /// clear, in wave64. tinygrad's `exec` sets it from the descriptor's
    /// ENABLE_WAVEFRONT_SIZE32 on every non-GFX9 target. GFX9 has no such field: the model
    /// ignores bit 15 there.
    pub(super) const CS_W32_EN: u32 = 1 << 15;
}

/// Where `target` keeps COMPUTE_PGM_RSRC3.
fn pgm_rsrc3(target: GfxTarget) -> u32 {
    if target.is_gfx9() {
        reg::PGM_RSRC3
    } else {
        reg::PGM_RSRC3_GFX11
    }
}

/// Whether `address` is an SH register the model accepts on `target`.
fn modelled_sh(address: u32, target: GfxTarget) -> bool {
    let in_range = |first: u32, last: u32| (first..=last).contains(&address);
    in_range(reg::START_X, reg::NUM_THREAD_X + 2)
        || [
            reg::PIPELINESTAT_ENABLE,
            reg::PERFCOUNT_ENABLE,
            reg::PGM_LO,
            reg::PGM_HI,
            reg::DISPATCH_PKT_ADDR_LO,
            reg::DISPATCH_PKT_ADDR_HI,
            reg::DISPATCH_SCRATCH_BASE_LO,
            reg::DISPATCH_SCRATCH_BASE_HI,
            reg::PGM_RSRC1,
            reg::PGM_RSRC2,
            reg::RESOURCE_LIMITS,
            reg::STATIC_THREAD_MGMT_SE0,
            reg::STATIC_THREAD_MGMT_SE1,
            reg::TMPRING_SIZE,
            reg::STATIC_THREAD_MGMT_SE2,
            reg::STATIC_THREAD_MGMT_SE3,
            reg::THREAD_TRACE_ENABLE,
            pgm_rsrc3(target),
        ]
        .contains(&address)
        || in_range(reg::RESTART_X, reg::RESTART_Z)
        || in_range(reg::USER_DATA_0, reg::USER_DATA_15)
}

/// One queue's compute registers.
#[derive(Clone, Debug)]
pub(crate) struct ComputeRegisters {
    /// The GPU's ISA: where COMPUTE_PGM_RSRC3 is, and whether CS_W32_EN exists.
    target: GfxTarget,
    /// Values from `reg::FIRST` to `reg::USER_DATA_15`.
    sh: [u32; (reg::USER_DATA_15 - reg::FIRST + 1) as usize],
    grbm_gfx_index: u32,
}

impl ComputeRegisters {
    /// The registers of a queue on a GPU of `target`, at their reset values.
    pub(crate) fn new(target: GfxTarget) -> Self {
        let mut registers = Self {
            target,
            sh: [0; (reg::USER_DATA_15 - reg::FIRST + 1) as usize],
            // Broadcast to every SE, SH and instance (the reset value).
            grbm_gfx_index: 0xE000_0000,
        };
        // A workgroup of one work-item until the stream says otherwise.
        for d in 0..3 {
            registers.sh[(reg::NUM_THREAD_X - reg::FIRST + d) as usize] = 1;
        }
        registers
    }

    fn get(&self, address: u32) -> u32 {
        self.sh[(address - reg::FIRST) as usize]
    }

    /// Write `values` to consecutive registers from `offset` in `space`; a register the model
    /// does not know halts the queue before any of them is written.
    pub(crate) fn set(
        &mut self,
        space: RegisterSpace,
        offset: u32,
        values: &[u32],
    ) -> Result<(), QueueError> {
        let first = match space {
            RegisterSpace::Sh => SH_REG_START + offset,
            RegisterSpace::Uconfig => UCONFIG_REG_START + offset,
        };
        let addresses = (0..values.len() as u32).map(|i| first + i);
        match space {
            RegisterSpace::Sh if addresses.clone().all(|a| modelled_sh(a, self.target)) => {
                for (address, &value) in addresses.zip(values) {
                    self.sh[(address - reg::FIRST) as usize] = value;
                }
                Ok(())
            }
            RegisterSpace::Uconfig if first == reg::GRBM_GFX_INDEX && values.len() == 1 => {
                // No register the model keeps is per SE or instance: the selection changes
                // nothing it does.
                self.grbm_gfx_index = values[0];
                Ok(())
            }
            _ => {
                tracing::warn!(
                    register = format_args!("{first:#x}"),
                    count = values.len(),
                    "PM4 register write to a register the simulator does not model"
                );
                Err(QueueError::UnsupportedVendorPacket)
            }
        }
    }

    /// The dispatch `DISPATCH_DIRECT` launches with `dimensions` and `initiator_value`, or
    /// `None` when COMPUTE_SHADER_EN is clear (nothing runs).
    ///
    /// The grid: with USE_THREAD_DIMENSIONS the dimensions count work-items (the last
    /// workgroup of a dimension may be partial), without it they count workgroups of
    /// COMPUTE_NUM_THREAD_* (NUM_THREAD_FULL, bits 15:0) work-items. Workgroup ids start at
    /// 0 when FORCE_START_AT_000 is set or COMPUTE_START_* are 0; a dispatch that starts
    /// elsewhere is not modelled and halts the queue. On GFX11, CS_W32_EN picks wave32.
    pub(crate) fn dispatch(
        &self,
        dimensions: [u32; 3],
        initiator_value: u32,
        lds_bytes_per_workgroup: u32,
    ) -> Result<Option<RegisterDispatch>, QueueError> {
        let target = self.target;
        if initiator_value & initiator::COMPUTE_SHADER_EN == 0 {
            return Ok(None);
        }
        let start = [0, 1, 2].map(|d| self.get(reg::START_X + d));
        if initiator_value & initiator::FORCE_START_AT_000 == 0 && start != [0; 3] {
            tracing::warn!(?start, "PM4 dispatch from a non-zero COMPUTE_START_*");
            return Err(QueueError::UnsupportedVendorPacket);
        }
        let workgroup = [0, 1, 2].map(|d| self.get(reg::NUM_THREAD_X + d) & 0xFFFF);
        let grid = if initiator_value & initiator::USE_THREAD_DIMENSIONS != 0 {
            dimensions
        } else {
            let mut grid = [0u32; 3];
            for ((g, &count), &size) in grid.iter_mut().zip(&dimensions).zip(&workgroup) {
                *g = count
                    .checked_mul(size)
                    .ok_or(QueueError::InvalidDimensions)?;
            }
            grid
        };
        let pair = |lo: u32, hi: u32| u64::from(self.get(lo)) | u64::from(self.get(hi)) << 32;
        let mut user_data = [0u32; 16];
        for (i, value) in user_data.iter_mut().enumerate() {
            *value = self.get(reg::USER_DATA_0 + i as u32);
        }
        Ok(Some(RegisterDispatch {
            entry: pair(reg::PGM_LO, reg::PGM_HI) << 8,
            rsrc1: self.get(reg::PGM_RSRC1),
            rsrc2: self.get(reg::PGM_RSRC2),
            rsrc3: self.get(pgm_rsrc3(target)),
            user_data,
            workgroup,
            grid,
            tmpring_size: self.get(reg::TMPRING_SIZE),
            scratch_base: pair(reg::DISPATCH_SCRATCH_BASE_LO, reg::DISPATCH_SCRATCH_BASE_HI) << 8,
            wave32: !target.is_gfx9() && initiator_value & initiator::CS_W32_EN != 0,
            target,
            lds_bytes_per_workgroup,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_persist_and_build_the_dispatch() {
        let mut r = ComputeRegisters::new(GfxTarget::Gfx90a);
        // tinygrad's order: PGM_LO/HI, RSRC1/2, USER_DATA_0.., START_X.. with NUM_THREAD_*.
        r.set(
            RegisterSpace::Sh,
            reg::PGM_LO - SH_REG_START,
            &[0x1234_5678, 0x7F],
        )
        .unwrap();
        r.set(
            RegisterSpace::Sh,
            reg::PGM_RSRC1 - SH_REG_START,
            &[0xAF, 6 << 1 | 1 << 7],
        )
        .unwrap();
        r.set(
            RegisterSpace::Sh,
            reg::USER_DATA_0 - SH_REG_START,
            &[1, 2, 3],
        )
        .unwrap();
        r.set(
            RegisterSpace::Sh,
            reg::START_X - SH_REG_START,
            &[0, 0, 0, 64, 2, 1, 0, 0],
        )
        .unwrap();
        let d = r.dispatch([3, 4, 1], 0b101, 65536).unwrap().unwrap();
        assert_eq!(d.entry, 0x7F_1234_5678 << 8);
        assert_eq!((d.rsrc1, d.rsrc2), (0xAF, 6 << 1 | 1 << 7));
        assert_eq!(&d.user_data[..4], &[1, 2, 3, 0]);
        assert_eq!(d.workgroup, [64, 2, 1]);
        assert_eq!(d.grid, [192, 8, 1]);
        // USE_THREAD_DIMENSIONS: the dimensions are work-items.
        let d = r.dispatch([100, 2, 1], 0b10_0001, 65536).unwrap().unwrap();
        assert_eq!(d.grid, [100, 2, 1]);
        // COMPUTE_SHADER_EN clear: nothing runs.
        assert_eq!(r.dispatch([1, 1, 1], 0, 65536), Ok(None));
    }

    #[test]
    fn unmodelled_registers_and_start_offsets_halt() {
        let mut r = ComputeRegisters::new(GfxTarget::Gfx90a);
        // COMPUTE_VMID (0x2E14) is the kernel's, and graphics SH registers are not modelled;
        // a run that reaches one writes nothing.
        assert_eq!(
            r.set(RegisterSpace::Sh, reg::PGM_RSRC2 - SH_REG_START, &[5, 6]),
            Err(QueueError::UnsupportedVendorPacket)
        );
        assert_eq!(r.get(reg::PGM_RSRC2), 0);
        assert!(r.set(RegisterSpace::Sh, 0, &[1]).is_err());
        assert!(r.set(RegisterSpace::Uconfig, 0x200, &[0xE000_0000]).is_ok());
        assert!(r.set(RegisterSpace::Uconfig, 0x201, &[0]).is_err());
        r.set(RegisterSpace::Sh, reg::START_X - SH_REG_START, &[1])
            .unwrap();
        assert_eq!(
            r.dispatch([1, 1, 1], 1, 65536),
            Err(QueueError::UnsupportedVendorPacket)
        );
        assert!(r.dispatch([1, 1, 1], 0b101, 65536).is_ok());
    }

    #[test]
    fn gfx11_keeps_rsrc3_at_its_own_address_and_reads_cs_w32_en() {
        let mut r = ComputeRegisters::new(GfxTarget::Gfx1100);
        r.set(RegisterSpace::Sh, reg::PGM_RSRC3_GFX11 - SH_REG_START, &[7])
            .unwrap();
        // GFX9's RSRC3 address is not a register the model knows on GFX11.
        assert_eq!(
            r.set(RegisterSpace::Sh, reg::PGM_RSRC3 - SH_REG_START, &[7]),
            Err(QueueError::UnsupportedVendorPacket)
        );
        let wave32 = r
            .dispatch([1, 1, 1], 0b101 | initiator::CS_W32_EN, 65536)
            .unwrap()
            .unwrap();
        assert!(wave32.wave32);
        assert_eq!(wave32.rsrc3, 7);
        let wave64 = r.dispatch([1, 1, 1], 0b101, 65536).unwrap().unwrap();
        assert!(!wave64.wave32);
        // On GFX9, bit 15 is no wave-size switch, and RSRC3 is where gfx90a keeps it.
        let mut r = ComputeRegisters::new(GfxTarget::Gfx90a);
        assert!(
            r.set(RegisterSpace::Sh, reg::PGM_RSRC3_GFX11 - SH_REG_START, &[7])
                .is_err()
        );
        let d = r
            .dispatch([1, 1, 1], 0b101 | initiator::CS_W32_EN, 65536)
            .unwrap()
            .unwrap();
        assert!(!d.wave32);
    }
}
