//! A decoded instruction.

use super::Op;

/// How the instruction was encoded (which also decides its mnemonic suffix).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// SOP1.
    Sop1,
    /// SOP2.
    Sop2,
    /// SOPK.
    Sopk,
    /// SOPC.
    Sopc,
    /// SOPP.
    Sopp,
    /// SMEM.
    Smem,
    /// VOP1 (32-bit encoding).
    Vop1,
    /// VOP2 (32-bit encoding).
    Vop2,
    /// VOPC (32-bit encoding).
    Vopc,
    /// VOP3A or VOP3B (64-bit encoding), including VOP1/VOP2/VOPC opcodes promoted to it.
    Vop3,
    /// VOP3P.
    Vop3p,
    /// A VOP1, VOP2 or VOPC opcode with a DPP control word.
    Dpp,
    /// A VOP1, VOP2 or VOPC opcode with an SDWA control word.
    Sdwa,
    /// DS.
    Ds,
    /// FLAT, GLOBAL or SCRATCH.
    Flat,
    /// MUBUF.
    Mubuf,
}

/// A hardware register readable as a source that is not in the SGPR file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Special {
    /// `src_shared_base` (235): high half of the LDS aperture base.
    SharedBase,
    /// `src_shared_limit` (236).
    SharedLimit,
    /// `src_private_base` (237): high half of the scratch aperture base.
    PrivateBase,
    /// `src_private_limit` (238).
    PrivateLimit,
    /// `src_pops_exiting_wave_id` (239).
    PopsExitingWaveId,
    /// `src_vccz` (251).
    Vccz,
    /// `src_execz` (252).
    Execz,
    /// `src_scc` (253).
    Scc,
    /// `src_lds_direct` (254).
    LdsDirect,
}

/// One operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// No operand (or `off` in memory instructions).
    None,
    /// An entry of the scalar register file by its encoding: 0–101 SGPRs, 102/103 FLAT_SCRATCH,
    /// 104/105 XNACK_MASK, 106/107 VCC, 108–123 trap temporaries, 124 M0, 126/127 EXEC.
    Sgpr(u8),
    /// A vector register of the unified file: 0–255 architectural VGPRs, 256–511 AGPRs.
    Vgpr(u16),
    /// An inline constant, already widened to the operand's type (f16, f32 or f64 bit
    /// patterns for the float constants; sign-extended integers).
    Inline(u64),
    /// A 32-bit literal dword and the value it gives the operand (a double's high half for f64
    /// operands).
    Literal {
        /// The dword following the instruction.
        raw: u32,
        /// The operand value.
        value: u64,
    },
    /// A special register source.
    Special(Special),
}

impl Operand {
    /// Whether the operand is present.
    pub const fn is_some(self) -> bool {
        !matches!(self, Operand::None)
    }
}

/// VOP3/VOP3P/DPP/SDWA operand modifiers. Bit `i` of each mask refers to source `i`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Modifiers {
    /// Absolute value.
    pub abs: u8,
    /// Negation (VOP3P: of the low halves).
    pub neg: u8,
    /// VOP3P: negation of the high halves.
    pub neg_hi: u8,
    /// op_sel (VOP3: bit 3 selects the destination half; VOP3P: which half feeds the low lane).
    pub op_sel: u8,
    /// VOP3P: which half feeds the high lane.
    pub op_sel_hi: u8,
    /// Clamp the result.
    pub clamp: bool,
    /// Output modifier: 0 none, 1 ×2, 2 ×4, 3 ÷2.
    pub omod: u8,
    /// DPP: sign-extend an integer source (the NEG bit of a non-float source, as LLVM decodes
    /// it; only 16-bit sources change).
    pub sext: u8,
}

/// A DPP control word (the sources' neg/abs bits go to [`Modifiers`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DppControl {
    /// DPP_CTRL (quad_perm, row shifts and rotates, wave shifts, mirrors, broadcasts).
    pub ctrl: u16,
    /// Rows written.
    pub row_mask: u8,
    /// Banks written.
    pub bank_mask: u8,
    /// Read 0 from invalid lanes instead of disabling the write.
    pub bound_ctrl: bool,
    /// GFX10+ FI (fetch inactive): a source lane outside EXEC is read like an active one
    /// (always false in GFX9 code, which has no such bit: there an inactive source lane is
    /// invalid).
    pub fetch_inactive: bool,
}

