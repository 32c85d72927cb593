//! The GFX11 instruction set (gfx1100) as the decoder and the disassembler see it: opcodes,
//! the generated per-encoding opcode tables' rows, and the decoded instruction. Operands,
//! modifiers and types are the GFX9 ones ([`crate::gpu::shader::isa`]): what they mean does
//! not change between the generations, only how they are encoded.

use crate::gpu::shader::isa::{DppControl, Modifiers, Operand, Ty};

/// Defines [`Op`] from the generated list in `opcode.rs`: one line per mnemonic.
macro_rules! define_ops {
    ($($id:ident = $name:literal;)*) => {
        /// A GFX11 opcode, independent of how it is encoded.
        #[allow(missing_docs)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum Op {
            $($id,)*
        }

        static NAMES: &[&str] = &[$($name,)*];

        impl Op {
            /// Every opcode, in declaration order.
            pub const ALL: &'static [Op] = &[$(Op::$id),*];

            /// The mnemonic without encoding suffix (`v_add_f32`, not `v_add_f32_e32`).
            pub fn name(self) -> &'static str {
                NAMES[self as usize]
            }
        }
    };
}

#[path = "opcode.rs"]
mod opcode;

pub use opcode::Op;

/// Facts of one row of a generated opcode table beyond the operand types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowFlags(u16);

impl RowFlags {
    /// Nothing special.
    pub const NONE: Self = Self(0);
    /// VCC is an implicit operand LLVM prints (`vcc_lo` in wave32): carry in or out, the
    /// destination of an e32 compare, the mask of an e32 `v_cndmask_b32`.
    pub const VCC: Self = Self(1);
    /// A VOP3 with a scalar destination besides the vector one (VOP3B: carries, `v_div_scale`).
    pub const SDST: Self = Self(2);
    /// The destination is a scalar register (`v_readlane_b32`, promoted compares).
    pub const SGPR_DST: Self = Self(4);
    /// The instruction always carries a 32-bit constant `K` (`v_fmaak_f32`, `v_fmamk_f32`).
    pub const K: Self = Self(8);
    /// LLVM names the encoding in the mnemonic (`_e32`, `_e64`): the opcode also has the other
    /// one.
    pub const SUFFIX: Self = Self(16);
    /// 16-bit VGPR operands name a register half (true16: bit 7 of the field selects the high
    /// half), printed `v1.l` / `v1.h`.
    pub const TRUE16: Self = Self(32);
    /// LLVM 19 reads source 0's VGPR through a Lo128 class (a "fake16" 16-bit instruction in a
    /// 32-bit encoding): v128 and up print with an `/*Invalid register ...*/` note.
    pub const LO128_SRC0: Self = Self(64);
    /// As [`RowFlags::LO128_SRC0`], for source 1.
    pub const LO128_SRC1: Self = Self(128);
    /// An image instruction that takes a sampler (`image_sample*`, `image_gather4*`,
    /// `image_get_lod`).
    pub const SAMPLER: Self = Self(256);
    /// Source 0 must be a VGPR (`v_swap_b32`, `v_readfirstlane_b32`): LLVM prints a scalar
    /// register there with a `VGPR_32` note, a constant with an `Invalid immediate` one.
    pub const VGPR_SRC0: Self = Self(512);
    /// LLVM has no DPP16 form of this opcode.
    pub const NO_DPP16: Self = Self(1024);
    /// LLVM has no DPP8 form of this opcode.
    pub const NO_DPP8: Self = Self(2048);
    /// A VOP3 whose op_sel bits LLVM accepts but does not print.
    pub const HIDDEN_OPSEL: Self = Self(4096);
    /// A VOP3 whose abs bits LLVM accepts but does not print.
    pub const HIDDEN_ABS: Self = Self(8192);
    /// A VOP3 whose neg bits LLVM accepts but does not print.
    pub const HIDDEN_NEG: Self = Self(16384);
    /// A VOP3P whose op_sel_hi bits LLVM accepts but does not print.
    pub const HIDDEN_OPSEL_HI: Self = Self(32768);

