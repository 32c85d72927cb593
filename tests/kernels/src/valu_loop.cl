/*
 * KERNEL  valu_loop
 * WHAT    A VALU-heavy loop for throughput figures (`aqueduct bench`): each
 *         iteration is seven dependent 32-bit operations per lane in the
 *         source (two fma, a mul, an add and a max in f32; an add, an xor
 *         and a shift-or in u32) and no memory access; one store at the end.
 *         The loop is not unrolled. clang-19 turns the body into 9 VALU
 *         instructions on gfx90a and gfx942 (the shift-or becomes v_and +
 *         v_lshl_or) plus the scalar loop counter; `aqueduct bench` counts
 *         lane operations with that number, and tools/tests/bench.rs checks
 *         it against the committed .co5.dis listings.
 * ARGS    0 out   : global uint*  (grid elements, output)
 *         1 iters : uint          (loop iterations, uniform)
 * GRID    1-D, any shape.
 * REF     For work-item i, in f32 with every operation rounded once (no
 *         contraction beyond the explicit fma) and u32 wrapping:
 *           a = (float)i, d = 0, e = 1, f = 0; u = i, x = 0, s = 1
 *           repeat iters times:
 *             a = fma(a, 1.0000001f, 0.5f); d = a * 0.999f; e = fma(a, d, e);
 *             f = max(f + d, e);  u = u + i; x = x ^ u; s = s << 1 | x & 1
 *           out[i] = bits of (a + e + f) ^ x ^ s
 * COMPARE exact (tests/kernels/checks/float.rs).
 */
#include "aq.h"

__kernel void valu_loop(__global uint *out, uint iters)
{
    uint i = aq_gid_x();
    float a = (float)i, d = 0.0f, e = 1.0f, f = 0.0f;
    uint u = i, x = 0, s = 1;
#pragma clang loop unroll(disable)
    for (uint k = 0; k < iters; k++) {
        a = __builtin_fmaf(a, 1.0000001f, 0.5f);
        d = a * 0.999f;
        e = __builtin_fmaf(a, d, e);
        f = __builtin_fmaxf(f + d, e);
        u = u + i;
        x = x ^ u;
        s = s << 1 | (x & 1);
    }
    out[i] = as_uint(a + e + f) ^ x ^ s;
}
