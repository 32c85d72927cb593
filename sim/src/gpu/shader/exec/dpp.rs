//! Data-parallel primitives: the lane permutation DPP applies to source 0 of a VALU
//! instruction, and which lanes the instruction then writes.
//!
//! - DPP16 (GFX9 and GFX10+): a control code per row of 16 lanes (quad_perm, row shifts and
//!   rotates, mirrors) with row and bank write masks. GFX9 adds wave shifts and rotates and
//!   row broadcasts (0x130–0x143), gfx90a `row_newbcast` (0x150–0x15f); GFX10+ dropped the
//!   wave-wide ones and has `row_share` (0x150–0x15f, the same lane choice as
//!   `row_newbcast`: lane n of the row) and `row_xmask` (0x160–0x16f: lane `r ^ n` of the
//!   row). The GFX11 lowering refuses the GFX9-only codes, so they only reach here from GFX9
//!   code. A lane whose source is out of its row, or (without FI) outside EXEC, is invalid:
//!   with BOUND_CTRL it reads 0, otherwise it is not written.
//! - DPP8 (GFX10+): each lane reads any lane of its group of eight; a source lane outside EXEC
//!   reads 0 unless FI is set. Every EXEC lane is written (DPP8 has no masks).
//!
//! Wave32 has rows 0 and 1 only: the upper rows' lanes are never in EXEC, so they are never
//! written. The FI rules are AMD's RDNA3 ISA guide's ("fetch inactive"); no hardware was at
//! hand to check the corner of a DPP16 source that is both out of its row and inactive (out
//! of row wins here: FI does not make an out-of-row lane valid).

use crate::gpu::shader::isa::{Dpp8, DppControl, Extra};
use crate::gpu::shader::wave::{LANES, Lanes};

/// Lanes whose row and bank are enabled by a DPP control.
pub fn dpp_row_bank_mask(d: DppControl) -> u64 {
    let mut m = 0u64;
    for l in 0..LANES {
        let row = l / 16;
        let bank = (l % 16) / 4;
        if d.row_mask >> row & 1 != 0 && d.bank_mask >> bank & 1 != 0 {
            m |= 1 << l;
        }
    }
    m
}

/// The source lane each lane reads under DPP control `ctrl`, or `None` when out of range.
fn dpp_source(ctrl: u16, l: usize) -> Option<usize> {
    let c = u32::from(ctrl);
    let row = l & !15;
    let r = l & 15;
    match c {
        0x000..=0x0ff => Some((l & !3) | ((c >> (2 * (l & 3))) & 3) as usize),
        0x101..=0x10f => {
            let n = (c & 0xf) as usize;
            (r + n < 16).then_some(l + n)
        }
        0x111..=0x11f => {
            let n = (c & 0xf) as usize;
            (r >= n).then(|| l - n)
        }
        0x121..=0x12f => {
            let n = (c & 0xf) as usize;
            Some(row + (r + 16 - n) % 16)
        }
        0x130 => (l < 63).then_some(l + 1),
        0x134 => Some((l + 1) % 64),
        0x138 => (l > 0).then(|| l - 1),
        0x13c => Some((l + 63) % 64),
        0x140 => Some(row + 15 - r),
        0x141 => Some((l & !7) + 7 - (l & 7)),
        0x142 => (l >= 16).then(|| (l / 16 - 1) * 16 + 15),
        0x143 => (l >= 32).then_some(31),
        0x150..=0x15f => Some(row + (c & 0xf) as usize),
        0x160..=0x16f => Some(row + (r ^ (c & 0xf) as usize)),
        _ => None,
    }
}

/// Permute `src` by a DPP16 control. Returns the permuted lanes and the mask of lanes whose
/// source was valid (in range, and active or fetched with FI); with BOUND_CTRL, invalid lanes
/// read 0 and count as valid, otherwise their write is disabled.
pub fn dpp(src: &Lanes, d: DppControl, exec: u64) -> (Lanes, u64) {
    let mut out = [0u32; LANES];
    let mut valid = 0u64;
    for (l, o) in out.iter_mut().enumerate() {
        match dpp_source(d.ctrl, l) {
            Some(s) if d.fetch_inactive || exec >> s & 1 != 0 => {
                *o = src[s];
                valid |= 1 << l;
            }
            _ => {
                if d.bound_ctrl {
                    *o = 0;
                    valid |= 1 << l;
                }
            }
        }
    }
    (out, valid)
}

