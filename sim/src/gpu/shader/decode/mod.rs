//! The GFX9 decoder: machine words to [`Inst`].
//!
//! One module per encoding family; [`decode`] picks the family from the first dword's
//! encoding bits, exactly as the hardware's instruction buffer does.

mod alignment;
mod memory;
pub(crate) mod operand;
mod scalar;
mod tables;
mod vector;

use std::sync::OnceLock;

pub use memory::ds_has_two_offsets;

use crate::gpu::shader::isa::{Inst, Op, Targets};
use crate::gpu::target::GfxTarget;

/// One row of a generated opcode table: opcode number, opcode, the targets that have it.
type OpcodeRow = (u16, Op, Targets);

/// Where the VOPC, VOP2 and VOP1 opcodes sit in the VOP3 opcode space (GFX9): VOP3 re-encodes
/// each of them at its own opcode plus this base, unless it has no e64 form
/// ([`tables::NO_E64`]).
const PROMOTED_TO_VOP3: [(&[OpcodeRow], u16); 3] =
    [(tables::VOPC, 0), (tables::VOP2, 256), (tables::VOP1, 320)];

/// Why words do not decode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The instruction needs more dwords than were given.
    #[error("truncated {family} instruction: needs {needed} dwords")]
    Truncated {
        /// The encoding family.
        family: &'static str,
        /// Dwords needed.
        needed: usize,
    },
    /// The opcode field does not name an instruction of this target.
    #[error("unknown {family} opcode {opcode:#x}")]
    UnknownOpcode {
        /// The encoding family.
        family: &'static str,
        /// The opcode field.
        opcode: u32,
    },
    /// An encoding this decoder does not handle (MTBUF, MIMG, EXP, ...).
    #[error("unsupported encoding {0}")]
    UnsupportedEncoding(&'static str),
    /// A valid instruction the simulator does not execute (a GFX11 opcode without a GFX9
    /// counterpart in the shared interpreter, or a form of it not handled yet).
    #[error("{0} (not simulated)")]
    NotSimulated(&'static str),
    /// A field holds a value the encoding does not allow.
    #[error("invalid {family} instruction: {what}")]
    Invalid {
        /// The encoding family.
        family: &'static str,
        /// What is wrong.
        what: &'static str,
    },
}

/// Longest instruction in dwords (a 64-bit encoding plus a literal is at most 3; VOP2 with a
/// literal is 2).
pub const MAX_INST_DWORDS: usize = 3;

/// Dwords of the encoding `w0` starts, literal and opcode aside: 1 for the 32-bit encodings
/// (SOP1, SOP2, SOPK, SOPC, SOPP: bits 31:30 = 0b10; VOP1, VOP2, VOPC: bit 31 = 0), 2 for the
/// 64-bit ones. What an undecodable word is reported as.
pub const fn base_dwords(w0: u32) -> usize {
    if w0 >> 31 == 0 || w0 >> 30 == 0b10 {
        1
    } else {
        2
    }
}

/// Decode the instruction starting at `words[0]`. `words` may be longer than the instruction;
/// the result's `dwords` says how many it used.
pub fn decode(words: &[u32], target: GfxTarget) -> Result<Inst, DecodeError> {
    let inst = decode_encoding(words, target)?;
    // Both simulated targets (gfx90a, gfx942) require aligned vector register tuples.
    alignment::check(&inst, "vector register")?;
    Ok(inst)
}

/// Decode the encoding family `words[0]` names, operand by operand.
fn decode_encoding(words: &[u32], target: GfxTarget) -> Result<Inst, DecodeError> {
    let Some(&w0) = words.first() else {
        return Err(DecodeError::Truncated {
            family: "any",
            needed: 1,
        });
    };
    let luts = luts(target);
    match w0 >> 23 {
        0x17d => return scalar::sop1(words, luts),
        0x17e => return scalar::sopc(words, luts),
        0x17f => return scalar::sopp(words, luts),
        _ => {}
    }
    if w0 >> 28 == 0xb {
        return scalar::sopk(words, luts);
    }
    if w0 >> 30 == 0b10 {
        return scalar::sop2(words, luts);
    }
    if w0 >> 31 == 0 {
        return match w0 >> 25 {
            0x3f => vector::vop1(words, luts),
            0x3e => vector::vopc(words, luts),
            _ => vector::vop2(words, luts),
        };
    }
    match w0 >> 26 {
        0x30 => scalar::smem(words, luts),
        0x34 if w0 >> 23 == 0x1a7 => vector::vop3p(words, luts),
        0x34 => vector::vop3(words, luts),
        0x36 => memory::ds(words, luts),
        0x37 => memory::flat(words, luts, target),
        0x38 => memory::mubuf(words, luts, target),
        0x3a => Err(DecodeError::UnsupportedEncoding("MTBUF")),
        0x3c => Err(DecodeError::UnsupportedEncoding("MIMG")),
        0x31 => Err(DecodeError::UnsupportedEncoding("EXP")),
        0x32 => Err(DecodeError::UnsupportedEncoding("VINTRP")),
        _ => Err(DecodeError::UnsupportedEncoding("unknown")),
    }
}

/// Opcode lookup tables of one target, indexed by opcode number.
///
/// Fixed-size arrays, held inline in the `static`s of [`luts`]: nothing on the heap, so a
/// copy of the simulator inside a plugin leaves nothing behind when the plugin is unloaded.
pub(crate) struct Luts {
    pub sop1: [Option<Op>; 256],
    pub sop2: [Option<Op>; 128],
    pub sopk: [Option<Op>; 32],
    pub sopc: [Option<Op>; 128],
    pub sopp: [Option<Op>; 128],
    pub smem: [Option<Op>; 256],
    pub vop1: [Option<Op>; 256],
    pub vop2: [Option<Op>; 64],
    pub vopc: [Option<Op>; 256],
    pub vop3: [Option<Op>; 1024],
    pub vop3p: [Option<Op>; 128],
    pub ds: [Option<Op>; 256],
    pub flat: [Option<Op>; 384],
    pub mubuf: [Option<Op>; 128],
    /// Whether an opcode has a VOP3 (e64) form: LLVM then suffixes its 32-bit form `_e32`.
    pub has_e64: [bool; Op::COUNT],
}

fn build<const SIZE: usize>(table: &[OpcodeRow], target: GfxTarget) -> [Option<Op>; SIZE] {
    let mut lut = [None; SIZE];
    for &(code, op, targets) in table {
        if targets.has(target) {
            lut[usize::from(code)] = Some(op);
        }
    }
    lut
}

/// The VOP3 opcodes: the VOP3-only ones and the promoted VOPC, VOP2 and VOP1 ones.
fn build_vop3(target: GfxTarget) -> [Option<Op>; 1024] {
    let mut lut = build(tables::VOP3, target);
    for (table, base) in PROMOTED_TO_VOP3 {
        for &(code, op, targets) in table {
            if targets.has(target) && !tables::NO_E64.contains(&op) {
                lut[usize::from(base + code)] = Some(op);
            }
        }
    }
    lut
}

fn build_luts(target: GfxTarget) -> Luts {
    let vop3 = build_vop3(target);
    let mut has_e64 = [false; Op::COUNT];
    for op in vop3.iter().flatten() {
        has_e64[*op as usize] = true;
    }
    Luts {
        sop1: build(tables::SOP1, target),
        sop2: build(tables::SOP2, target),
        sopk: build(tables::SOPK, target),
        sopc: build(tables::SOPC, target),
        sopp: build(tables::SOPP, target),
        smem: build(tables::SMEM, target),
        vop1: build(tables::VOP1, target),
        vop2: build(tables::VOP2, target),
        vopc: build(tables::VOPC, target),
        vop3,
        vop3p: build(tables::VOP3P, target),
        ds: build(tables::DS, target),
        flat: build(tables::FLAT, target),
        mubuf: build(tables::MUBUF, target),
        has_e64,
    }
}

pub(crate) fn luts(target: GfxTarget) -> &'static Luts {
    static GFX90A: OnceLock<Luts> = OnceLock::new();
    static GFX942: OnceLock<Luts> = OnceLock::new();
    static NOT_GFX9: OnceLock<Luts> = OnceLock::new();
    match target {
        GfxTarget::Gfx90a => GFX90A.get_or_init(|| build_luts(target)),
        GfxTarget::Gfx942 => GFX942.get_or_init(|| build_luts(target)),
        // No GFX9 table row exists on a GFX11 target: every lookup misses, so the GFX9
        // decoder refuses GFX11 code instead of misreading it.
        GfxTarget::Gfx1100 => NOT_GFX9.get_or_init(|| build_luts(target)),
    }
}

