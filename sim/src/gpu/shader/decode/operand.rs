//! Source operand fields: the 8-bit scalar source (SSRC) and 9-bit vector source (SRC) codes,
//! inline constants and literals.

use super::{DecodeError, word};
use crate::gpu::shader::isa::{Operand, Special, Ty};

/// SSRC/SRC code of a literal dword following the instruction.
pub const LITERAL: u32 = 255;
/// SRC code announcing an SDWA control word.
pub const SDWA: u32 = 0xf9;
/// SRC code announcing a DPP control word.
pub const DPP: u32 = 0xfa;

/// f16, f32 and f64 bit patterns of the float inline constants 240..=248 (0.5, -0.5, 1.0,
/// -1.0, 2.0, -2.0, 4.0, -4.0, 1/(2π)).
const FLOAT_CONSTANTS: [(u16, u32, u64); 9] = [
    (0x3800, 0x3f00_0000, 0x3fe0_0000_0000_0000),
    (0xb800, 0xbf00_0000, 0xbfe0_0000_0000_0000),
    (0x3c00, 0x3f80_0000, 0x3ff0_0000_0000_0000),
    (0xbc00, 0xbf80_0000, 0xbff0_0000_0000_0000),
    (0x4000, 0x4000_0000, 0x4000_0000_0000_0000),
    (0xc000, 0xc000_0000, 0xc000_0000_0000_0000),
    (0x4400, 0x4080_0000, 0x4010_0000_0000_0000),
    (0xc400, 0xc080_0000, 0xc010_0000_0000_0000),
    (0x3118, 0x3e22_f983, 0x3fc4_5f30_6dc9_c882),
];

/// The value of inline constant `code` in a slot of type `ty`.
///
/// As LLVM documents the hardware (AMDGPUBaseInfo, `getInlineEncodingV216`): integer constants
/// are sign-extended 32-bit values, also for 16-bit and packed operands; float constants are
/// half-precision values (upper half 0) for f16 operands, but single-precision values for
/// 16-bit integer operands. For the register-pair operands of packed-f32 instructions the
/// 32-bit constant is taken for both elements (LLVM models such constants as a splat; not
/// confirmed by AMD documentation).
pub(crate) fn inline_constant(code: u32, ty: Ty) -> u64 {
    let wide = ty.dwords() == 2;
    let splat = |v: u32| u64::from(v) | u64::from(v) << 32;
    match code {
        128..=208 => {
            let v = if code <= 192 {
                i64::from(code - 128)
            } else {
                -i64::from(code - 192)
            };
            match ty {
                Ty::PkF32 => splat(v as u32),
                _ if wide => v as u64,
                _ => u64::from(v as u32),
            }
        }
        240..=248 => {
            let (h, s, d) = FLOAT_CONSTANTS[(code - 240) as usize];
            match ty {
                Ty::F16 | Ty::PkF16 => u64::from(h),
                Ty::PkF32 => splat(s),
                _ if wide => d,
                _ => u64::from(s),
            }
        }
        _ => 0,
    }
}

/// A literal dword as the value of a slot of type `ty`: an f64 slot takes it as its high half;
/// other 64-bit slots zero-extend it (the hardware sign-extends for signed operands, and LLVM
/// never emits a negative 32-bit literal for a 64-bit integer operand, so the difference is
/// not observable in compiler output).
pub fn literal_value(raw: u32, ty: Ty) -> u64 {
    if ty.is_f64() {
        u64::from(raw) << 32
    } else {
        u64::from(raw)
    }
}

/// Where a literal, if any, is found: the dword index after the instruction's fixed part.
#[derive(Clone, Copy)]
pub struct LiteralSlot {
    pub index: usize,
    pub family: &'static str,
}

/// Decode an SSRC (8-bit) or the low 8 bits of a SRC code. `literal` says where the literal
/// dword would be; `used` is set when it is consumed.
pub fn scalar_source(
    code: u32,
    ty: Ty,
    words: &[u32],
    literal: LiteralSlot,
    used: &mut bool,
) -> Result<Operand, DecodeError> {
    check_scalar_tuple(code, ty, literal.family)?;
    Ok(match code {
        0..=101 | 102..=123 | 124 | 126 | 127 => Operand::Sgpr(align_sgpr(code, ty)),
        128..=208 | 240..=248 => Operand::Inline(inline_constant(code, ty)),
        235 => Operand::Special(Special::SharedBase),
        236 => Operand::Special(Special::SharedLimit),
        237 => Operand::Special(Special::PrivateBase),
        238 => Operand::Special(Special::PrivateLimit),
        239 => Operand::Special(Special::PopsExitingWaveId),
        251 => Operand::Special(Special::Vccz),
        252 => Operand::Special(Special::Execz),
        253 => Operand::Special(Special::Scc),
        254 => Operand::Special(Special::LdsDirect),
        LITERAL => {
            let raw = word(words, literal.index, literal.family)?;
            *used = true;
            Operand::Literal {
                raw,
                value: literal_value(raw, ty),
            }
        }
        _ => {
            return Err(DecodeError::Invalid {
                family: literal.family,
                what: "reserved source operand code",
            });
        }
    })
}

