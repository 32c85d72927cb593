//! The GFX9 instruction set (gfx90a, gfx942) as the decoder, the disassembler and the
//! interpreter see it: opcodes with their operand signatures, and the decoded instruction.

mod inst;

/// Defines [`Op`] and its [`OpInfo`] table from the generated list in `opcode.rs`: one line per
/// opcode, `Ident = "mnemonic", Family, [dst, sdst, src0, src1, src2];`.
macro_rules! define_ops {
    ($($id:ident = $name:literal, $fam:ident, [$d:ident, $sd:ident, $s0:ident, $s1:ident, $s2:ident];)*) => {
        /// An opcode, independent of how it is encoded.
        #[allow(missing_docs)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum Op {
            $($id,)*
        }

        static INFO: &[$crate::gpu::shader::isa::OpInfo] = &[
            $($crate::gpu::shader::isa::OpInfo {
                name: $name,
                family: $crate::gpu::shader::isa::Family::$fam,
                sig: [
                    $crate::gpu::shader::isa::Ty::$d,
                    $crate::gpu::shader::isa::Ty::$sd,
                    $crate::gpu::shader::isa::Ty::$s0,
                    $crate::gpu::shader::isa::Ty::$s1,
                    $crate::gpu::shader::isa::Ty::$s2,
                ],
            },)*
        ];

        impl Op {
            /// Every opcode, in declaration order.
            pub const ALL: &'static [Op] = &[$(Op::$id),*];

            /// How many opcodes there are.
            pub const COUNT: usize = Op::ALL.len();

            /// Everything known about the opcode.
            pub fn info(self) -> &'static $crate::gpu::shader::isa::OpInfo {
                &INFO[self as usize]
            }

            /// The mnemonic without encoding suffix.
            pub fn name(self) -> &'static str {
                self.info().name
            }
        }
    };
}

mod opcode;

pub use inst::{
    CachePolicy, Dpp8, DppControl, Encoding, Extra, Inst, Mem, Modifiers, Operand, SdwaControl,
    SdwaSel, Special, Wmma,
};
pub use opcode::Op;

/// The encoding family an opcode belongs to (its "home" encoding; VOP1, VOP2 and VOPC opcodes
/// can also be encoded as VOP3, DPP or SDWA).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Scalar ALU, one source.
    Sop1,
    /// Scalar ALU, two sources.
    Sop2,
    /// Scalar ALU with a 16-bit constant.
    Sopk,
    /// Scalar compare.
    Sopc,
    /// Scalar program control.
    Sopp,
    /// Scalar memory.
    Smem,
    /// Vector ALU, one source.
    Vop1,
    /// Vector ALU, two sources.
    Vop2,
    /// Vector compare.
    Vopc,
    /// Vector ALU, three-operand encoding only.
    Vop3,
    /// Packed vector ALU (and matrix instructions).
    Vop3p,
    /// Local data share.
    Ds,
    /// FLAT (generic address space).
    Flat,
    /// FLAT encoding, global segment.
    Global,
    /// FLAT encoding, scratch segment.
    Scratch,
    /// Untyped buffer memory.
    Mubuf,
}

/// The type of one operand slot: how many registers it spans and how an inline constant or a
/// literal in it is interpreted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// The slot is not used.
    N,
    /// A 16-bit integer (low half of a 32-bit register).
    B16,
    /// An IEEE half.
    F16,
    /// A 32-bit integer.
    B32,
    /// An IEEE single.
    F32,
    /// A 64-bit integer (a register pair).
    B64,
    /// An IEEE double (a register pair).
    F64,
    /// Two 16-bit integers in one register.
    PkB16,
    /// Two halves in one register.
    PkF16,
    /// Two singles in a register pair.
    PkF32,
    /// Three registers.
    B96,
    /// Four registers.
    B128,
    /// Eight registers.
    B256,
    /// Sixteen registers.
    B512,
    /// Thirty-two registers (matrix accumulators).
    B1024,
}

impl Ty {
    /// Registers the slot spans (0 for [`Ty::N`]).
    pub const fn dwords(self) -> u32 {
        match self {
            Ty::N => 0,
            Ty::B16 | Ty::F16 | Ty::B32 | Ty::F32 | Ty::PkB16 | Ty::PkF16 => 1,
            Ty::B64 | Ty::F64 | Ty::PkF32 => 2,
            Ty::B96 => 3,
            Ty::B128 => 4,
            Ty::B256 => 8,
            Ty::B512 => 16,
            Ty::B1024 => 32,
        }
    }

    /// Whether an inline constant in this slot is 16 bits wide.
    pub const fn is_16bit(self) -> bool {
        matches!(self, Ty::B16 | Ty::F16 | Ty::PkB16 | Ty::PkF16)
    }

    /// Whether a literal in this slot supplies the high half of a double.
    pub const fn is_f64(self) -> bool {
        matches!(self, Ty::F64)
    }
}

/// Static facts about one opcode.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    /// The LLVM mnemonic without encoding suffix (`v_add_f32`, not `v_add_f32_e32`).
    pub name: &'static str,
    /// Its home encoding.
    pub family: Family,
    /// Operand types: destination, second (scalar) destination, sources 0, 1 and 2.
    pub sig: [Ty; 5],
}

/// Which of the simulated targets an encoding exists on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Targets(u8);

impl Targets {
    /// gfx90a only.
    pub const GFX90A: Self = Self(1);
    /// gfx942 only.
    pub const GFX942: Self = Self(2);
    /// Both.
    pub const ALL: Self = Self(3);

    /// Whether `target` has the encoding.
    pub const fn has(self, target: crate::gpu::target::GfxTarget) -> bool {
        let bit = match target {
            crate::gpu::target::GfxTarget::Gfx90a => 1,
            crate::gpu::target::GfxTarget::Gfx942 => 2,
            // These are GFX9 tables: no row is a GFX11 encoding.
            crate::gpu::target::GfxTarget::Gfx1100 => 0,
        };
        self.0 & bit != 0
    }
}
