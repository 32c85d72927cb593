/*
 * KERNEL  f64_ops
 * WHAT    Double precision: add/sub/mul, correctly rounded div and sqrt
 *         (v_div_scale_f64/v_rcp_f64/v_div_fmas_f64/v_div_fixup_f64 and the
 *         v_rsq_f64 Newton sequence), fma, minNum/maxNum, floor/trunc/rint,
 *         and conversions with i32, i64, f32.
 * ARGS    0 a   : global const double*  (n elements)
 *         1 b   : global const double*  (n elements)
 *         2 c   : global const double*  (n elements)
 *         3 ia  : global const int*     (n elements)
 *         4 la  : global const long*    (n elements)
 *         5 out : global ulong*         (n*17 elements, output: raw bits)
 *         6 n   : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     Rust, a,b,c: f64, k = ia[i], l = la[i]; o = &mut out[17*i..]; bits = to_bits():
 *          o[0] = bits(a + b)   o[1] = bits(a - b)   o[2] = bits(a * b)
 *          o[3] = bits(a / b)   o[4] = bits(a.mul_add(b, c))
 *          o[5] = bits(a.sqrt())
 *          o[6] = bits(a.min(b))  o[7] = bits(a.max(b))   (NaN operand ignored)
 *          o[8] = bits(a.floor()) o[9] = bits(a.trunc()) o[10] = bits(a.round_ties_even())
 *          o[11] = bits(k as f64)
 *          o[12] = (a as i32) as u32 as u64        (saturating; keep |a| < 2^31)
 *          o[13] = (a as f32).to_bits() as u64     (RNE)
 *          o[14] = bits(f32::from_bits(k as u32) as f64)   (exact)
 *          o[15] = bits(l as f64)                  (RNE)
 *          o[16] = (a as i64) as u64               (truncation; keep |a| < 2^63)
 * COMPARE bit-exact for non-NaN results, denormals included
 *         (FLOAT_DENORM_MODE_16_64 = 3). NaN results: is-NaN only.
 */
#include "aq.h"

#define NOUT 17

__kernel void f64_ops(__global const double *pa, __global const double *pb,
                      __global const double *pc, __global const int *pia,
                      __global const long *pla, __global ulong *out, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    double a = pa[i], b = pb[i], c = pc[i];
    int k = pia[i];
    long l = pla[i];
    __global ulong *o = out + (ulong)i * NOUT;

    o[0] = as_ulong(a + b);
    o[1] = as_ulong(a - b);
    o[2] = as_ulong(a * b);
    o[3] = as_ulong(a / b);
    o[4] = as_ulong(__builtin_fma(a, b, c));
    o[5] = as_ulong(__builtin_sqrt(a));
    o[6] = as_ulong(__builtin_fmin(a, b));
    o[7] = as_ulong(__builtin_fmax(a, b));
    o[8] = as_ulong(__builtin_floor(a));
    o[9] = as_ulong(__builtin_trunc(a));
    o[10] = as_ulong(__builtin_rint(a));
    o[11] = as_ulong((double)k);
    o[12] = (ulong)(uint)(int)a;
    o[13] = (ulong)as_uint((float)a);
    o[14] = as_ulong((double)as_float((uint)k));
    o[15] = as_ulong((double)l);
    o[16] = (ulong)(long)a;
}
