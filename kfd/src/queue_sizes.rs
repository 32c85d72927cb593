//! The sizes of the buffers a compute queue needs, as the kernel checks them at CREATE_QUEUE:
//! the end-of-pipe buffer and the context save/restore (CWSR) area with its control stack and
//! debugger area (kfd.md §5.2–§5.4; the kernel's `kfd_queue_ctx_save_restore_size`, which
//! libhsakmt computes the same way).
//!
//! Newer kernels print the exact `cwsr_size` and `ctl_stack_size` they will demand in the node
//! properties; where present those win over the formula.

use crate::topology::NodeProperties;

/// Size of the EOP buffer on GFX8 and later, except Tonga.
pub const EOP_BUFFER_SIZE: u32 = 4096;
/// Size of the EOP buffer on Tonga (gfx802).
pub const EOP_BUFFER_SIZE_TONGA: u32 = 0x8000;
/// Size of the CWSR header libhsakmt writes at the start of each per-XCC area.
pub const CWSR_HEADER_SIZE: u32 = 40;

const SGPR_SIZE_PER_CU: u64 = 0x4000;
const LDS_SIZE_PER_CU: u64 = 0x10000;
const HWREG_SIZE_PER_CU: u64 = 0x1000;
const CTL_STACK_CAP_GFX10: u64 = 0x7000;
const DEBUGGER_BYTES_PER_WAVE: u64 = 32;
const DEBUGGER_BYTES_ALIGN: u64 = 64;

/// The EOP buffer size of a node with this `gfx_target_version` (`None` before GFX8, where the
/// kernel takes no user EOP buffer).
pub const fn eop_buffer_size(gfx_target_version: u32) -> Option<u32> {
    match gfx_target_version {
        80002 => Some(EOP_BUFFER_SIZE_TONGA),
        v if v >= 80000 => Some(EOP_BUFFER_SIZE),
        _ => None,
    }
}

/// The context save/restore sizes of one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CwsrSizes {
    /// `ctl_stack_size` for CREATE_QUEUE.
    pub ctl_stack_size: u32,
    /// `ctx_save_restore_size` for CREATE_QUEUE (the node's `cwsr_size`): control stack plus
    /// workgroup data, per XCC.
    pub ctx_save_restore_size: u32,
    /// Debugger area behind each XCC's save area.
    pub debug_memory_size: u32,
    /// XCCs: the area holds one save area plus debugger area per XCC.
    pub xcc_count: u32,
    /// Bytes of the whole CWSR allocation:
    /// `PAGE_ALIGN((ctx_save_restore_size + debug_memory_size) · xcc_count)`.
    pub total_size: u64,
}

/// Why a node's CWSR sizes cannot be computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CwsrSizeError {
    /// The kernel computes no CWSR area below GFX8.0.1.
    #[error("no context save area before gfx801")]
    NoCwsr,
    /// A property the formula divides by is 0, or a size overflows.
    #[error("node properties give no sane context save area size ({0})")]
    Degenerate(&'static str),
}

const fn align_up(value: u64, align: u64) -> u64 {
    value.div_ceil(align) * align
}

impl CwsrSizes {
    /// The sizes for `properties`, with the page size of the host (`PAGE_ALIGN`).
    pub fn for_node(properties: &NodeProperties, page_size: u64) -> Result<Self, CwsrSizeError> {
        let gfxv = properties.gfx_target_version;
        if gfxv < 80001 {
            return Err(CwsrSizeError::NoCwsr);
        }
        let xcc_count = properties.xcc_count();
        let cu_num = u64::from(
            properties
                .simd_count
                .checked_div(properties.simd_per_cu)
                .and_then(|cus| cus.checked_div(xcc_count))
                .filter(|&cus| cus != 0)
                .ok_or(CwsrSizeError::Degenerate(
                    "simd_count / simd_per_cu / num_xcc",
                ))?,
        );
        let wave_num = if gfxv < 100100 {
            let arrays_per_xcc = properties.array_count / xcc_count;
            let by_arrays = u64::from(
                arrays_per_xcc
                    .checked_div(properties.simd_arrays_per_engine)
                    .ok_or(CwsrSizeError::Degenerate("simd_arrays_per_engine"))?,
            ) * 512;
            (cu_num * 40).min(by_arrays)
        } else {
            cu_num * 32
        };
        // kfd_get_vgpr_size_per_cu names these versions only (kfd.md's "904xx" is broader;
        // gfx940/gfx941 fall to the default there, unverified on hardware).
        let vgpr_size_per_cu: u64 = match gfxv {
            90008 | 90010 | 90402 | 90500 => 0x80000,
            110000 | 110001 | 120000 | 120001 => 0x60000,
            _ => 0x40000,
        };
        let lds_size_per_cu = if gfxv == 90500 {
            u64::from(properties.lds_size_in_kb) * 1024
        } else {
            LDS_SIZE_PER_CU
        };
        let wg_data_size = align_up(
            cu_num * (vgpr_size_per_cu + SGPR_SIZE_PER_CU + lds_size_per_cu + HWREG_SIZE_PER_CU),
            page_size,
        );
        let bytes_per_wave = if gfxv >= 100100 { 12 } else { 8 };
        let mut ctl_stack_size = align_up(
            u64::from(CWSR_HEADER_SIZE) + wave_num * bytes_per_wave + 8,
            page_size,
        );
        if (100100..110000).contains(&gfxv) {
            ctl_stack_size = ctl_stack_size.min(CTL_STACK_CAP_GFX10);
        }
        let debug_memory_size = align_up(wave_num * DEBUGGER_BYTES_PER_WAVE, DEBUGGER_BYTES_ALIGN);
        let computed = Self::from_parts(
            ctl_stack_size,
            ctl_stack_size + wg_data_size,
            debug_memory_size,
            xcc_count,
            page_size,
        )?;
        // Kernels that print the sizes demand exactly those.
        match (properties.ctl_stack_size, properties.cwsr_size) {
            (Some(ctl), Some(cwsr)) if ctl != 0 && cwsr != 0 => Self::from_parts(
                u64::from(ctl),
                u64::from(cwsr),
                debug_memory_size,
                xcc_count,
                page_size,
            ),
            _ => Ok(computed),
        }
    }

