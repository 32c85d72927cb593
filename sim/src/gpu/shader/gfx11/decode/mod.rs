//! The GFX11 decoder: machine words to [`Inst`].
//!
//! [`decode`] picks the encoding from the first dword's prefix bits, as the hardware's
//! instruction buffer does; one module per encoding group reads the fields. Errors are the
//! GFX9 decoder's ([`DecodeError`]).

mod memory;
mod operand;
mod scalar;
mod vector;

pub use crate::gpu::shader::decode::DecodeError;
use crate::gpu::shader::decode::{bits, word};
use crate::gpu::shader::gfx11::isa::{Inst, Row};

/// Longest GFX11 instruction in dwords: 3, reached by an NSA image instruction (GFX11 allows
/// at most five address operands, the fifth a tuple, so one dword after the 64-bit encoding
/// holds addresses 1–4: llvm-mc-22 refuses a sixth, unlike GFX10's up to three NSA dwords),
/// a 64-bit ALU encoding plus a DPP word or a literal, and VOPD plus a literal.
pub const MAX_INST_DWORDS: usize = 3;

/// Decode the instruction starting at `words[0]`. `words` may be longer than the instruction;
/// the result's `dwords` says how many it used.
pub fn decode(words: &[u32]) -> Result<Inst, DecodeError> {
    let w0 = word(words, 0, "GFX11")?;
    match w0 >> 25 {
        0x3f => return vector::vop1(words),
        0x3e => return vector::vopc(words),
        _ if w0 >> 31 == 0 => return vector::vop2(words),
        _ => {}
    }
    if w0 >> 30 == 0b10 {
        return match (w0 >> 23, w0 >> 28) {
            (0x17d, _) => scalar::sop1(words),
            (0x17e, _) => scalar::sopc(words),
            (0x17f, _) => scalar::sopp(words),
            (_, 0xb) => scalar::sopk(words),
            _ => scalar::sop2(words),
        };
    }
    match (w0 >> 26, w0 >> 24) {
        (_, 0xcc) => vector::vop3p(words),
        (_, 0xcd) => vector::vinterp(words),
        (0x35, _) => vector::vop3(words),
        (0x32, _) => vector::vopd(words),
        (0x3d, _) => scalar::smem(words),
        (0x36, _) => memory::ds(words),
        (0x37, _) => memory::flat(words),
        (0x38, _) => memory::mubuf(words),
        (0x3a, _) => memory::mtbuf(words),
        (0x3c, _) => memory::mimg(words),
        (0x3e, _) => Err(DecodeError::UnsupportedEncoding("EXP")),
        (_, 0xce) => Err(DecodeError::UnsupportedEncoding("LDSDIR")),
        _ => Err(DecodeError::UnsupportedEncoding("unknown GFX11 prefix")),
    }
}

/// The row of `table` for `opcode`, if the instruction in `words` leaves clear the bits the row
/// says must be ([`Row::zero`]; LLVM rejects the encoding otherwise).
fn row(
    words: &[u32],
    table: &'static [Row],
    opcode: u32,
    family: &'static str,
) -> Result<&'static Row, DecodeError> {
    let row = table
        .binary_search_by_key(&opcode, |r| u32::from(r.opcode))
        .map(|i| &table[i])
        .map_err(|_| DecodeError::UnknownOpcode { family, opcode })?;
    let low = u64::from(words.first().copied().unwrap_or(0));
    let high = u64::from(words.get(1).copied().unwrap_or(0));
    if (low | high << 32) & row.zero != 0 {
        return Err(DecodeError::Invalid {
            family,
            what: "a field the instruction does not have is set",
        });
    }
    Ok(row)
}

/// Bits `[lo, lo + width)` of `w` (the GFX9 decoder's helper).
const fn field(w: u32, lo: u32, width: u32) -> u32 {
    bits(w, lo, width)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::shader::gfx11::tables;
    use crate::gpu::shader::isa::Ty;

    /// The generated masks leave bit 7 of a 16-bit e32 operand's VGPR field (the high half)
    /// free, as llvm-mc-22 reads it, rather than refusing it as llvm-mc-19's fake16 model
    /// does; a destination the tables type as 32-bit keeps it refused.
    #[test]
    fn e32_high_halves_of_16_bit_operands_are_not_must_be_zero() {
        let half = |t: Ty| matches!(t, Ty::B16 | Ty::F16);
        let mut checked = 0;
        for (table, fields) in [
            (tables::VOP1, &[(24, 0)][..]),
            (tables::VOP2, &[(24, 0), (16, 2)][..]),
            (tables::VOPC, &[(16, 2)][..]),
        ] {
            for row in table {
                for &(bit, slot) in fields {
                    if half(row.ty[slot]) {
                        checked += 1;
                        assert_eq!(row.zero >> bit & 1, 0, "{} bit {bit}", row.op.name());
                    }
                }
            }
        }
        assert!(checked > 50, "{checked} 16-bit operands");
        // v_sat_pk_u8_i16: its destination is 16-bit to LLVM 22 (`v4.h`), a 32-bit register
        // in the tables (typed from LLVM 19's text), so a destination past v127 stays refused.
        let sat = tables::VOP1
            .iter()
            .find(|r| r.op.name() == "v_sat_pk_u8_i16")
            .expect("row");
        assert_eq!(sat.ty[0], Ty::B32);
        assert_ne!(sat.zero & 1 << 24, 0);
        // Decoded: v_cvt_f16_f32_e32 v4.h, v1 (llvm-mc-22) is accepted.
        let inst = decode(&[0x7f081501]).expect("v4.h");
        assert_eq!(inst.op.name(), "v_cvt_f16_f32");
    }
}
