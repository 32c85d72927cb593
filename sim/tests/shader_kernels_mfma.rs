//! Matrix fused multiply-add (MFMA) on simulated gfx90a and gfx942: every dense f32, f16, bf16,
//! i8 and f64 opcode clang emits for the `__builtin_amdgcn_mfma_*` builtins, the VGPR and AGPR
//! forms of A, B, C and D, the CBSZ/ABID/BLGP modifiers (gfx942 f64: NEG), a K-loop GEMM tile,
//! and the refusals (modifiers an opcode does not define, fp8).
//!
//! The kernels are `shader_data/mfma.cl`, built by `shader_data/build-mfma.sh` into
//! `shader_data/mfma/<target>/mfma.co`. The test packs
//! random A, B and C matrices into per-lane register images with the element-to-register
//! mapping AMD's matrix instruction calculator documents (`ROCm/amd_matrix_instruction_calculator`,
//! "matrix element to register mapping"), runs one wave, unpacks D the same way and compares it
//! bit-exactly with a CPU product. Inputs are small integers and short dyadic fractions, so
//! every sum is exact in f32 and the hardware's accumulation order cannot matter.

// Reference code uses the ISA's matrix names (a, b, c, d, i, j, k, m) and indexes matrices by
// them (needless_range_loop); results are compared bit-exactly on purpose (float_cmp).
#![allow(
    clippy::many_single_char_names,
    clippy::needless_range_loop,
    clippy::float_cmp
)]

mod shader_support;

use std::path::Path;

use amdgpu_loader::NoExternals;
use amdgpu_sim::dispatch::DispatchError;
use amdgpu_sim::target::GfxTarget;
use shader_support::{Arg, Gpu, Loaded, Rng, TARGETS};

/// A and B element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Elem {
    F32,
    F16,
    Bf16,
    I8,
    F64,
}

impl Elem {
    const fn bits(self) -> usize {
        match self {
            Elem::F32 => 32,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::I8 => 8,
            Elem::F64 => 64,
        }
    }
}

/// One kernel's instruction: shape and modifiers.
#[derive(Clone, Copy, Debug)]
struct Case {
    kernel: &'static str,
    m: usize,
    k: usize,
    blocks: usize,
    elem: Elem,
    cbsz: usize,
    abid: usize,
    blgp: usize,
    /// gfx942 f64: negate A (bit 0), B (bit 1), C (bit 2).
    neg: usize,
}

const fn case(kernel: &'static str, m: usize, k: usize, blocks: usize, elem: Elem) -> Case {
    Case {
        kernel,
        m,
        k,
        blocks,
        elem,
        cbsz: 0,
        abid: 0,
        blgp: 0,
        neg: 0,
    }
}

const fn with(c: Case, cbsz: usize, abid: usize, blgp: usize, neg: usize) -> Case {
    Case {
        cbsz,
        abid,
        blgp,
        neg,
        ..c
    }
}

use Elem::{Bf16, F16, F32, F64, I8};

