//! MIMG text: `image_* vdata, vaddr|[a0, a1, ...], srsrc[, ssamp]`, then the modifiers in
//! LLVM's order (`dmask dim unorm glc slc dlc r128 a16 tfe lwe d16`).

use std::fmt::Write;

use super::operand::sgpr;
use crate::gpu::shader::disasm::Operands;
use crate::gpu::shader::disasm::operand::range;
use crate::gpu::shader::gfx11::isa::Inst;
use crate::gpu::shader::isa::Operand;

/// The `dim:` names by the dim field.
const DIMS: [&str; 8] = [
    "SQ_RSRC_IMG_1D",
    "SQ_RSRC_IMG_2D",
    "SQ_RSRC_IMG_3D",
    "SQ_RSRC_IMG_CUBE",
    "SQ_RSRC_IMG_1D_ARRAY",
    "SQ_RSRC_IMG_2D_ARRAY",
    "SQ_RSRC_IMG_2D_MSAA",
    "SQ_RSRC_IMG_2D_MSAA_ARRAY",
];

/// Write an image instruction.
pub fn write(out: &mut String, inst: &Inst) {
    let Some(image) = inst.image else {
        return;
    };
    out.push_str(inst.op.name());
    if image.nsa {
        // LLVM's NSA asm string carries one more space before the operands.
        out.push(' ');
    }
    let mut ops = Operands::new(out);
    if let Operand::Vgpr(n) = inst.dst {
        range(ops.next(), "v", u32::from(n), u32::from(image.data_dwords));
    }
    let o = ops.next();
    if image.nsa {
        o.push('[');
        let n = u32::from(image.addr_dwords);
        for i in 0..n.min(5) {
            let count = if i == 4 { n - 4 } else { 1 };
            o.push_str(if i == 0 { "" } else { ", " });
            range(o, "v", u32::from(image.addr[i as usize]), count);
        }
        o.push(']');
    } else {
        range(
            o,
            "v",
            u32::from(image.addr[0]),
            u32::from(image.addr_dwords),
        );
    }
    if let Operand::Sgpr(n) = inst.mem.sbase {
        // LLVM prints eight registers whether or not r128 is set.
        sgpr(ops.next(), n, 8);
    }
    if let Some(s) = image.ssamp {
        sgpr(ops.next(), s, 4);
    }
    if image.dmask != 0 {
        let _ = write!(out, " dmask:0x{:x}", image.dmask);
    }
    let _ = write!(out, " dim:{}", DIMS[usize::from(image.dim & 7)]);
    for (set, name) in [
        (image.unorm, " unorm"),
        (inst.mem.glc, " glc"),
        (inst.mem.slc, " slc"),
        (inst.mem.dlc, " dlc"),
        (image.r128, " r128"),
        (image.a16, " a16"),
        (inst.mem.tfe, " tfe"),
        (image.lwe, " lwe"),
        (image.d16, " d16"),
    ] {
        if set {
            out.push_str(name);
        }
    }
}
