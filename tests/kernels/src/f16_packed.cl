/*
 * KERNEL  f16_packed
 * WHAT    Packed half-precision and packed 16-bit integer math on 2-element
 *         vectors, so the compiler emits VOP3P instructions:
 *         v_pk_add_f16, v_pk_mul_f16, v_pk_fma_f16, v_pk_min_f16,
 *         v_pk_max_f16, v_pk_add_u16, v_pk_sub_u16, v_pk_mul_lo_u16,
 *         v_pk_lshlrev_b16 (exact set varies per target; see README).
 * ARGS    0 a    : global const half2*    (n elements)
 *         1 b    : global const half2*    (n elements)
 *         2 c    : global const half2*    (n elements)
 *         3 ia   : global const ushort2*  (n elements)
 *         4 ib   : global const ushort2*  (n elements)
 *         5 out  : global half2*          (n*6 elements, output)
 *         6 iout : global ushort2*        (n*4 elements, output)
 *         7 n    : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     Per component j in {x (low 16 bits), y (high 16 bits)}, f16 values
 *         a, b, c; o = out[6*i..], q = iout[4*i..]:
 *          o[0] = a + b        o[1] = a * b        o[2] = fma(a, b, c)
 *          o[3] = minNum(a, b) o[4] = maxNum(a, b) o[5] = a - b
 *         each rounded once to f16 (RNE, f16 denormals preserved,
 *         FLOAT_DENORM_MODE_16_64 = 3). Reference: compute in f64 with
 *         mul_add for o[2] and convert to f16 once (exact for o[0], o[1],
 *         o[3..6]; for o[2] this is exact when all |inputs| lie in
 *         [2^-8, 2^8] or are zero -- use such inputs).
 *          q[0] = ia + ib   q[1] = ia - ib   q[2] = ia * ib    (u16 wrapping)
 *          q[3] = ia << (ib & 15)                               (u16)
 * COMPARE bit-exact for non-NaN results; NaN: is-NaN only.
 */
#include "aq.h"

__kernel void f16_packed(__global const half2 *pa, __global const half2 *pb,
                         __global const half2 *pc, __global const ushort2 *pia,
                         __global const ushort2 *pib, __global half2 *out,
                         __global ushort2 *iout, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    half2 a = pa[i], b = pb[i], c = pc[i];
    ushort2 ia = pia[i], ib = pib[i];
    __global half2 *o = out + (ulong)i * 6;
    __global ushort2 *q = iout + (ulong)i * 4;

    o[0] = a + b;
    o[1] = a * b;
    o[2] = __builtin_elementwise_fma(a, b, c);
    o[3] = __builtin_elementwise_min(a, b);
    o[4] = __builtin_elementwise_max(a, b);
    o[5] = a - b;
    q[0] = ia + ib;
    q[1] = ia - ib;
    q[2] = ia * ib;
    q[3] = ia << (ib & (ushort)15);
}