/// Decode a 9-bit SRC code (256..=511 are VGPRs). `acc` maps VGPR codes to AGPRs.
pub fn vector_source(
    code: u32,
    ty: Ty,
    words: &[u32],
    literal: LiteralSlot,
    used: &mut bool,
    acc: bool,
) -> Result<Operand, DecodeError> {
    if code >= 256 {
        return Ok(vgpr(code - 256, acc));
    }
    scalar_source(code, ty, words, literal, used)
}

/// A VGPR (or AGPR when `acc`) by number.
pub const fn vgpr(n: u32, acc: bool) -> Operand {
    Operand::Vgpr((n & 0xff) as u16 + if acc { 256 } else { 0 })
}

/// The register number of an SGPR or trap-temporary tuple of type `ty`: tuples are aligned
/// (pairs to 2, larger tuples to 4) and the low bits of an unaligned code are ignored, as LLVM
/// decodes them. (AMD documents only that tuples must be aligned; that the hardware ignores
/// the low bits like LLVM is an assumption.)
pub fn align_sgpr(code: u32, ty: Ty) -> u8 {
    let align = match ty.dwords() {
        0 | 1 => 1,
        2 => 2,
        _ => 4,
    };
    let code = match code {
        0..=101 => code & !(align - 1),
        108..=123 => 108 + ((code - 108) & !(align - 1)),
        _ => code,
    };
    code as u8
}

/// Reject a scalar code that cannot start an operand of type `ty`: a 64-bit or wider scalar
/// operand is an SGPR or trap-temporary tuple, or one of the 64-bit special registers
/// (FLAT_SCRATCH 102, XNACK_MASK 104, VCC 106, EXEC 126) addressed by its low half. The high
/// halves (103, 105, 107, 127), M0 (124) and LDS_DIRECT (254) name no 64-bit register.
///
/// LLVM: `AMDGPUDisassembler::decodeSpecialReg64` knows only the even special codes and
/// returns an error operand for the others, failing the instruction (wider operands fail
/// alike; checked with llvm-mc-19). What the hardware would pair with `vcc_hi` as the low
/// half is not documented here (unsure); the simulated core refuses the word rather than
/// guess.
pub fn check_scalar_tuple(code: u32, ty: Ty, family: &'static str) -> Result<(), DecodeError> {
    if ty.dwords() >= 2 && matches!(code, 103 | 105 | 107 | 124 | 127 | 254) {
        return Err(DecodeError::Invalid {
            family,
            what: "odd half of a 64-bit special register (or M0, LDS_DIRECT) as a 64-bit operand",
        });
    }
    // A tuple must end inside its file: SGPR tuples at s103 at the latest (LLVM's GFX9 SGPR
    // tuples reach s[100:103], s[96:103] and s[88:103], no further; checked with
    // llvm-mc-19), trap-temporary tuples at ttmp15.
    let end = u32::from(align_sgpr(code, ty)) + ty.dwords();
    let past_end = match code {
        0..=101 => end > 104,
        108..=123 => end > 124,
        _ => false,
    };
    if past_end {
        return Err(DecodeError::Invalid {
            family,
            what: "scalar register tuple past the end of its file",
        });
    }
    Ok(())
}

/// A scalar destination code (SDST, 7 bits; also the 7-bit SGPR fields of SOPK and SMEM) of
/// type `ty`: SGPRs and the writable special registers. Code 125 is reserved on GFX9 (LLVM
/// decodes it as GFX10's `null`).
pub fn scalar_dest(code: u32, ty: Ty, family: &'static str) -> Result<Operand, DecodeError> {
    check_scalar_tuple(code, ty, family)?;
    match code {
        0..=124 | 126 | 127 => Ok(Operand::Sgpr(align_sgpr(code, ty))),
        _ => Err(DecodeError::Invalid {
            family,
            what: "invalid scalar destination",
        }),
    }
}
