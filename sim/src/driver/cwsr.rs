//! The per-queue buffer sizes a node demands at CREATE_QUEUE: the compute-wave save/restore
//! (CWSR) area, its control stack, the debugger area and the end-of-pipe buffer.
//!
//! These are `kfd_queue_ctx_save_restore_size` of `kfd_queue.c` (kfd.md §5.4); libhsakmt
//! computes the same numbers, and newer kernels print `cwsr_size`/`ctl_stack_size` in the
//! topology so userspace need not.

const PAGE: u32 = 4096;
const SGPR_SIZE_PER_CU: u32 = 0x4000;
const LDS_SIZE_PER_CU: u32 = 0x10000;
const HWREG_SIZE_PER_CU: u32 = 0x1000;
const DEBUGGER_BYTES_ALIGN: u32 = 64;
const DEBUGGER_BYTES_PER_WAVE: u32 = 32;
const CONTEXT_SAVE_AREA_HEADER_BYTES: u32 = 40;

/// The node's queue buffer sizes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueBufferSizes {
    /// `ctl_stack_size` CREATE_QUEUE must pass.
    pub ctl_stack_size: u32,
    /// `cwsr_size`: the minimum `ctx_save_restore_size` per XCC.
    pub cwsr_size: u32,
    /// Debugger memory per XCC after the save area.
    pub debug_memory_size: u32,
    /// Size the EOP buffer must have when one is passed.
    pub eop_buffer_size: u32,
    /// XCCs of the node.
    pub xccs: u32,
}

impl QueueBufferSizes {
    /// The size of the one GPU mapping CREATE_QUEUE requires at `ctx_save_restore_address`
    /// for a queue declaring `ctx_save_restore_size`: `ALIGN((size + debug) × XCCs, PAGE)`,
    /// computed in 32 bits as the kernel does (`None` if it overflows).
    pub fn cwsr_mapping_size(&self, ctx_save_restore_size: u32) -> Option<u32> {
        ctx_save_restore_size
            .checked_add(self.debug_memory_size)?
            .checked_mul(self.xccs)?
            .checked_next_multiple_of(PAGE)
    }

    /// The CWSR area a driver allocates for one queue of this node.
    pub fn cwsr_allocation(&self) -> u32 {
        self.cwsr_mapping_size(self.cwsr_size).unwrap_or(u32::MAX)
    }
}

/// The topology inputs of the formula.
#[derive(Clone, Copy, Debug)]
pub struct NodeShape {
    /// `gfx_target_version`.
    pub gfx_target_version: u32,
    /// SIMDs of the node (all XCCs).
    pub simd_count: u32,
    /// SIMDs per CU.
    pub simd_per_cu: u32,
    /// XCCs.
    pub xccs: u32,
    /// Shader arrays of one XCC.
    pub array_count_per_xcc: u32,
    /// Shader arrays per engine.
    pub simd_arrays_per_engine: u32,
    /// LDS per CU, KiB.
    pub lds_size_in_kb: u32,
}

fn vgpr_size_per_cu(gfxv: u32) -> u32 {
    match gfxv {
        90402 | 90010 | 90008 | 90500 => 0x80000,
        110000 | 110001 | 120000 | 120001 => 0x60000,
        _ => 0x40000,
    }
}

fn align_page(value: u32) -> u32 {
    value.next_multiple_of(PAGE)
}

