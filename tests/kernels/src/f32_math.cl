/*
 * KERNEL  f32_math
 * WHAT    The raw transcendental / approximate VALU instructions, one
 *         builtin each: v_rcp_f32, v_rsq_f32, v_sqrt_f32, v_exp_f32 (2^x),
 *         v_log_f32 (log2), v_sin_f32, v_cos_f32 (argument in revolutions),
 *         v_fract_f32, v_ldexp_f32, v_frexp_mant_f32, v_frexp_exp_i32_f32.
 * ARGS    0 x   : global const float*  (n elements)
 *         1 k   : global const int*    (n elements, exponent for ldexp)
 *         2 out : global float*        (n*12 elements, output)
 *         3 n   : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     Rust, x: f32 (compute the reference in f64, then compare):
 *          o[0]  = 1/x              o[1] = 1/sqrt(x)      o[2] = sqrt(x)
 *          o[3]  = 2^x              o[4] = log2(x)
 *          o[5]  = sin(2*pi*x)      o[6] = cos(2*pi*x)
 *          o[7]  = x - floor(x), clamped to <= 0x3f7fffff (largest f32 < 1)
 *          o[8]  = x * 2^((k[i] & 63) - 32)   (exact: ldexp, RNE on underflow)
 *          o[9]  = frexp mantissa of x in [0.5, 1) with x's sign
 *          o[10] = frexp exponent of x, as f32 (int converted; e.g. 8.0 -> 4.0)
 *          o[11] = x * (1/x) computed as v_mul(x, v_rcp(x))
 * INPUTS  Use x positive and normal for 0..4 and 11; |x| <= 1 for 5, 6
 *         (hardware valid domain is |x| <= 256); |x| < 2^20 for 7.
 * COMPARE o[0..5]: within 1 ulp of the correctly rounded value (hardware
 *         spec, not bit-exact; a simulator using libm is fine).
 *         o[5], o[6]: absolute error <= 2^-20.
 *         o[7..11]: bit-exact. o[11]: within 2 ulp of 1.0.
 */
#include "aq.h"

#define NOUT 12

__kernel void f32_math(__global const float *px, __global const int *pk,
                       __global float *out, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    float x = px[i];
    int e = (pk[i] & 63) - 32;
    __global float *o = out + (ulong)i * NOUT;

    o[0] = __builtin_amdgcn_rcpf(x);
    o[1] = __builtin_amdgcn_rsqf(x);
    o[2] = __builtin_amdgcn_sqrtf(x);
    o[3] = __builtin_amdgcn_exp2f(x);
    o[4] = __builtin_amdgcn_logf(x);
    o[5] = __builtin_amdgcn_sinf(x);
    o[6] = __builtin_amdgcn_cosf(x);
    o[7] = __builtin_amdgcn_fractf(x);
    o[8] = __builtin_amdgcn_ldexpf(x, e);
    o[9] = __builtin_amdgcn_frexp_mantf(x);
    o[10] = (float)__builtin_amdgcn_frexp_expf(x);
    o[11] = x * __builtin_amdgcn_rcpf(x);
}