/// Kernels built for both targets (the builtins keep C and D in AGPRs).
const BOTH: &[Case] = &[
    case("mfma_f32_32x32x1f32", 32, 1, 2, F32),
    case("mfma_f32_16x16x1f32", 16, 1, 4, F32),
    case("mfma_f32_4x4x1f32", 4, 1, 16, F32),
    case("mfma_f32_32x32x2f32", 32, 2, 1, F32),
    case("mfma_f32_16x16x4f32", 16, 4, 1, F32),
    case("mfma_f32_32x32x4f16", 32, 4, 2, F16),
    case("mfma_f32_16x16x4f16", 16, 4, 4, F16),
    case("mfma_f32_4x4x4f16", 4, 4, 16, F16),
    case("mfma_f32_32x32x8f16", 32, 8, 1, F16),
    case("mfma_f32_16x16x16f16", 16, 16, 1, F16),
    case("mfma_i32_32x32x4i8", 32, 4, 2, I8),
    case("mfma_i32_16x16x4i8", 16, 4, 4, I8),
    case("mfma_i32_4x4x4i8", 4, 4, 16, I8),
    case("mfma_f32_32x32x4bf16_1k", 32, 4, 2, Bf16),
    case("mfma_f32_16x16x4bf16_1k", 16, 4, 4, Bf16),
    case("mfma_f32_4x4x4bf16_1k", 4, 4, 16, Bf16),
    case("mfma_f32_32x32x8bf16_1k", 32, 8, 1, Bf16),
    case("mfma_f32_16x16x16bf16_1k", 16, 16, 1, Bf16),
    case("mfma_f64_16x16x4f64", 16, 4, 1, F64),
    case("mfma_f64_4x4x4f64", 4, 4, 4, F64),
    // Written-out instructions: C/D in VGPRs, A and/or B in AGPRs.
    case("asm_f32_32x32x8f16_vgpr", 32, 8, 1, F16),
    case("asm_f32_16x16x16f16_vgpr", 16, 16, 1, F16),
    case("asm_f32_32x32x2f32_agpr", 32, 2, 1, F32),
    // B lane-group patterns and A block broadcasts.
    with(case("asm_f32_32x32x8f16_blgp3", 32, 8, 1, F16), 0, 0, 3, 0),
    with(
        case("asm_f32_16x16x16f16_blgp6", 16, 16, 1, F16),
        0,
        0,
        6,
        0,
    ),
    with(case("asm_f32_4x4x1f32_blgp1", 4, 1, 16, F32), 0, 0, 1, 0),
    with(
        case("asm_f32_16x16x4f16_cbsz2_abid1", 16, 4, 4, F16),
        2,
        1,
        0,
        0,
    ),
    with(
        case("asm_i32_4x4x4i8_cbsz4_abid9", 4, 4, 16, I8),
        4,
        9,
        0,
        0,
    ),
    with(
        case("asm_f32_32x32x1f32_cbsz1_abid1_blgp2", 32, 1, 2, F32),
        1,
        1,
        2,
        0,
    ),
];

/// gfx90a only: its i8 K=8/16 forms and the older two-element bf16 forms.
const GFX90A: &[Case] = &[
    case("mfma_i32_32x32x8i8", 32, 8, 1, I8),
    case("mfma_i32_16x16x16i8", 16, 16, 1, I8),
    case("mfma_f32_32x32x2bf16", 32, 2, 2, Bf16),
    case("mfma_f32_16x16x2bf16", 16, 2, 4, Bf16),
    case("mfma_f32_4x4x2bf16", 4, 2, 16, Bf16),
    case("mfma_f32_32x32x4bf16", 32, 4, 1, Bf16),
    case("mfma_f32_16x16x8bf16", 16, 8, 1, Bf16),
];

/// gfx942 only: the i8 forms with two registers of A and B, and the f64 NEG bits.
const GFX942: &[Case] = &[
    case("mfma_i32_32x32x16_i8", 32, 16, 1, I8),
    case("mfma_i32_16x16x32_i8", 16, 32, 1, I8),
    with(
        case("asm_f64_16x16x4f64_neg", 16, 4, 1, F64),
        0,
        0,
        0,
        0b101,
    ),
    with(case("asm_f64_4x4x4f64_neg", 4, 4, 4, F64), 0, 0, 0, 0b010),
];

fn load(gpu: &Gpu) -> Loaded {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/shader_data/mfma")
        .join(gpu.target.name())
        .join("mfma.co");
    gpu.load_path(&path, &NoExternals)
}

/// Register images of one operand: `regs` dwords per lane, lane-major.
struct Image {
    regs: usize,
    words: Vec<u32>,
}

impl Image {
    fn new(regs: usize) -> Self {
        Self {
            regs,
            words: vec![0; 64 * regs],
        }
    }

    /// Write `bits` wide `value` at bit `bit` of lane `lane`'s registers.
    fn put(&mut self, lane: usize, bit: usize, bits: usize, value: u64) {
        for w in 0..bits.div_ceil(32) {
            let word = &mut self.words[lane * self.regs + (bit / 32) + w];
            let part = value >> (32 * w);
            let mask = if bits >= 32 {
                u32::MAX
            } else {
                ((1u32 << bits) - 1) << (bit % 32)
            };
            *word = (*word & !mask) | ((part as u32) << (bit % 32) & mask);
        }
    }

