//! GFX11's DPP forms in the interpreter's terms: DPP16 keeps its control word (with FI), DPP8
//! becomes [`Extra::Dpp8`]. The GFX9-only DPP16 controls (wave shifts and rotates, row
//! broadcasts: 0x130–0x143) do not exist on GFX10+; an instruction naming one is refused.
//!
//! BOUND_CTRL means the same bit on both generations (1: an invalid source lane reads 0);
//! only the assembly differs: for gfx1100 llvm-mc-22 encodes `bound_ctrl:1` as the bit and
//! `bound_ctrl:0` as no bit, while for gfx90a it encodes either spelling as the bit (checked
//! with `-show-encoding`).

use crate::gpu::shader::decode::DecodeError;
use crate::gpu::shader::gfx11::isa::Dpp;
use crate::gpu::shader::isa::{self as gfx9, Encoding, Extra, Inst};

/// Whether a DPP16 control code exists on GFX10 and later: quad_perm, row shifts, rotates
/// and mirrors, `row_share` and `row_xmask` (LLVM's `isValidDPPCtrl` for GFX10+).
pub fn dpp16_ctrl_valid(ctrl: u16) -> bool {
    matches!(
        ctrl,
        0x000..=0x0ff
            | 0x101..=0x10f
            | 0x111..=0x11f
            | 0x121..=0x12f
            | 0x140
            | 0x141
            | 0x150..=0x16f
    )
}

/// Put a GFX11 DPP form on the lowered VALU instruction `inst` (`name` for errors). VOP1,
/// VOP2 and VOPC become the DPP encoding; a VOP3 keeps its own (its modifiers stay VOP3's).
pub fn lower_dpp(dpp: Dpp, inst: &mut Inst, name: &'static str) -> Result<(), DecodeError> {
    inst.extra = match dpp {
        Dpp::Dpp16 {
            control,
            fetch_inactive,
        } => {
            if !dpp16_ctrl_valid(control.ctrl) {
                return Err(DecodeError::NotSimulated(name));
            }
            Extra::Dpp(gfx9::DppControl {
                fetch_inactive,
                ..control
            })
        }
        Dpp::Dpp8 {
            selects,
            fetch_inactive,
        } => Extra::Dpp8(gfx9::Dpp8 {
            selects: selects & 0xff_ffff,
            fetch_inactive,
        }),
    };
    if inst.enc != Encoding::Vop3 {
        inst.enc = Encoding::Dpp;
    }
    Ok(())
}
