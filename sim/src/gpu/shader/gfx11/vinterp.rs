//! VINTERP (`v_interp_p10_*`, `v_interp_p2_*`): parameter interpolation in pixel shaders, as
//! VALU arithmetic on VGPRs. AMD's RDNA3 ISA guide (§ parameter interpolation) defines them
//! as one fused multiply-add whose source 0 (and, for P10, source 2) is read through a fixed
//! DPP8 pattern from a lane of the pixel quad:
//!
//! - `v_interp_p10_f32 d, p10, i, p0`: `d = fma(p10[quad + 1], i, p0[quad + 0])`;
//! - `v_interp_p2_f32 d, p20, j, t`: `d = fma(p20[quad + 2], j, t)`;
//! - the `_f16_f32` forms take the quad-lane sources as f16 halves (op_sel bits 0 and 2 pick
//!   the half), P10 gives an f32 and P2 an f16 into the half op_sel bit 3 picks, the other
//!   half kept: GFX9's `v_fma_mix*` operands, with the guide's rounding (`D0.f16 =
//!   16'F(fma(...))`: to f32, then to f16; [`Extra::Interp`]).
//!
//! In a compute dispatch nothing about them changes (they read only VGPRs; nothing fills the
//! VGPRs with attribute data, which LDSDIR's `lds_param_load` would do in a pixel wave and
//! which the decoder does not decode). Lowered here to: `v_mov_b32` of each quad-lane source
//! with DPP8 into a spare row, then `v_fma_f32` / `v_fma_mix*` with the instruction's
//! neg/clamp. The quad-lane reads fetch inactive lanes too (DPP8 FI): the guide says nothing
//! of inactive quad lanes, and in a pixel quad the helper lanes are active anyway.
//! `wait_exp` (wait for exports) has nothing to wait for here. The `_rtz_` forms (f16 only)
//! round toward zero whatever the MODE register says.

use super::isa::{self as g11, Encoding as E11};
use crate::gpu::shader::decode::DecodeError;
use crate::gpu::shader::isa::{Dpp8, Encoding, Extra, Inst, Op, Operand};

/// Vector rows no GFX11 instruction names (GFX9's last AGPRs; GFX11 has none) where the
/// quad-lane sources are gathered. 511 is also VOPD's; the two never overlap in time.
const QUAD_SOURCE: [u16; 2] = [511, 510];

/// DPP8 selects reading lane `k` of each quad (lanes 0–3 read `k`, 4–7 read `4 + k`).
fn quad_lane(k: u32) -> u32 {
    (0..8).fold(0, |acc, l| acc | ((l & 4) + k) << (3 * l))
}

/// `v_mov_b32 row, src` reading lane `k` of each quad.
fn gather(row: u16, src: Operand, k: u32, dwords: u8) -> Inst {
    let mut mov = Inst::new(Op::VMovB32, Encoding::Dpp, dwords);
    mov.dst = Operand::Vgpr(row);
    mov.src[0] = src;
    mov.extra = Extra::Dpp8(Dpp8 {
        selects: quad_lane(k),
        fetch_inactive: true,
    });
    mov
}

/// Lower a VINTERP instruction: the instructions to run in order.
pub fn lower_vinterp(g: &g11::Inst) -> Result<Vec<Inst>, DecodeError> {
    debug_assert_eq!(g.enc, E11::Vinterp);
    let name = g.op.name();
    let p10 = name.starts_with("v_interp_p10_");
    let f16 = name.contains("_f16_");
    let [a, b, c] = g.src;
    let mut seq = vec![gather(QUAD_SOURCE[0], a, if p10 { 1 } else { 2 }, g.dwords)];
    let c = if p10 {
        seq.push(gather(QUAD_SOURCE[1], c, 0, g.dwords));
        Operand::Vgpr(QUAD_SOURCE[1])
    } else {
        c
    };
    let op_sel = g.mods.op_sel;
    let (op, enc) = match (f16, p10) {
        (false, _) => (Op::VFmaF32, Encoding::Vop3),
        (true, true) => (Op::VFmaMixF32, Encoding::Vop3p),
        (true, false) if op_sel & 8 != 0 => (Op::VFmaMixhiF16, Encoding::Vop3p),
        (true, false) => (Op::VFmaMixloF16, Encoding::Vop3p),
    };
    let mut fma = Inst::new(op, enc, g.dwords);
    fma.dst = g.dst;
    fma.src = [Operand::Vgpr(QUAD_SOURCE[0]), b, c];
    fma.mods.neg = g.mods.neg;
    fma.mods.clamp = g.mods.clamp;
    if f16 {
        // v_fma_mix: op_sel_hi marks the f16 sources, op_sel picks their halves.
        let halves = if p10 { 0b101 } else { 0b001 };
        fma.mods.op_sel_hi = halves;
        fma.mods.op_sel = op_sel & halves;
        fma.extra = Extra::Interp {
            rtz: name.contains("_rtz_"),
        };
    }
    seq.push(fma);
    Ok(seq)
}
