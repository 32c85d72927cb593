/*
 * KERNEL  f32_ops
 * WHAT    Single-precision arithmetic that must be correctly rounded:
 *         add/sub/mul/div/fma/sqrt, IEEE minNum/maxNum (NaN inputs),
 *         floor/ceil/trunc/rint, copysign, comparisons, and conversions
 *         int<->float and f32<->f16.
 *         Division and sqrt are the correctly rounded expansions (built with
 *         -cl-fp32-correctly-rounded-divide-sqrt: v_div_scale/v_div_fmas/
 *         v_div_fixup, and the scaled v_sqrt sequence); FP_CONTRACT is off,
 *         so a*b+c is never fused behind your back.
 * ARGS    0 a   : global const float*  (n elements)
 *         1 b   : global const float*  (n elements)
 *         2 c   : global const float*  (n elements)
 *         3 ia  : global const int*    (n elements)
 *         4 out : global uint*         (n*24 elements, output: raw bits)
 *         5 n   : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     Rust, a,b,c: f32, k = ia[i]; o = &mut out[24*i..]; bits(x) = x.to_bits():
 *          o[0] = bits(a + b)    o[1] = bits(a - b)    o[2] = bits(a * b)
 *          o[3] = bits(a / b)    o[4] = bits(a.mul_add(b, c))
 *          o[5] = bits(a.min(b)) o[6] = bits(a.max(b))   (IEEE minNum/maxNum:
 *                 a NaN operand is ignored; both NaN -> NaN; for a pair
 *                 of zeros of opposite sign do not check the sign)
 *          o[7] = bits(a.floor()) o[8] = bits(a.ceil()) o[9] = bits(a.trunc())
 *          o[10] = bits(a.round_ties_even())
 *          o[11] = (a as i32) as u32     (saturating, NaN -> 0; matches v_cvt_i32_f32)
 *          o[12] = a as u32              (saturating, NaN and negatives -> 0)
 *          o[13] = bits(k as f32)        (round to nearest even)
 *          o[14] = bits((k as u32) as f32)
 *          o[15] = f16::from_f32(a).to_bits() as u32   (RNE, overflow -> inf)
 *          o[16] = bits(f16::from_bits(k as u16).to_f32())   (exact)
 *          o[17] = bits(a.sqrt())
 *          o[18] = bits(a.copysign(b))
 *          o[19] = (a<b) | (a<=b)<<1 | (a==b)<<2 | (a!=b)<<3 | (a>=b)<<4
 *                  | (a>b)<<5 | a.is_nan()<<6 | (a.is_nan()||b.is_nan())<<7
 *          o[20] = bits(a.abs())   o[21] = bits(-a)
 *          o[22] = bits((a as f64 * b as f64) as f32)   (f32->f64->f32 round trip)
 *          o[23] = bits(1.0 / a)   (correctly rounded reciprocal)
 * COMPARE bit-exact for every non-NaN result, including denormals (the
 *         kernel descriptor enables f32 denormals: FLOAT_DENORM_MODE_32 = 3).
 *         A NaN result must be a NaN (payload not checked). Conversions
 *         o[11], o[12] with out-of-range inputs are undefined in C; tests
 *         should keep |a| < 2^31 there or accept the hardware's saturation.
 */
#include "aq.h"

#define NOUT 24

__kernel void f32_ops(__global const float *pa, __global const float *pb,
                      __global const float *pc, __global const int *pia,
                      __global uint *out, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    float a = pa[i], b = pb[i], c = pc[i];
    int k = pia[i];
    __global uint *o = out + (ulong)i * NOUT;

    o[0] = as_uint(a + b);
    o[1] = as_uint(a - b);
    o[2] = as_uint(a * b);
    o[3] = as_uint(a / b);
    o[4] = as_uint(__builtin_fmaf(a, b, c));
    o[5] = as_uint(__builtin_fminf(a, b));
    o[6] = as_uint(__builtin_fmaxf(a, b));
    o[7] = as_uint(__builtin_floorf(a));
    o[8] = as_uint(__builtin_ceilf(a));
    o[9] = as_uint(__builtin_truncf(a));
    o[10] = as_uint(__builtin_rintf(a));
    o[11] = (uint)(int)a;
    o[12] = (uint)a;
    o[13] = as_uint((float)k);
    o[14] = as_uint((float)(uint)k);
    o[15] = (uint)as_ushort((half)a);
    o[16] = as_uint((float)as_half((ushort)k));
    o[17] = as_uint(__builtin_sqrtf(a));
    o[18] = as_uint(__builtin_copysignf(a, b));
    o[19] = (uint)(a < b) | (uint)(a <= b) << 1 | (uint)(a == b) << 2 |
            (uint)(a != b) << 3 | (uint)(a >= b) << 4 | (uint)(a > b) << 5 |
            (uint)__builtin_isnan(a) << 6 | (uint)__builtin_isunordered(a, b) << 7;
    o[20] = as_uint(__builtin_fabsf(a));
    o[21] = as_uint(-a);
    o[22] = as_uint((float)((double)a * (double)b));
    o[23] = as_uint(1.0f / a);
}
