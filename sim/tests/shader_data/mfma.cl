/*
 * KERNELS mfma_* -- one wave (64 work-items, one workgroup) runs one matrix
 *         instruction on per-lane operands:
 *           d[lane] = MFMA(a[lane], b[lane], c[lane])
 *         where a, b, c, d are arrays of per-lane register images (lane-major:
 *         lane l's registers are element l of each array). The test packs the
 *         A, B, C matrices into those images with the documented layouts and
 *         unpacks D the same way.
 *         Builtin kernels: the compiler picks the registers (it keeps C and D
 *         in AGPRs). asm kernels: fixed forms -- C/D in VGPRs, A in AGPRs, and
 *         the CBSZ/ABID/BLGP (gfx942 f64: NEG) modifiers.
 * KERNEL  gemm_f16_32x32: a 32x32 tile of D = A(32xK) * B(Kx32), row-major
 *         f16 inputs, f32 output, K a multiple of 8: a loop of
 *         v_mfma_f32_32x32x8f16 accumulating in AGPRs, as a matmul does.
 * BUILD   sim/tests/shader_data/build-mfma.sh (clang-19, gfx90a and gfx942).
 */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

typedef float v4f __attribute__((ext_vector_type(4)));
typedef float v16f __attribute__((ext_vector_type(16)));
typedef float v32f __attribute__((ext_vector_type(32)));
typedef half v4h __attribute__((ext_vector_type(4)));
typedef short v2s __attribute__((ext_vector_type(2)));
typedef short v4s __attribute__((ext_vector_type(4)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v16i __attribute__((ext_vector_type(16)));
typedef int v32i __attribute__((ext_vector_type(32)));
typedef double v4d __attribute__((ext_vector_type(4)));

#define LANE() __builtin_amdgcn_workitem_id_x()

/* A kernel around one builtin: A type TA, B type TA, C/D type TC. */
#define MFMA(name, TA, TC)                                                    \
    __attribute__((reqd_work_group_size(64, 1, 1)))                           \
    kernel void mfma_##name(global const TA *a, global const TA *b,           \
                            global const TC *c, global TC *d) {               \
        uint l = LANE();                                                      \
        d[l] = __builtin_amdgcn_mfma_##name(a[l], b[l], c[l], 0, 0, 0);       \
    }

MFMA(f32_32x32x1f32, float, v32f)
MFMA(f32_16x16x1f32, float, v16f)
MFMA(f32_4x4x1f32, float, v4f)
MFMA(f32_32x32x2f32, float, v16f)
MFMA(f32_16x16x4f32, float, v4f)
MFMA(f32_32x32x4f16, v4h, v32f)
MFMA(f32_16x16x4f16, v4h, v16f)
MFMA(f32_4x4x4f16, v4h, v4f)
MFMA(f32_32x32x8f16, v4h, v16f)
MFMA(f32_16x16x16f16, v4h, v4f)
MFMA(i32_32x32x4i8, int, v32i)
MFMA(i32_16x16x4i8, int, v16i)
MFMA(i32_4x4x4i8, int, v4i)
MFMA(f32_32x32x4bf16_1k, v4s, v32f)
MFMA(f32_16x16x4bf16_1k, v4s, v16f)
MFMA(f32_4x4x4bf16_1k, v4s, v4f)
MFMA(f32_32x32x8bf16_1k, v4s, v16f)
MFMA(f32_16x16x16bf16_1k, v4s, v4f)
MFMA(f64_16x16x4f64, double, v4d)
MFMA(f64_4x4x4f64, double, double)
#if defined(__gfx90a__)
MFMA(i32_32x32x8i8, int, v16i)
MFMA(i32_16x16x16i8, int, v4i)
MFMA(f32_32x32x2bf16, v2s, v32f)
MFMA(f32_16x16x2bf16, v2s, v16f)
MFMA(f32_4x4x2bf16, v2s, v4f)
MFMA(f32_32x32x4bf16, v2s, v16f)
MFMA(f32_16x16x8bf16, v2s, v4f)
#else
MFMA(i32_32x32x16_i8, long, v16i)
MFMA(i32_16x16x32_i8, long, v4i)
#endif

/* A kernel around one instruction written out: constraint strings say where
 * A, B and C/D live ("v" VGPRs, "a" AGPRs); MODS is appended. */
#define ASM(name, insn, TA, TC, CA, CB, CD, MODS)                            \
    __attribute__((reqd_work_group_size(64, 1, 1)))                           \
    kernel void asm_##name(global const TA *a, global const TA *b,            \
                           global const TC *c, global TC *d) {                \
        uint l = LANE();                                                      \
        TC r = c[l];                                                          \
        __asm__ volatile(insn " %0, %1, %2, %0 " MODS                         \
                         : "+" CD(r) : CA(a[l]), CB(b[l]));                   \
        d[l] = r;                                                             \
    }