/// A GFX10+ DPP8 selection: each lane reads lane `selects[3l+2:3l]` of its group of eight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dpp8 {
    /// Eight 3-bit lane selects, lane 0 of the group in bits 2:0.
    pub selects: u32,
    /// FI: read source lanes outside EXEC too (otherwise they read 0).
    pub fetch_inactive: bool,
}

/// An SDWA operand selection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SdwaSel {
    /// Bits 7:0.
    Byte0,
    /// Bits 15:8.
    Byte1,
    /// Bits 23:16.
    Byte2,
    /// Bits 31:24.
    Byte3,
    /// Bits 15:0.
    Word0,
    /// Bits 31:16.
    Word1,
    /// All 32 bits.
    #[default]
    Dword,
}

impl SdwaSel {
    /// Decode a 3-bit SEL field (6 = DWORD, 7 is reserved).
    pub const fn from_bits(bits: u32) -> Option<Self> {
        Some(match bits {
            0 => Self::Byte0,
            1 => Self::Byte1,
            2 => Self::Byte2,
            3 => Self::Byte3,
            4 => Self::Word0,
            5 => Self::Word1,
            6 => Self::Dword,
            _ => return None,
        })
    }

    /// (shift, width) of the selected field.
    pub const fn field(self) -> (u32, u32) {
        match self {
            Self::Byte0 => (0, 8),
            Self::Byte1 => (8, 8),
            Self::Byte2 => (16, 8),
            Self::Byte3 => (24, 8),
            Self::Word0 => (0, 16),
            Self::Word1 => (16, 16),
            Self::Dword => (0, 32),
        }
    }
}

/// An SDWA control word (neg/abs/clamp/omod go to [`Modifiers`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SdwaControl {
    /// Destination field written.
    pub dst_sel: SdwaSel,
    /// What the rest of the destination gets: 0 zeros, 1 sign extension, 2 preserved.
    pub dst_unused: u8,
    /// Source 0 field.
    pub src0_sel: SdwaSel,
    /// Sign-extend source 0's field.
    pub src0_sext: bool,
    /// Source 1 field.
    pub src1_sel: SdwaSel,
    /// Sign-extend source 1's field.
    pub src1_sext: bool,
}

/// Cache-policy bits of a memory instruction, as encoded: on gfx90a GLC, SLC and SCC; on gfx942
/// the same bits are SC0, NT and SC1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CachePolicy {
    /// GLC / SC0 (also "return the pre-op value" for atomics).
    pub glc: bool,
    /// SLC / NT.
    pub slc: bool,
    /// SCC / SC1.
    pub scc: bool,
}

/// Fields of memory instructions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Mem {
    /// Immediate byte offset (SMEM, FLAT, MUBUF; DS: offset0, or the 16-bit offset).
    pub offset: i32,
    /// DS: offset1.
    pub offset1: u8,
    /// Cache policy.
    pub cpol: CachePolicy,
    /// DS: global data share.
    pub gds: bool,
    /// MUBUF: the address VGPR supplies an offset.
    pub offen: bool,
    /// MUBUF: the address VGPR supplies an index.
    pub idxen: bool,
    /// MUBUF/FLAT: data goes to LDS instead of VGPRs.
    pub lds: bool,
    /// MUBUF: first SGPR of the buffer resource (4 SGPRs).
    pub srsrc: u8,
    /// SMEM: an SGPR offset is present (in `src[1]`).
    pub soffset_en: bool,
    /// SMEM: the IMM bit (the immediate offset is used; with `soffset_en` both are added).
    pub smem_imm: bool,
    /// Typed buffer access (GFX11 `tbuffer_*`): the instruction's data and number format, in
    /// GFX10+'s unified encoding; 0 (`BUF_FMT_INVALID`) when the instruction carries none.
    pub format: u8,
}

/// A GFX11 matrix multiply-accumulate (`v_wmma_*_16x16x16_*`): the A/B element type and the
/// C/D type. GFX9 has no such opcode: an instruction carrying this runs as the WMMA, whatever
/// its `op` (the lowering puts `v_nop` there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wmma {
    /// f16 A and B, f32 C and D.
    F32F16,
    /// bf16 A and B, f32 C and D.
    F32Bf16,
    /// f16 A, B, C and D (C and D in the register halves op_sel bit 2 picks).
    F16F16,
    /// bf16 A, B, C and D (likewise).
    Bf16Bf16,
    /// 8-bit integer A and B (NEG bits 0/1: signed), i32 C and D.
    I32Iu8,
    /// 4-bit integer A and B (likewise).
    I32Iu4,
}