/// Permute `src` by a DPP8 selection: every lane is valid; a source lane outside EXEC reads 0
/// unless FI.
pub fn dpp8(src: &Lanes, d: Dpp8, exec: u64) -> Lanes {
    std::array::from_fn(|l| {
        let s = (l & !7) | (d.selects >> (3 * (l & 7)) & 7) as usize;
        if d.fetch_inactive || exec >> s & 1 != 0 {
            src[s]
        } else {
            0
        }
    })
}

/// Source 0 as an instruction's DPP form permutes it, and the mask of valid lanes (all for
/// DPP8 and for an instruction without DPP).
pub fn dpp_permute(src: &Lanes, extra: Extra, exec: u64) -> (Lanes, u64) {
    match extra {
        Extra::Dpp(d) => dpp(src, d, exec),
        Extra::Dpp8(d) => (dpp8(src, d, exec), u64::MAX),
        _ => (*src, u64::MAX),
    }
}

/// The lanes a VALU instruction writes: EXEC, narrowed for DPP16 by the row and bank masks
/// and the invalid source lanes.
pub fn dpp_write_mask(extra: Extra, exec: u64) -> u64 {
    match extra {
        Extra::Dpp(d) => {
            let (_, valid) = dpp(&[0; LANES], d, exec);
            exec & valid & dpp_row_bank_mask(d)
        }
        _ => exec,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iota() -> Lanes {
        std::array::from_fn(|l| l as u32 + 100)
    }

    #[test]
    fn dpp8_picks_within_groups_of_eight_and_zeroes_inactive_sources_without_fi() {
        // dpp8:[7,6,5,4,3,2,1,0]
        let selects = (0..8u32).fold(0, |acc, l| acc | (7 - l) << (3 * l));
        let exec = !(1u64 << 14);
        let out = dpp8(
            &iota(),
            Dpp8 {
                selects,
                fetch_inactive: false,
            },
            exec,
        );
        assert_eq!(out[0], 107);
        assert_eq!(out[8], 115);
        assert_eq!(out[9], 0, "lane 14 is inactive");
        let out = dpp8(
            &iota(),
            Dpp8 {
                selects,
                fetch_inactive: true,
            },
            exec,
        );
        assert_eq!(out[9], 114);
    }

    #[test]
    fn row_share_and_row_xmask_stay_in_their_row() {
        let share = DppControl {
            ctrl: 0x153,
            row_mask: 0xf,
            bank_mask: 0xf,
            ..Default::default()
        };
        let (out, valid) = dpp(&iota(), share, u64::MAX);
        assert_eq!((out[0], out[17], out[63]), (103, 119, 151));
        assert_eq!(valid, u64::MAX);
        let xmask = DppControl {
            ctrl: 0x165,
            ..share
        };
        let (out, _) = dpp(&iota(), xmask, u64::MAX);
        assert_eq!((out[0], out[16 + 2]), (105, 116 + 7));
    }

    #[test]
    fn fi_reads_inactive_lanes_but_not_lanes_beyond_the_row() {
        // row_shr:1 with lane 0 inactive.
        let d = DppControl {
            ctrl: 0x111,
            row_mask: 0xf,
            bank_mask: 0xf,
            ..Default::default()
        };
        let exec = !1u64;
        let (_, valid) = dpp(&iota(), d, exec);
        assert_eq!(
            valid & 0b11,
            0,
            "lane 0 is out of its row; lane 1 reads inactive lane 0"
        );
        let (out, valid) = dpp(
            &iota(),
            DppControl {
                fetch_inactive: true,
                ..d
            },
            exec,
        );
        assert_eq!((out[1], valid & 0b11), (100, 0b10));
    }
}