/// `kfd_queue_ctx_save_restore_size` (no CWSR, all zero, below GFX8.0.1).
pub fn queue_buffer_sizes(shape: &NodeShape) -> QueueBufferSizes {
    let gfxv = shape.gfx_target_version;
    let xccs = shape.xccs.max(1);
    if gfxv < 80001 {
        return QueueBufferSizes {
            xccs,
            ..QueueBufferSizes::default()
        };
    }
    let cu_num = shape.simd_count / shape.simd_per_cu.max(1) / xccs;
    let wave_num = if gfxv < 100100 {
        (cu_num * 40).min(shape.array_count_per_xcc / shape.simd_arrays_per_engine.max(1) * 512)
    } else {
        cu_num * 32
    };
    let lds = if gfxv == 90500 {
        shape.lds_size_in_kb << 10
    } else {
        LDS_SIZE_PER_CU
    };
    let per_cu = vgpr_size_per_cu(gfxv) + SGPR_SIZE_PER_CU + lds + HWREG_SIZE_PER_CU;
    let wg_data_size = align_page(cu_num * per_cu);
    let bytes_per_wave = if gfxv >= 100100 { 12 } else { 8 };
    let mut ctl_stack_size =
        align_page(CONTEXT_SAVE_AREA_HEADER_BYTES + wave_num * bytes_per_wave + 8);
    if gfxv / 10000 * 10000 == 100000 {
        ctl_stack_size = ctl_stack_size.min(0x7000);
    }
    let eop_buffer_size = if gfxv == 80002 { 0x8000 } else { 4096 };
    QueueBufferSizes {
        ctl_stack_size,
        cwsr_size: ctl_stack_size + wg_data_size,
        debug_memory_size: (wave_num * DEBUGGER_BYTES_PER_WAVE)
            .next_multiple_of(DEBUGGER_BYTES_ALIGN),
        eop_buffer_size,
        xccs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_values_of_the_fact_sheet() {
        // MI100 (gfx908, 120 CUs): ctl 0x9000, cwsr 0x45E1000, debug 0x20000, alloc 0x4601000.
        let mi100 = queue_buffer_sizes(&NodeShape {
            gfx_target_version: 90008,
            simd_count: 480,
            simd_per_cu: 4,
            xccs: 1,
            array_count_per_xcc: 8,
            simd_arrays_per_engine: 1,
            lds_size_in_kb: 64,
        });
        assert_eq!(mi100.ctl_stack_size, 0x9000);
        assert_eq!(mi100.cwsr_size, 0x45E_1000);
        assert_eq!(mi100.debug_memory_size, 0x20000);
        assert_eq!(mi100.cwsr_allocation(), 0x460_1000);
        // gfx1100 (96 CUs, wave32): ctl 0xA000, cwsr 0x2BEA000, debug 0x18000, alloc 0x2C02000.
        let navi31 = queue_buffer_sizes(&NodeShape {
            gfx_target_version: 110000,
            simd_count: 192,
            simd_per_cu: 2,
            xccs: 1,
            array_count_per_xcc: 12,
            simd_arrays_per_engine: 2,
            lds_size_in_kb: 64,
        });
        assert_eq!(navi31.ctl_stack_size, 0xA000);
        assert_eq!(navi31.cwsr_size, 0x2BE_A000);
        assert_eq!(navi31.debug_memory_size, 0x18000);
        assert_eq!(navi31.cwsr_allocation(), 0x2C0_2000);
    }

    #[test]
    fn multi_xcc_parts_size_each_xcc() {
        // MI300X: 38 CUs per XCC, 4 arrays per XCC: 1520 waves per XCC.
        let mi300x = queue_buffer_sizes(&NodeShape {
            gfx_target_version: 90402,
            simd_count: 1216,
            simd_per_cu: 4,
            xccs: 8,
            array_count_per_xcc: 4,
            simd_arrays_per_engine: 1,
            lds_size_in_kb: 64,
        });
        assert_eq!(mi300x.ctl_stack_size, 0x3000);
        assert_eq!(mi300x.cwsr_size, 0x3000 + (38 * 0x95000));
        assert_eq!(
            mi300x.debug_memory_size,
            (1520 * 32u32).next_multiple_of(64)
        );
        assert_eq!(
            mi300x.cwsr_allocation(),
            ((mi300x.cwsr_size + mi300x.debug_memory_size) * 8).next_multiple_of(4096)
        );
        assert_eq!(mi300x.eop_buffer_size, 4096);
    }
}
