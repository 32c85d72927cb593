/*
 * KERNELS wmma_f32_f16, wmma_i32_iu8 -- one wave32 wave (32 work-items, one
 *         workgroup) runs one clang-compiled WMMA on per-lane register images:
 *           in:  32 dwords per lane (A in dwords 0-7, B in 8-15, C in 16-23;
 *                iu8: A and B in the first 4 of theirs)
 *           out: 8 dwords per lane, D
 *         The test packs A, B and C with RDNA3's layouts and unpacks D the
 *         same way (sim/tests/shader_gfx11_ops.rs); iu8 has a signed A and an
 *         unsigned B, no clamp.
 * KERNEL  dpp8_reverse: x[l] = x[l ^ 7] for every lane of the wave32 wave,
 *         through __builtin_amdgcn_mov_dpp8 (v_mov_b32_dpp dpp8:[7,...,0]).
 * BUILD   sim/tests/shader_data/build-gfx11-ops.sh (clang-19, gfx1100).
 */
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

typedef half v16h __attribute__((ext_vector_type(16)));
typedef float v8f __attribute__((ext_vector_type(8)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v8i __attribute__((ext_vector_type(8)));

kernel void wmma_f32_f16(global const uint *in, global uint *out) {
    uint l = __builtin_amdgcn_workitem_id_x();
    global const uint *p = in + 32 * l;
    v16h a = *(global const v16h *)p;
    v16h b = *(global const v16h *)(p + 8);
    v8f c = *(global const v8f *)(p + 16);
    *(global v8f *)(out + 8 * l) = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, c);
}

kernel void wmma_i32_iu8(global const uint *in, global uint *out) {
    uint l = __builtin_amdgcn_workitem_id_x();
    global const uint *p = in + 32 * l;
    v4i a = *(global const v4i *)p;
    v4i b = *(global const v4i *)(p + 8);
    v8i c = *(global const v8i *)(p + 16);
    *(global v8i *)(out + 8 * l) =
        __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(true, a, false, b, c, false);
}

/* dpp8:[7,6,5,4,3,2,1,0]: lane i of each group of eight reads lane 7 - i. */
#define REVERSE (7 | 6 << 3 | 5 << 6 | 4 << 9 | 3 << 12 | 2 << 15 | 1 << 18 | 0 << 21)

kernel void dpp8_reverse(global int *x) {
    uint l = __builtin_amdgcn_workitem_id_x();
    x[l] = __builtin_amdgcn_mov_dpp8(x[l], REVERSE);
}