    fn get(&self, lane: usize, bit: usize, bits: usize) -> u64 {
        let mut v = 0u64;
        for w in 0..bits.div_ceil(32) {
            v |= u64::from(self.words[lane * self.regs + bit / 32 + w] >> (bit % 32)) << (32 * w);
        }
        if bits < 64 { v & ((1 << bits) - 1) } else { v }
    }
}

impl Case {
    /// A or B elements per lane.
    fn per_lane(&self) -> usize {
        self.blocks * self.m * self.k / 64
    }

    fn ab_regs(&self) -> usize {
        (self.per_lane() * self.elem.bits()).div_ceil(32)
    }

    fn cd_bits(&self) -> usize {
        if self.elem == F64 { 64 } else { 32 }
    }

    fn cd_regs(&self) -> usize {
        self.blocks * self.m * self.m * self.cd_bits() / 32 / 64
    }

    /// (lane, bit) of A[block][i][k] (and of B[block][k][j] with j for i): the calculator's
    /// "Lane: M * (block + blocks * floor(k / E)) + i, GPR bits: (k % E) * width", where E is the
    /// elements per lane.
    fn ab_slot(&self, block: usize, i: usize, k: usize) -> (usize, usize) {
        let e = self.per_lane();
        (
            self.m * (block + self.blocks * (k / e)) + i,
            (k % e) * self.elem.bits(),
        )
    }

    /// (lane, bit) of C[block][i][j] and D[block][i][j] (bit counts from the first register).
    fn cd_slot(&self, block: usize, i: usize, j: usize) -> (usize, usize) {
        let (lane, reg) = match (self.elem, self.m) {
            // GPR pair floor(i / 4), lane 16 * (i % 4) + j.
            (F64, 16) => (16 * (i % 4) + j, 2 * (i / 4)),
            // Lane 16 * i + 4 * block + j.
            (F64, _) => (16 * i + 4 * block + j, 0),
            // GPR 16 * block + 4 * floor(i / 8) + i % 4, lane 32 * floor(i / 4) % 64 + j.
            (_, 32) => ((32 * (i / 4)) % 64 + j, 16 * block + 4 * (i / 8) + i % 4),
            // GPR 4 * block + i % 4, lane 16 * floor(i / 4) + j.
            (_, 16) => (16 * (i / 4) + j, 4 * block + i % 4),
            // GPR i, lane 4 * block + j.
            _ => (4 * block + j, i),
        };
        (lane, 32 * reg)
    }
}

/// A random element: (bits, value). Chosen so products and sums are exact.
fn element(rng: &mut Rng, elem: Elem) -> (u64, f64) {
    let r = rng.next_u32();
    match elem {
        F32 => {
            let v = f64::from(r % 17) - 8.0;
            (u64::from((v as f32).to_bits()), v)
        }
        F16 => {
            // Quarters in [-8, 8]: exact in f16.
            let v = (f64::from(r % 65) - 32.0) / 4.0;
            (u64::from(f16_bits(v)), v)
        }
        Bf16 => {
            let v = f64::from(r % 33) - 16.0;
            (u64::from((v as f32).to_bits() >> 16), v)
        }
        I8 => (u64::from(r as u8), f64::from(r as u8 as i8)),
        F64 => {
            let v = (f64::from(r % 129) - 64.0) / 8.0;
            (v.to_bits(), v)
        }
    }
}

/// The f16 bits of a value exactly representable as a normal half or zero.
fn f16_bits(v: f64) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let sign = if v < 0.0 { 0x8000u16 } else { 0 };
    let a = v.abs();
    let e = a.log2().floor() as i32;
    let mant = (a / 2f64.powi(e) - 1.0) * 1024.0;
    sign | (((e + 15) as u16) << 10) | mant as u16
}

/// Value of an element's bits (the inverse of [`element`]).
fn value(elem: Elem, bits: u64) -> f64 {
    match elem {
        F32 => f64::from(f32::from_bits(bits as u32)),
        F16 => {
            let h = bits as u16;
            let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
            let e = i32::from((h >> 10) & 0x1f);
            let m = f64::from(h & 0x3ff);
            if e == 0 {
                s * m * 2f64.powi(-24)
            } else {
                s * (1.0 + m / 1024.0) * 2f64.powi(e - 15)
            }
        }
        Bf16 => f64::from(f32::from_bits((bits as u32) << 16)),
        I8 => f64::from(bits as u8 as i8),
        F64 => f64::from_bits(bits),
    }
}

