//! GFX11 source and destination codes. The scalar file differs from GFX9's above s105: 106/107
//! VCC, 108–123 trap temporaries, 124 `null`, 125 M0, 126/127 EXEC. [`Operand::Sgpr`] keeps
//! the GFX11 code.

use super::DecodeError;
use crate::gpu::shader::decode::operand::{inline_constant, literal_value};
use crate::gpu::shader::decode::word;
use crate::gpu::shader::isa::{Operand, Special, Ty};

/// SGPR code of `null` (reads 0, writes are dropped).
pub const NULL: u32 = 124;
/// SRC code of a literal dword.
pub const LITERAL: u32 = 255;
/// SRC code announcing a DPP16 word.
pub const DPP16: u32 = 0xfa;
/// SRC codes announcing a DPP8 word (without and with fetch-inactive).
pub const DPP8: u32 = 0xe9;
/// See [`DPP8`].
pub const DPP8_FI: u32 = 0xea;

/// Where the literal, if any, sits and whether it was taken.
pub struct Literal<'a> {
    /// The instruction's words.
    pub words: &'a [u32],
    /// Index of the dword after the fixed part.
    pub index: usize,
    /// The encoding family, for errors.
    pub family: &'static str,
    /// Set when a source took the literal.
    pub used: bool,
}

impl<'a> Literal<'a> {
    /// The literal slot of an instruction whose fixed part is `index` dwords.
    pub fn at(words: &'a [u32], index: usize, family: &'static str) -> Self {
        Self {
            words,
            index,
            family,
            used: false,
        }
    }

    /// Decode a 9-bit SRC code (256..=511 VGPRs) or an 8-bit SSRC code.
    pub fn source(&mut self, code: u32, ty: Ty) -> Result<Operand, DecodeError> {
        Ok(match code {
            256..=511 if code - 256 + ty.dwords().max(1) > 256 => {
                return Err(DecodeError::Invalid {
                    family: self.family,
                    what: "vector register tuple past v255",
                });
            }
            256..=511 => Operand::Vgpr((code - 256) as u16),
            0..=127 => scalar(code, ty, self.family)?,
            128..=208 | 240..=248 => Operand::Inline(inline_constant(code, ty)),
            235 => Operand::Special(Special::SharedBase),
            236 => Operand::Special(Special::SharedLimit),
            237 => Operand::Special(Special::PrivateBase),
            238 => Operand::Special(Special::PrivateLimit),
            239 => Operand::Special(Special::PopsExitingWaveId),
            254 if ty.dwords() >= 2 => {
                return Err(DecodeError::Invalid {
                    family: self.family,
                    what: "src_lds_direct as a 64-bit operand",
                });
            }
            254 => Operand::Special(Special::LdsDirect),
            251 => Operand::Special(Special::Vccz),
            252 => Operand::Special(Special::Execz),
            253 => Operand::Special(Special::Scc),
            LITERAL => {
                let raw = word(self.words, self.index, self.family)?;
                self.used = true;
                Operand::Literal {
                    raw,
                    value: literal_value(raw, ty),
                }
            }
            _ => {
                return Err(DecodeError::Invalid {
                    family: self.family,
                    what: "reserved source operand code",
                });
            }
        })
    }

    /// Dwords of the instruction: the fixed part plus the literal if taken.
    pub fn dwords(&self) -> u8 {
        (self.index + usize::from(self.used)) as u8
    }
}

/// A scalar destination code (0–127; 125 is M0, 124 `null`).
pub fn sdst(code: u32) -> Operand {
    Operand::Sgpr(code as u8)
}

/// A scalar register (tuple) of type `ty` by its 7-bit code, as LLVM reads it for gfx1100: a
/// tuple starts at its alignment (the field's low bits are ignored: 2 for 64 bits, 4 wider),
/// SGPR tuples end at s105 and trap-temporary ones at ttmp15; of the special registers only
/// VCC (106), `null` (124) and EXEC (126) are 64-bit operands, and none is wider. LLVM fails
/// the instruction otherwise (checked with llvm-mc-19: `s_mov_b64 s[0:1], m0`, a 128-bit
/// buffer base at s[104:107]).
pub fn scalar(code: u32, ty: Ty, family: &'static str) -> Result<Operand, DecodeError> {
    let dwords = ty.dwords();
    if dwords <= 1 {
        return Ok(sdst(code));
    }
    let align = if dwords == 2 { 2 } else { 4 };
    let valid = match code {
        0..=105 => Some((code & !(align - 1), 106)),
        108..=123 => Some((108 + ((code - 108) & !(align - 1)), 124)),
        106 | 126 if dwords == 2 => Some((code, code + 2)),
        124 => Some((124, 128)),
        _ => None,
    };
    match valid {
        Some((start, end)) if start + dwords <= end || code >= 124 => Ok(sdst(start)),
        _ => Err(DecodeError::Invalid {
            family,
            what: "scalar register tuple LLVM does not name",
        }),
    }
}

/// A vector register by its 8-bit number.
pub fn vgpr(n: u32) -> Operand {
    Operand::Vgpr(n as u16)
}

/// A VGPR tuple of type `ty` starting at `n`: LLVM has no register past v255.
pub fn vgpr_tuple(n: u32, ty: Ty, family: &'static str) -> Result<Operand, DecodeError> {
    if n + ty.dwords().max(1) > 256 {
        return Err(DecodeError::Invalid {
            family,
            what: "vector register tuple past v255",
        });
    }
    Ok(vgpr(n))
}
