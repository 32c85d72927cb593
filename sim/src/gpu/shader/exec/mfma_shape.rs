//! The shapes of the matrix (MAI) instructions: which opcode multiplies which element type in
//! how many blocks of which size, and where each matrix element lives in the wave's registers.
//!
//! The layouts are those of AMD's matrix instruction calculator
//! (`ROCm/amd_matrix_instruction_calculator`, "register to matrix element mapping" of every
//! CDNA2 and CDNA3 MFMA); they reduce to a few formulas, written out in [`Shape::a_slot`] and
//! [`Shape::d_slot`].

use crate::gpu::shader::isa::Op;

/// The type of the A and B elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    /// IEEE single.
    F32,
    /// IEEE half.
    F16,
    /// bfloat16 (the high half of a single).
    Bf16,
    /// Signed 8-bit integer (the product accumulates into an i32).
    I8,
    /// IEEE double (C and D are doubles too).
    F64,
}

impl Elem {
    /// Bits of one element.
    pub const fn bits(self) -> usize {
        match self {
            Elem::F32 => 32,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::I8 => 8,
            Elem::F64 => 64,
        }
    }
}

/// What a B-lane-group pattern or A-block broadcast may do on an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Controls {
    /// CBSZ/ABID (broadcast one block of A to others) are defined.
    pub cbsz_abid: bool,
    /// BLGP (B lane permutation) is defined; on gfx942 f64 opcodes the same bits negate A, B
    /// and C instead.
    pub blgp: bool,
    /// BLGP's bits are the NEG bits of A, B and C (gfx942 f64 matrices).
    pub blgp_is_neg: bool,
}

/// The shape of one MFMA opcode: `blocks` independent products `D = A × B + C` of an `m × k`
/// A by a `k × m` B (all MFMAs are square in M and N).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Rows of A, columns of B (M = N).
    pub m: usize,
    /// The reduction dimension.
    pub k: usize,
    /// Independent blocks.
    pub blocks: usize,
    /// A and B element type.
    pub elem: Elem,
    /// Which modifiers the opcode defines.
    pub controls: Controls,
}

/// Lanes of a wave.
const LANES: usize = 64;

impl Shape {
    /// A or B elements each lane holds.
    pub const fn elems_per_lane(&self) -> usize {
        self.blocks * self.m * self.k / LANES
    }

    /// Registers (dwords) each lane holds of A or B.
    pub const fn ab_dwords(&self) -> usize {
        (self.elems_per_lane() * self.elem.bits()).div_ceil(32)
    }

    /// Registers (dwords) of C and D.
    pub const fn cd_dwords(&self) -> usize {
        let words = if matches!(self.elem, Elem::F64) { 2 } else { 1 };
        self.blocks * self.m * self.m * words / LANES
    }

    /// Where element `e` of lane `lane` of A (or B) belongs: `(block, row of A or column of B,
    /// k)`. Lane `lane` holds row `lane % m`; its lane group `lane / m` is split into the block
    /// (`% blocks`) and the group of `elems_per_lane` consecutive k it holds (`/ blocks`).
    pub const fn a_slot(&self, lane: usize, e: usize) -> (usize, usize, usize) {
        let group = lane / self.m;
        let per = self.elems_per_lane();
        (
            group % self.blocks,
            lane % self.m,
            per * (group / self.blocks) + e,
        )
    }

    /// Where element (register `r` of D or C, lane `lane`) belongs: `(block, i, j)`. For f64
    /// matrices `r` counts register pairs.
    pub const fn d_slot(&self, r: usize, lane: usize) -> (usize, usize, usize) {
        match (self.elem, self.m) {
            // v_mfma_f64_16x16x4f64: pair p holds rows 4p..4p+3, one per 16-lane group.
            (Elem::F64, 16) => (0, 4 * r + lane / 16, lane % 16),
            // v_mfma_f64_4x4x4f64 (4 blocks): one pair; lane = 16 i + 4 block + j.
            (Elem::F64, _) => ((lane / 4) % 4, lane / 16, lane % 4),
            // 32×32: four consecutive rows per register group, the lane halves interleaved.
            (_, 32) => (
                r / 16,
                8 * ((r % 16) / 4) + 4 * (lane / 32) + r % 4,
                lane % 32,
            ),
            // 16×16: rows 4g..4g+3 in lane group g, one block per four registers.
            (_, 16) => (r / 4, 4 * (lane / 16) + r % 4, lane % 16),
            // 4×4 (16 blocks): one block per four lanes, one row per register.
            _ => (lane / 4, r, lane % 4),
        }
    }
}

