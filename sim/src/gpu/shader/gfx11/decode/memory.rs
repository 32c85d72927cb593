//! DS, FLAT/GLOBAL/SCRATCH, MUBUF, MTBUF and MIMG.

use super::operand::{NULL, scalar, sdst, vgpr};
use super::{DecodeError, field, row};
use crate::gpu::shader::decode::word;
use crate::gpu::shader::gfx11::isa::{Encoding, Image, Inst, RowFlags};
use crate::gpu::shader::gfx11::tables;
use crate::gpu::shader::isa::{Operand, Ty};

/// DS: `[31:26]=0x36 op[25:18] gds[17] offset1[15:8] offset0[7:0]`, then `vdst[31:24]
/// data1[23:16] data0[15:8] addr[7:0]`.
pub fn ds(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let w1 = word(words, 1, "DS")?;
    let row = row(words, tables::DS, field(w, 18, 8), "DS")?;
    let mut inst = Inst::new(Encoding::Ds, row);
    inst.dwords = 2;
    inst.mem.offset = field(w, 0, 8) as i32;
    inst.mem.offset1 = field(w, 8, 8) as u8;
    inst.mem.gds = field(w, 17, 1) != 0;
    inst.src[0] = vgpr(field(w1, 0, 8));
    inst.src[1] = vgpr(field(w1, 8, 8));
    inst.src[2] = vgpr(field(w1, 16, 8));
    inst.dst = vgpr(field(w1, 24, 8));
    Ok(inst)
}

/// FLAT: `[31:26]=0x37 op[24:18] seg[17:16] slc[15] glc[14] dlc[13] offset[12:0]`, then
/// `vdst[31:24] sve[23] saddr[22:16] data[15:8] addr[7:0]`. The offset is signed for global
/// and scratch, unsigned 12 bits for flat.
pub fn flat(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let w1 = word(words, 1, "FLAT")?;
    let segment = field(w, 16, 2);
    let row = row(
        words,
        tables::FLAT,
        segment * 1000 + field(w, 18, 7),
        "FLAT",
    )?;
    let mut inst = Inst::new(Encoding::Flat, row);
    inst.dwords = 2;
    inst.mem.segment = segment as u8;
    // LLVM prints a FLAT offset as 13 unsigned bits (llvm-mc-19).
    inst.mem.offset = if segment == 0 {
        field(w, 0, 13) as i32
    } else {
        ((w << 19) as i32) >> 19
    };
    inst.mem.slc = field(w, 15, 1) != 0;
    inst.mem.glc = field(w, 14, 1) != 0;
    inst.mem.dlc = field(w, 13, 1) != 0;
    inst.mem.sve = field(w1, 23, 1) != 0;
    // The scalar address: `off` (null) or a 64-bit pair for global, 32 bits for scratch;
    // plain FLAT has none, and LLVM rejects anything but `off` there (llvm-mc-19).
    let saddr = field(w1, 16, 7);
    inst.mem.sbase = match (segment, saddr) {
        (_, NULL) => Operand::None,
        (0, _) => {
            return Err(DecodeError::Invalid {
                family: "FLAT",
                what: "a scalar address on a FLAT (not global or scratch) instruction",
            });
        }
        (2, _) => scalar(saddr, Ty::B64, "FLAT")?,
        _ => sdst(saddr),
    };
    inst.src[0] = vgpr(field(w1, 0, 8));
    inst.src[1] = vgpr(field(w1, 8, 8));
    inst.dst = vgpr(field(w1, 24, 8));
    Ok(inst)
}

/// The second dword of MUBUF and MTBUF: `soffset[31:24] idxen[23] offen[22] tfe[21]
/// srsrc[20:16] vdata[15:8] vaddr[7:0]`, and the first's `glc[14] dlc[13] slc[12]
/// offset[11:0]`.
fn buffer(inst: &mut Inst, words: &[u32], family: &'static str) -> Result<(), DecodeError> {
    let (w, w1) = (words[0], word(words, 1, family)?);
    inst.mem.offset = field(w, 0, 12) as i32;
    inst.mem.slc = field(w, 12, 1) != 0;
    inst.mem.dlc = field(w, 13, 1) != 0;
    inst.mem.glc = field(w, 14, 1) != 0;
    inst.src[0] = vgpr(field(w1, 0, 8));
    inst.src[1] = vgpr(field(w1, 8, 8));
    inst.dst = inst.src[1];
    inst.mem.sbase = scalar(field(w1, 16, 5) << 2, Ty::B128, family)?;
    inst.mem.tfe = field(w1, 21, 1) != 0;
    inst.mem.offen = field(w1, 22, 1) != 0;
    inst.mem.idxen = field(w1, 23, 1) != 0;
    let mut lit = super::operand::Literal::at(words, 2, family);
    inst.mem.soffset = lit.source(field(w1, 24, 8), Ty::B32)?;
    inst.dwords = lit.dwords();
    // The data registers must end inside the file (LLVM has no register past v255); the
    // LDS loads have none.
    let data = inst.row.ty[0].dwords() + u32::from(inst.mem.tfe);
    if !inst.op.name().contains("_lds_") && field(w1, 8, 8) + data > 256 {
        return Err(DecodeError::Invalid {
            family,
            what: "data registers past v255",
        });
    }
    Ok(())
}