/// The lane a lane reads B from under a BLGP pattern.
fn blgp_lane(blgp: usize, lane: usize) -> usize {
    match blgp {
        1 => lane % 32,
        2 => 32 + lane % 32,
        3 => (lane + 16) % 64,
        4..=7 => 16 * (blgp - 4) + lane % 16,
        _ => lane,
    }
}

/// Run `case` once with random inputs and compare D with the CPU product.
fn check(gpu: &Gpu, co: &Loaded, c: &Case, seed: u64) {
    let mut rng = Rng::new(seed);
    let (m, kk, nb) = (c.m, c.k, c.blocks);
    let bits = c.elem.bits();
    let mut a_img = Image::new(c.ab_regs());
    let mut b_img = Image::new(c.ab_regs());
    let mut c_img = Image::new(c.cd_regs());
    let mut av = vec![vec![vec![0.0; kk]; m]; nb];
    let mut cv = vec![vec![vec![0.0; m]; m]; nb];
    for blk in 0..nb {
        for i in 0..m {
            for k in 0..kk {
                let (abits, a) = element(&mut rng, c.elem);
                let (lane, bit) = c.ab_slot(blk, i, k);
                a_img.put(lane, bit, bits, abits);
                av[blk][i][k] = a;
                let (bbits, _) = element(&mut rng, c.elem);
                b_img.put(lane, bit, bits, bbits);
            }
            for j in 0..m {
                let (lane, bit) = c.cd_slot(blk, i, j);
                let (cbits, v) = match c.elem {
                    F64 => {
                        let v = f64::from(rng.next_u32() % 201) - 100.0;
                        (v.to_bits(), v)
                    }
                    I8 => {
                        let v = rng.next_u32();
                        (u64::from(v), f64::from(v as i32))
                    }
                    _ => {
                        let v = f64::from(rng.next_u32() % 201) - 100.0;
                        (u64::from((v as f32).to_bits()), v)
                    }
                };
                c_img.put(lane, bit, c.cd_bits(), cbits);
                cv[blk][i][j] = v;
            }
        }
    }
    let buf = |img: &Image| gpu.buffer_u32(&img.words);
    let (a, b, cb) = (buf(&a_img), buf(&b_img), buf(&c_img));
    let d = gpu.buffer(c_img.words.len() * 4);
    gpu.run(
        co,
        c.kernel,
        [64, 1, 1],
        [64, 1, 1],
        &[
            Arg::Ptr(a.va),
            Arg::Ptr(b.va),
            Arg::Ptr(cb.va),
            Arg::Ptr(d.va),
        ],
    );
    let d_img = Image {
        regs: c.cd_regs(),
        words: d.u32s(),
    };
    let sign = |bit: usize| if c.neg & bit != 0 { -1.0 } else { 1.0 };
    for blk in 0..nb {
        let a_blk = ((blk >> c.cbsz) << c.cbsz) + c.abid;
        for i in 0..m {
            for j in 0..m {
                // B[blk][k][j] as the instruction reads it: from the BLGP source lane.
                let b_at = |k: usize| {
                    let (lane, bit) = c.ab_slot(blk, j, k);
                    value(c.elem, b_img.get(blgp_lane(c.blgp, lane), bit, bits))
                };
                let (lane, bit) = c.cd_slot(blk, i, j);
                let got = d_img.get(lane, bit, c.cd_bits());
                let want = match c.elem {
                    I8 => {
                        let mut s = cv[blk][i][j] as i64;
                        for k in 0..kk {
                            s += av[a_blk][i][k] as i64 * b_at(k) as i64;
                        }
                        u64::from(s as i32 as u32)
                    }
                    F64 => {
                        let mut s = sign(4) * cv[blk][i][j];
                        for k in 0..kk {
                            s += sign(1) * av[a_blk][i][k] * sign(2) * b_at(k);
                        }
                        s.to_bits()
                    }
                    _ => {
                        let mut s = cv[blk][i][j];
                        for k in 0..kk {
                            s += av[a_blk][i][k] * b_at(k);
                        }
                        u64::from((s as f32).to_bits())
                    }
                };
                assert_eq!(
                    got,
                    want,
                    "{} {}: D[{blk}][{i}][{j}] (lane {lane}, bit {bit})",
                    gpu.dir(),
                    c.kernel
                );
            }
        }
    }
}