/* C and D in VGPRs, A in AGPRs. */
ASM(f32_32x32x8f16_vgpr, "v_mfma_f32_32x32x8f16", v4h, v16f, "a", "v", "v", "")
ASM(f32_16x16x16f16_vgpr, "v_mfma_f32_16x16x16f16", v4h, v4f, "v", "a", "v", "")
/* C and D in AGPRs, A and B in AGPRs. */
ASM(f32_32x32x2f32_agpr, "v_mfma_f32_32x32x2f32", float, v16f, "a", "a", "a", "")
/* B lane-group patterns. */
ASM(f32_32x32x8f16_blgp3, "v_mfma_f32_32x32x8f16", v4h, v16f, "v", "v", "v", "blgp:3")
ASM(f32_16x16x16f16_blgp6, "v_mfma_f32_16x16x16f16", v4h, v4f, "v", "v", "a", "blgp:6")
ASM(f32_4x4x1f32_blgp1, "v_mfma_f32_4x4x1f32", float, v4f, "v", "v", "v", "blgp:1")
/* Block broadcasts of A. */
ASM(f32_16x16x4f16_cbsz2_abid1, "v_mfma_f32_16x16x4f16", v4h, v16f, "v", "v", "a", "cbsz:2 abid:1")
ASM(i32_4x4x4i8_cbsz4_abid9, "v_mfma_i32_4x4x4i8", int, v4i, "v", "v", "v", "cbsz:4 abid:9")
ASM(f32_32x32x1f32_cbsz1_abid1_blgp2, "v_mfma_f32_32x32x1f32", float, v32f, "v", "v", "a", "cbsz:1 abid:1 blgp:2")
/* Modifiers the opcode does not define: refused by the simulator. */
ASM(f32_32x32x8f16_cbsz1, "v_mfma_f32_32x32x8f16", v4h, v16f, "v", "v", "v", "cbsz:1")
#if defined(__gfx90a__)
ASM(f64_16x16x4f64_blgp5, "v_mfma_f64_16x16x4f64", double, v4d, "v", "v", "v", "blgp:5")
#else
/* gfx942: the f64 opcodes' BLGP bits negate A, B and C. */
ASM(f64_16x16x4f64_neg, "v_mfma_f64_16x16x4_f64", double, v4d, "v", "v", "v", "neg:[1,0,1]")
ASM(f64_4x4x4f64_neg, "v_mfma_f64_4x4x4_4b_f64", double, double, "v", "a", "v", "neg:[0,1,0]")
/* An fp8 opcode the simulator does not execute. */
ASM(f32_16x16x32_fp8_fp8, "v_mfma_f32_16x16x32_fp8_fp8", long, v4f, "v", "v", "v", "")
#endif

/* D(32x32, f32) = A(32xK, f16) * B(Kx32, f16), row-major, K % 8 == 0. */
__attribute__((reqd_work_group_size(64, 1, 1)))
kernel void gemm_f16_32x32(global const half *A, global const half *B,
                           global float *D, uint K) {
    uint l = LANE();
    uint i = l % 32, j = l % 32, q = l / 32;
    v16f acc = 0;
    for (uint kk = 0; kk < K; kk += 8) {
        v4h a, b;
        for (uint t = 0; t < 4; t++) {
            a[t] = A[i * K + kk + 4 * q + t];
            b[t] = B[(kk + 4 * q + t) * 32 + j];
        }
        acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, acc, 0, 0, 0);
    }
    for (uint r = 0; r < 16; r++)
        D[(8 * (r / 4) + 4 * q + r % 4) * 32 + j] = acc[r];
}