/// MUBUF: `[31:26]=0x38 op[25:18] lds[16]` and the buffer fields.
pub fn mubuf(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let row = row(words, tables::MUBUF, field(w, 18, 8), "MUBUF")?;
    let mut inst = Inst::new(Encoding::Mubuf, row);
    buffer(&mut inst, words, "MUBUF")?;
    Ok(inst)
}

/// MTBUF: `[31:26]=0x3a format[25:19] op[18:15]` and the buffer fields.
pub fn mtbuf(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let row = row(words, tables::MTBUF, field(w, 15, 4), "MTBUF")?;
    let mut inst = Inst::new(Encoding::Mtbuf, row);
    inst.mem.format = field(w, 19, 7) as u8;
    buffer(&mut inst, words, "MTBUF")?;
    Ok(inst)
}

/// MIMG: `[31:26]=0x3c op[25:18] d16[17] a16[16] r128[15] glc[14] dlc[13] slc[12]
/// dmask[11:8] unorm[7] dim[4:2] nsa[1:0]`, then `ssamp[30:26] lwe[22] tfe[21] srsrc[20:16]
/// vdata[15:8] vaddr0[7:0]`, then (NSA) a dword of four more address VGPRs, one a byte.
///
/// How many data and address registers there are is LLVM's reading (see
/// [`MimgShape`](crate::gpu::shader::gfx11::isa::MimgShape)).
pub fn mimg(words: &[u32]) -> Result<Inst, DecodeError> {
    let w = words[0];
    let w1 = word(words, 1, "MIMG")?;
    let (op, dim, a16) = (field(w, 18, 8), field(w, 2, 3), field(w, 16, 1));
    let key = op * 16 + dim * 2 + a16;
    let row = row(words, tables::MIMG, key, "MIMG")?;
    let shape = tables::MIMG_SHAPE
        .binary_search_by_key(&key, |s| u32::from(s.key))
        .map(|i| tables::MIMG_SHAPE[i])
        .map_err(|_| DecodeError::UnknownOpcode {
            family: "MIMG",
            opcode: key,
        })?;
    let mut inst = Inst::new(Encoding::Mimg, row);
    inst.dwords = 2;
    inst.mem.slc = field(w, 12, 1) != 0;
    inst.mem.dlc = field(w, 13, 1) != 0;
    inst.mem.glc = field(w, 14, 1) != 0;
    inst.mem.tfe = field(w1, 21, 1) != 0;
    inst.mem.sbase = scalar(field(w1, 16, 5) << 2, Ty::B256, "MIMG")?;
    inst.dst = vgpr(field(w1, 8, 8));
    let dmask = field(w, 8, 4);
    let d16 = field(w, 17, 1) != 0;
    let name = row.op.name();
    let mut data = if name.contains("gather4") || name.contains("msaa_load") {
        4
    } else {
        dmask.count_ones().max(1)
    };
    if d16 {
        data = data.div_ceil(2);
    }
    data += u32::from(inst.mem.tfe);
    let nsa = field(w, 0, 1) != 0;
    let form = if nsa { shape.nsa } else { shape.seq };
    let (mut data, mut addr) = form.dwords(data);
    let vdata = field(w1, 8, 8);
    if vdata + u32::from(data) > 256 && shape.first.0 != 0 && !nsa {
        // LLVM finds no register tuple that wide there and keeps the variant it decoded.
        (data, addr) = shape.first;
    }
    let mut image = Image {
        dmask: dmask as u8,
        dim: dim as u8,
        unorm: field(w, 7, 1) != 0,
        r128: field(w, 15, 1) != 0,
        a16: a16 != 0,
        d16,
        lwe: field(w1, 22, 1) != 0,
        nsa: false,
        addr: [0; 5],
        addr_dwords: addr,
        data_dwords: data,
        ssamp: None,
    };
    if row.flags.has(RowFlags::SAMPLER) {
        if let Operand::Sgpr(n) = scalar(field(w1, 26, 5) << 2, Ty::B128, "MIMG")? {
            image.ssamp = Some(n);
        }
    }
    image.addr[0] = field(w1, 0, 8) as u8;
    // NSA (bit 0): a third dword holds four more address VGPRs, one a byte; LLVM lists at most
    // five address operands, the fifth a tuple of whatever addresses remain. Bit 1 is not
    // looked at (llvm-mc-19 reads such words as the sequential form).
    if nsa {
        image.nsa = true;
        let extra = word(words, 2, "MIMG")?;
        for i in 1..5 {
            image.addr[i] = (extra >> (8 * (i - 1))) as u8;
        }
        inst.dwords = 3;
    }
    let addr_end = u32::from(image.addr[if image.nsa { 4 } else { 0 }])
        + u32::from(addr).saturating_sub(if image.nsa { 4 } else { 0 });
    if vdata + u32::from(data) > 256 || addr_end > 256 {
        return Err(DecodeError::Invalid {
            family: "MIMG",
            what: "data or address registers past v255",
        });
    }
    inst.image = Some(image);
    Ok(inst)
}