    fn from_parts(
        ctl_stack_size: u64,
        ctx_save_restore_size: u64,
        debug_memory_size: u64,
        xcc_count: u32,
        page_size: u64,
    ) -> Result<Self, CwsrSizeError> {
        let too_big = CwsrSizeError::Degenerate("sizes overflow 32 bits");
        let total_size = align_up(
            (ctx_save_restore_size + debug_memory_size) * u64::from(xcc_count),
            page_size,
        );
        Ok(Self {
            ctl_stack_size: u32::try_from(ctl_stack_size).map_err(|_| too_big)?,
            ctx_save_restore_size: u32::try_from(ctx_save_restore_size).map_err(|_| too_big)?,
            debug_memory_size: u32::try_from(debug_memory_size).map_err(|_| too_big)?,
            xcc_count,
            total_size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(
        gfxv: u32,
        simd_count: u32,
        simd_per_cu: u32,
        arrays: u32,
        per_engine: u32,
    ) -> NodeProperties {
        NodeProperties {
            gfx_target_version: gfxv,
            simd_count,
            simd_per_cu,
            array_count: arrays,
            simd_arrays_per_engine: per_engine,
            lds_size_in_kb: 64,
            num_xcc: Some(1),
            ..NodeProperties::default()
        }
    }

    #[test]
    fn mi100_matches_the_worked_values() {
        // kfd.md §5.4: gfx908 with 120 CUs.
        let sizes = CwsrSizes::for_node(&node(90008, 480, 4, 8, 1), 4096).unwrap();
        assert_eq!(sizes.ctl_stack_size, 0x9000);
        assert_eq!(sizes.ctx_save_restore_size, 0x45E_1000);
        assert_eq!(sizes.debug_memory_size, 0x2_0000);
        assert_eq!(sizes.total_size, 0x460_1000);
    }

    #[test]
    fn gfx1100_matches_the_worked_values() {
        // kfd.md §5.4: gfx1100 with 96 CUs (RX 7900 XTX).
        let sizes = CwsrSizes::for_node(&node(110000, 192, 2, 12, 2), 4096).unwrap();
        assert_eq!(sizes.ctl_stack_size, 0xA000);
        assert_eq!(sizes.ctx_save_restore_size, 0x2BE_A000);
        assert_eq!(sizes.debug_memory_size, 0x1_8000);
        assert_eq!(sizes.total_size, 0x2C0_2000);
    }

    #[test]
    fn multi_xcc_parts_multiply_the_area() {
        // MI300X: 304 CUs in 8 XCCs, 4 shader arrays per XCC.
        let mut mi300x = node(90402, 1216, 4, 32, 1);
        mi300x.num_xcc = Some(8);
        let sizes = CwsrSizes::for_node(&mi300x, 4096).unwrap();
        // 38 CUs per XCC: waves = min(38·40, 4·512) = 1520.
        assert_eq!(sizes.ctl_stack_size, 0x3000);
        assert_eq!(sizes.ctx_save_restore_size, 0x3000 + 38 * 0x9_5000);
        assert_eq!(sizes.debug_memory_size, 1520 * 32);
        assert_eq!(
            sizes.total_size,
            align_up(u64::from(sizes.ctx_save_restore_size + 1520 * 32) * 8, 4096)
        );
    }

    #[test]
    fn printed_sizes_win() {
        let mut props = node(90010, 416, 4, 8, 1);
        props.cwsr_size = Some(0x10_0000);
        props.ctl_stack_size = Some(0x2000);
        let sizes = CwsrSizes::for_node(&props, 4096).unwrap();
        assert_eq!(sizes.ctx_save_restore_size, 0x10_0000);
        assert_eq!(sizes.ctl_stack_size, 0x2000);
        // The debugger area is still the formula's.
        assert_eq!(sizes.debug_memory_size, 4096 * 32);
    }

    #[test]
    fn degenerate_nodes_are_errors_not_panics() {
        assert_eq!(
            CwsrSizes::for_node(&node(70000, 32, 4, 1, 1), 4096),
            Err(CwsrSizeError::NoCwsr)
        );
        assert!(matches!(
            CwsrSizes::for_node(&node(90010, 416, 0, 8, 1), 4096),
            Err(CwsrSizeError::Degenerate(_))
        ));
        assert!(matches!(
            CwsrSizes::for_node(&node(90010, 416, 4, 8, 0), 4096),
            Err(CwsrSizeError::Degenerate(_))
        ));
        assert!(matches!(
            CwsrSizes::for_node(&node(90010, 2, 4, 8, 1), 4096),
            Err(CwsrSizeError::Degenerate(_))
        ));
    }

    #[test]
    fn eop_sizes() {
        assert_eq!(eop_buffer_size(90010), Some(4096));
        assert_eq!(eop_buffer_size(80002), Some(0x8000));
        assert_eq!(eop_buffer_size(70002), None);
    }
}