    /// Whether every flag of `other` is set.
    pub const fn has(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    /// These flags and `other`'s.
    #[must_use]
    pub const fn with(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

/// One row of a generated opcode table.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// The value of the encoding's opcode field.
    pub opcode: u16,
    /// The opcode.
    pub op: Op,
    /// Operand types: destination, sources 0, 1 and 2 ([`Ty::N`] where absent).
    pub ty: [Ty; 4],
    /// Implicit operands and constants.
    pub flags: RowFlags,
    /// Bits of the first two dwords (the second's in the high half) that must be clear: fields
    /// the instruction does not have, which LLVM's encoding fixes at zero (a DS store's vdst,
    /// an integer VOP3's abs bits). The sweep finds them by setting each bit in turn, asking
    /// llvm-mc-19, and llvm-mc-22 for bit 7 of a 16-bit e32 operand's VGPR field (the high
    /// half, `v4.h`, which LLVM 19's fake16 model refuses and the hardware reads).
    pub zero: u64,
}

impl Row {
    /// A table row (used by the generated tables).
    pub const fn new(opcode: u16, op: Op, ty: [Ty; 4], flags: RowFlags) -> Self {
        Self {
            opcode,
            op,
            ty,
            flags,
            zero: 0,
        }
    }

    /// This row with the must-be-zero bits `zero` (used by the generated tables).
    #[must_use]
    pub const fn zero(self, zero: u64) -> Self {
        Self { zero, ..self }
    }
}

/// How a GFX11 instruction was encoded (the first dword's prefix in brackets).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Scalar, one source (`[31:23] = 0x17d`).
    Sop1,
    /// Scalar, two sources (`[31:30] = 2`).
    Sop2,
    /// Scalar with a 16-bit constant (`[31:28] = 0xb`).
    Sopk,
    /// Scalar compare (`[31:23] = 0x17e`).
    Sopc,
    /// Program control (`[31:23] = 0x17f`).
    Sopp,
    /// Scalar memory (`[31:26] = 0x3d`).
    Smem,
    /// Vector, one source, 32 bits (`[31:25] = 0x3f`).
    Vop1,
    /// Vector, two sources, 32 bits (`[31] = 0`).
    Vop2,
    /// Vector compare, 32 bits (`[31:25] = 0x3e`).
    Vopc,
    /// Vector, 64 bits (`[31:26] = 0x35`), VOP3B and promoted VOPC/VOP2/VOP1 included.
    Vop3,
    /// Packed vector (`[31:24] = 0xcc`).
    Vop3p,
    /// Dual issue (`[31:26] = 0x32`): [`Inst::dual`] holds the Y operation.
    Vopd,
    /// Parameter interpolation (`[31:24] = 0xcd`).
    Vinterp,
    /// Local data share (`[31:26] = 0x36`).
    Ds,
    /// FLAT, GLOBAL or SCRATCH (`[31:26] = 0x37`).
    Flat,
    /// Untyped buffer (`[31:26] = 0x38`).
    Mubuf,
    /// Typed buffer (`[31:26] = 0x3a`).
    Mtbuf,
    /// Image (`[31:26] = 0x3c`): [`Inst::image`] holds its fields.
    Mimg,
}

/// How many registers LLVM prints for the data and the address of an image instruction of one
/// MIMG row (opcode, dim, a16), in the sequential and the NSA form; generated from the sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MimgShape {
    /// The row key: `opcode * 16 + dim * 2 + a16`.
    pub key: u16,
    /// The sequential form.
    pub seq: MimgForm,
    /// The NSA form.
    pub nsa: MimgForm,
    /// Data and address dwords of the sequential variant LLVM's decoder table matches first
    /// for the opcode, which it keeps when the computed data registers would run past v255
    /// ((0, 0): not seen; such words are rejected).
    pub first: (u8, u8),
}

impl MimgShape {
    /// A shape (used by the generated table).
    pub const fn new(key: u16, seq: MimgForm, nsa: MimgForm, first: (u8, u8)) -> Self {
        Self {
            key,
            seq,
            nsa,
            first,
        }
    }
}

/// One form's register counts. LLVM computes a data size n from dmask (4 for gather4 and
/// `image_msaa_load`), d16 and tfe, and prints the variant of that size with the row's
/// address size; where the opcode has no such variant (or none of the row's address size) it
/// keeps the one its decoder table matched first, of other sizes, which `data[n]` records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MimgForm {
    /// Address dwords.
    pub addr: u8,
    /// For each computed data size n (0..=5): the data dwords printed, with bit 7 set when
    /// the address dwords printed are [`MimgForm::addr`], clear when [`MimgForm::other_addr`].
    pub data: [u8; 6],
    /// The address dwords of the variant LLVM keeps.
    pub other_addr: u8,
}

impl MimgForm {
    /// A form (used by the generated table).
    pub const fn new(addr: u8, data: [u8; 6], other_addr: u8) -> Self {
        Self {
            addr,
            data,
            other_addr,
        }
    }

    /// The data and address dwords LLVM prints for computed data size `n`.
    pub fn dwords(&self, n: u32) -> (u8, u8) {
        let e = self.data[(n as usize).min(5)];
        let addr = if e & 0x80 != 0 {
            self.addr
        } else {
            self.other_addr
        };
        (e & 0x7f, addr)
    }
}