/// Whether `op` has a VOP3 (e64) encoding on `target`.
pub fn has_e64_form(op: Op, target: GfxTarget) -> bool {
    luts(target).has_e64[op as usize]
}

/// Whether the SDWA form of `op` has no destination select: gfx942's fp8/bf8 to f32
/// conversions always write whole registers. LLVM 19 requires DST_SEL = DWORD there, ignores
/// DST_UNUSED and prints neither (checked with llvm-mc-19).
pub fn sdwa_dst_sel_fixed(op: Op) -> bool {
    matches!(
        op,
        Op::VCvtF32Fp8 | Op::VCvtF32Bf8 | Op::VCvtPkF32Fp8 | Op::VCvtPkF32Bf8
    )
}

/// Look an opcode up, or report it unknown.
fn lookup(lut: &[Option<Op>], code: u32, family: &'static str) -> Result<Op, DecodeError> {
    lut.get(code as usize)
        .copied()
        .flatten()
        .ok_or(DecodeError::UnknownOpcode {
            family,
            opcode: code,
        })
}

/// Dword `i` of `words`, or a truncation error.
pub(crate) fn word(words: &[u32], i: usize, family: &'static str) -> Result<u32, DecodeError> {
    words.get(i).copied().ok_or(DecodeError::Truncated {
        family,
        needed: i + 1,
    })
}

/// Bits `[lo, lo + width)` of `w`.
pub(crate) const fn bits(w: u32, lo: u32, width: u32) -> u32 {
    (w >> lo) & ((1u32 << width) - 1)
}