/// Encoding-specific extra fields.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Extra {
    /// None.
    #[default]
    None,
    /// SOPK/SOPP 16-bit immediate, or the constant of v_madmk/v_madak/v_fmamk/v_fmaak, or the
    /// literal of s_setreg_imm32_b32.
    Imm(u32),
    /// DPP.
    Dpp(DppControl),
    /// DPP8 (GFX10+ code only).
    Dpp8(Dpp8),
    /// SDWA.
    Sdwa(SdwaControl),
    /// Memory instruction fields.
    Mem(Mem),
    /// A GFX11 WMMA (see [`Wmma`]).
    Wmma(Wmma),
    /// GFX10+ `v_permlane16_b32` (`cross`: `v_permlanex16_b32`): source 0 is the vector,
    /// sources 1 and 2 the 64 bits of lane selects; op_sel bit 0 is FI, bit 1 BOUND_CTRL.
    /// GFX9 has no such opcode: an instruction carrying this runs as the permute, whatever
    /// its `op`.
    Permlane16 {
        /// Read the other row of each 32-lane half (`permlanex16`).
        cross: bool,
    },
    /// GFX11 `v_permlane64_b32`: wave64 lanes read the other 32-lane half (`lane ^ 32`,
    /// inactive ones too); a no-op in wave32.
    Permlane64,
    /// A GFX11 VINTERP f16 form lowered to `v_fma_mix*`: the FMA rounds to f32 and an f16
    /// result rounds that again (the RDNA3 ISA guide's `16'F(fma(...))`), rather than once
    /// as GFX9's mix does.
    Interp {
        /// The `_rtz_` forms: round toward zero whatever the MODE register says.
        rtz: bool,
    },
    /// Matrix (MAI) instruction controls: CBSZ, ABID and BLGP (gfx942 f64 matrices: the
    /// sources' NEG bits).
    Mai {
        /// Broadcast size.
        cbsz: u8,
        /// Broadcast block id.
        abid: u8,
        /// B-matrix lane group pattern.
        blgp: u8,
    },
}

/// A decoded instruction.
///
/// Operand slots: `dst` is the vector or scalar destination (SMEM sdata, DS/FLAT vdst, MUBUF
/// vdata of a load; VOPC/VOP3 compares: the lane mask), `sdst` the second, scalar destination of
/// VOP3B (carry out). Sources: VALU/SALU `src[0..3]`; SOPK: `src[0]` is SDST when read (compares,
/// setreg); SMEM: sbase, soffset; DS: addr, data0, data1; FLAT: vaddr, vdata, saddr; MUBUF:
/// vaddr, vdata, soffset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Inst {
    /// The opcode.
    pub op: Op,
    /// The encoding.
    pub enc: Encoding,
    /// Length in dwords, literal included.
    pub dwords: u8,
    /// Destination.
    pub dst: Operand,
    /// Second destination (carry out of VOP3B).
    pub sdst: Operand,
    /// Sources.
    pub src: [Operand; 3],
    /// Operand modifiers.
    pub mods: Modifiers,
    /// Encoding-specific fields.
    pub extra: Extra,
}

impl Inst {
    /// An instruction with no operands.
    pub const fn new(op: Op, enc: Encoding, dwords: u8) -> Self {
        Self {
            op,
            enc,
            dwords,
            dst: Operand::None,
            sdst: Operand::None,
            src: [Operand::None; 3],
            mods: Modifiers {
                abs: 0,
                neg: 0,
                neg_hi: 0,
                op_sel: 0,
                op_sel_hi: 0,
                clamp: false,
                omod: 0,
                sext: 0,
            },
            extra: Extra::None,
        }
    }

    /// The 16-bit (or literal) immediate, 0 if none.
    pub fn imm(&self) -> u32 {
        match self.extra {
            Extra::Imm(v) => v,
            _ => 0,
        }
    }

    /// Memory fields (defaults if this is not a memory instruction).
    pub fn mem(&self) -> Mem {
        match self.extra {
            Extra::Mem(m) => m,
            _ => Mem::default(),
        }
    }
}