/// The fields of an image (MIMG) instruction beyond [`Mem`]'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Image {
    /// Component mask.
    pub dmask: u8,
    /// Resource dimension (`SQ_RSRC_IMG_1D` .. `SQ_RSRC_IMG_2D_MSAA_ARRAY`).
    pub dim: u8,
    /// Unnormalised coordinates.
    pub unorm: bool,
    /// 128-bit resource descriptor.
    pub r128: bool,
    /// 16-bit addresses.
    pub a16: bool,
    /// 16-bit data.
    pub d16: bool,
    /// LOD warning enable.
    pub lwe: bool,
    /// Non-sequential address: the address VGPRs are listed one by one.
    pub nsa: bool,
    /// The address VGPRs: sequential, the first of the tuple; NSA, up to five, the fifth the
    /// first of a tuple of the remaining addresses.
    pub addr: [u8; 5],
    /// How many address dwords LLVM prints.
    pub addr_dwords: u8,
    /// How many data dwords LLVM prints.
    pub data_dwords: u8,
    /// The sampler descriptor's first SGPR, if the instruction takes one.
    pub ssamp: Option<u8>,
}

/// A DPP form of a VOP1/VOP2/VOPC/VOP3 instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dpp {
    /// DPP16: a control word with row/bank masks (source 0 field 0xfa).
    Dpp16 {
        /// The control word.
        control: DppControl,
        /// Fetch inactive lanes.
        fetch_inactive: bool,
    },
    /// DPP8: eight 3-bit lane selects within each group of eight (source 0 field 0xe9/0xea).
    Dpp8 {
        /// The selects, lane 0 in bits 2:0.
        selects: u32,
        /// Fetch inactive lanes (0xea).
        fetch_inactive: bool,
    },
}

/// Memory-instruction fields (DS, FLAT, MUBUF, MTBUF, SMEM).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Mem {
    /// Immediate offset (DS: offset0; signed for FLAT global/scratch and SMEM).
    pub offset: i32,
    /// DS: offset1.
    pub offset1: u8,
    /// Scalar base (SMEM sbase, FLAT saddr, MUBUF srsrc) and offset (SMEM/MUBUF soffset).
    pub sbase: Operand,
    /// Scalar offset register.
    pub soffset: Operand,
    /// Cache policy: GLC, SLC, DLC.
    pub glc: bool,
    /// System level coherent.
    pub slc: bool,
    /// Device level coherent.
    pub dlc: bool,
    /// DS: global data share.
    pub gds: bool,
    /// FLAT segment: 0 flat, 1 scratch, 2 global.
    pub segment: u8,
    /// MUBUF/MTBUF: address from VGPR offset / index.
    pub offen: bool,
    /// MUBUF/MTBUF: VGPR index.
    pub idxen: bool,
    /// MUBUF: texture fail enable.
    pub tfe: bool,
    /// MTBUF: the data format field.
    pub format: u8,
    /// Scratch: the vector address is present (SVE).
    pub sve: bool,
}

impl Mem {
    /// No memory fields.
    pub const NONE: Self = Self {
        offset: 0,
        offset1: 0,
        sbase: Operand::None,
        soffset: Operand::None,
        glc: false,
        slc: false,
        dlc: false,
        gds: false,
        segment: 0,
        offen: false,
        idxen: false,
        tfe: false,
        format: 0,
        sve: false,
    };
}

/// A decoded GFX11 instruction.
#[derive(Clone, Copy, Debug)]
pub struct Inst {
    /// How it was encoded.
    pub enc: Encoding,
    /// The opcode.
    pub op: Op,
    /// The table row it decoded through (operand types and implicit operands).
    pub row: &'static Row,
    /// Length in dwords, literal included.
    pub dwords: u8,
    /// Destination (vector or scalar).
    pub dst: Operand,
    /// Second, scalar destination (VOP3B carry out; `null` when unused).
    pub sdst: Operand,
    /// Sources 0, 1, 2 (memory: address, data0, data1).
    pub src: [Operand; 3],
    /// SOPK/SOPP 16-bit immediate; VINTERP wait_exp; the VOPD / `fmaak` constant K.
    pub imm: u32,
    /// Source and output modifiers.
    pub mods: Modifiers,
    /// The DPP form, if any.
    pub dpp: Option<Dpp>,
    /// Memory fields.
    pub mem: Mem,
    /// VOPD: the Y operation (its row, destination, sources 0 and 1).
    pub dual: Option<(&'static Row, Operand, [Operand; 2])>,
    /// MIMG: the image fields.
    pub image: Option<Image>,
}

impl Inst {
    /// An instruction of `enc` with nothing but its opcode set.
    pub fn new(enc: Encoding, row: &'static Row) -> Self {
        Self {
            enc,
            op: row.op,
            row,
            dwords: 1,
            dst: Operand::None,
            sdst: Operand::None,
            src: [Operand::None; 3],
            imm: 0,
            mods: Modifiers::default(),
            dpp: None,
            mem: Mem::NONE,
            dual: None,
            image: None,
        }
    }
}