/// The shape of `op`, if it is a dense MFMA the simulator executes.
pub fn shape(op: Op) -> Option<Shape> {
    use Elem::{Bf16, F16, F32, F64, I8};
    // (m, k, blocks, element); the gfx90a spelling first, then gfx942's.
    let (m, k, blocks, elem) = match op {
        Op::VMfmaF3232x32x1f32 | Op::VMfmaF3232x32x12bF32 => (32, 1, 2, F32),
        Op::VMfmaF3216x16x1f32 | Op::VMfmaF3216x16x14bF32 => (16, 1, 4, F32),
        Op::VMfmaF324x4x1f32 | Op::VMfmaF324x4x116bF32 => (4, 1, 16, F32),
        Op::VMfmaF3232x32x2f32 | Op::VMfmaF3232x32x2F32 => (32, 2, 1, F32),
        Op::VMfmaF3216x16x4f32 | Op::VMfmaF3216x16x4F32 => (16, 4, 1, F32),
        Op::VMfmaF3232x32x4f16 | Op::VMfmaF3232x32x42bF16 => (32, 4, 2, F16),
        Op::VMfmaF3216x16x4f16 | Op::VMfmaF3216x16x44bF16 => (16, 4, 4, F16),
        Op::VMfmaF324x4x4f16 | Op::VMfmaF324x4x416bF16 => (4, 4, 16, F16),
        Op::VMfmaF3232x32x8f16 | Op::VMfmaF3232x32x8F16 => (32, 8, 1, F16),
        Op::VMfmaF3216x16x16f16 | Op::VMfmaF3216x16x16F16 => (16, 16, 1, F16),
        Op::VMfmaI3232x32x4i8 | Op::VMfmaI3232x32x42bI8 => (32, 4, 2, I8),
        Op::VMfmaI3216x16x4i8 | Op::VMfmaI3216x16x44bI8 => (16, 4, 4, I8),
        Op::VMfmaI324x4x4i8 | Op::VMfmaI324x4x416bI8 => (4, 4, 16, I8),
        Op::VMfmaI3232x32x8i8 => (32, 8, 1, I8),
        Op::VMfmaI3216x16x16i8 => (16, 16, 1, I8),
        Op::VMfmaI3232x32x16I8 => (32, 16, 1, I8),
        Op::VMfmaI3216x16x32I8 => (16, 32, 1, I8),
        // bf16 with four elements per lane pair ("_1k" on gfx90a, the only bf16 forms on
        // gfx942).
        Op::VMfmaF3232x32x4bf161k | Op::VMfmaF3232x32x42bBf16 => (32, 4, 2, Bf16),
        Op::VMfmaF3216x16x4bf161k | Op::VMfmaF3216x16x44bBf16 => (16, 4, 4, Bf16),
        Op::VMfmaF324x4x4bf161k | Op::VMfmaF324x4x416bBf16 => (4, 4, 16, Bf16),
        Op::VMfmaF3232x32x8bf161k | Op::VMfmaF3232x32x8Bf16 => (32, 8, 1, Bf16),
        Op::VMfmaF3216x16x16bf161k | Op::VMfmaF3216x16x16Bf16 => (16, 16, 1, Bf16),
        // gfx90a's older bf16 forms: two elements per lane.
        Op::VMfmaF3232x32x2bf16 => (32, 2, 2, Bf16),
        Op::VMfmaF3216x16x2bf16 => (16, 2, 4, Bf16),
        Op::VMfmaF324x4x2bf16 => (4, 2, 16, Bf16),
        Op::VMfmaF3232x32x4bf16 => (32, 4, 1, Bf16),
        Op::VMfmaF3216x16x8bf16 => (16, 8, 1, Bf16),
        Op::VMfmaF6416x16x4f64 | Op::VMfmaF6416x16x4F64 => (16, 4, 1, F64),
        Op::VMfmaF644x4x4f64 | Op::VMfmaF644x4x44bF64 => (4, 4, 4, F64),
        _ => return None,
    };
    let f64_on_gfx942 = matches!(op, Op::VMfmaF6416x16x4F64 | Op::VMfmaF644x4x44bF64);
    Some(Shape {
        m,
        k,
        blocks,
        elem,
        controls: Controls {
            cbsz_abid: blocks > 1 && elem != F64,
            blgp: elem != F64 || f64_on_gfx942,
            blgp_is_neg: f64_on_gfx942,
        },
    })
}