fn cases(target: GfxTarget) -> Vec<Case> {
    let extra = match target {
        GfxTarget::Gfx90a => GFX90A,
        _ => GFX942,
    };
    BOTH.iter().chain(extra).copied().collect()
}

#[test]
fn every_dense_mfma_opcode_matches_the_cpu_product() {
    for target in TARGETS {
        let gpu = Gpu::new(target);
        let co = load(&gpu);
        for (n, c) in cases(target).iter().enumerate() {
            check(&gpu, &co, c, 0x6d66_6d61 + n as u64);
        }
    }
}

#[test]
fn a_k_loop_of_mfma_computes_a_32x32_f16_gemm_tile() {
    const K: usize = 64;
    for target in TARGETS {
        let gpu = Gpu::new(target);
        let co = load(&gpu);
        let mut rng = Rng::new(7);
        let mut draw = |n: usize| -> (Vec<u16>, Vec<f64>) {
            (0..n)
                .map(|_| {
                    let (bits, v) = element(&mut rng, F16);
                    (bits as u16, v)
                })
                .unzip()
        };
        let (a_bits, a) = draw(32 * K);
        let (b_bits, b) = draw(K * 32);
        let pack = |h: &[u16]| -> Vec<u32> {
            h.chunks(2)
                .map(|p| u32::from(p[0]) | u32::from(p[1]) << 16)
                .collect()
        };
        let ab = gpu.buffer_u32(&pack(&a_bits));
        let bb = gpu.buffer_u32(&pack(&b_bits));
        let d = gpu.buffer(32 * 32 * 4);
        gpu.run(
            &co,
            "gemm_f16_32x32",
            [64, 1, 1],
            [64, 1, 1],
            &[
                Arg::Ptr(ab.va),
                Arg::Ptr(bb.va),
                Arg::Ptr(d.va),
                Arg::U32(K as u32),
            ],
        );
        let got = d.u32s();
        for i in 0..32 {
            for j in 0..32 {
                let want: f64 = (0..K).map(|k| a[i * K + k] * b[k * 32 + j]).sum();
                assert_eq!(
                    f32::from_bits(got[i * 32 + j]),
                    want as f32,
                    "{} D[{i}][{j}]",
                    gpu.dir()
                );
            }
        }
    }
}

/// Run `kernel` and return the illegal-instruction text it stops with.
fn refused(gpu: &Gpu, co: &Loaded, kernel: &str, c_regs: usize) -> String {
    let ab = gpu.buffer(64 * 16);
    let c = gpu.buffer(64 * c_regs * 4);
    let d = gpu.buffer(64 * c_regs * 4);
    let err = gpu
        .dispatch(
            co,
            kernel,
            [64, 1, 1],
            [64, 1, 1],
            &[
                Arg::Ptr(ab.va),
                Arg::Ptr(ab.va),
                Arg::Ptr(c.va),
                Arg::Ptr(d.va),
            ],
        )
        .expect_err(kernel);
    match err {
        DispatchError::IllegalInstruction { mnemonic, .. } => mnemonic,
        other => panic!("{kernel}: {other}"),
    }
}

#[test]
fn modifiers_an_opcode_does_not_define_and_fp8_are_illegal_instructions() {
    for target in TARGETS {
        let gpu = Gpu::new(target);
        let co = load(&gpu);
        let why = refused(&gpu, &co, "asm_f32_32x32x8f16_cbsz1", 16);
        assert!(
            why.contains("cbsz:1") && why.contains("CBSZ is not defined"),
            "{why}"
        );
        if target == GfxTarget::Gfx90a {
            let why = refused(&gpu, &co, "asm_f64_16x16x4f64_blgp5", 8);
            assert!(why.contains("BLGP is not defined"), "{why}");
        } else {
            let why = refused(&gpu, &co, "asm_f32_16x16x32_fp8_fp8", 4);
            assert!(
                why.starts_with("v_mfma_f32_16x16x32_fp8_fp8") && why.contains("not simulated"),
                "{why}"
            );
        }
    }
}
