/*
 * KERNEL  saxpy
 * WHAT    y = a*x + y in single precision, one fused multiply-add per element.
 * ARGS    0 n : uint
 *         1 a : float
 *         2 x : global const float*  (n elements)
 *         3 y : global float*        (n elements, updated in place)
 * GRID    1-D; work-group size 1..256 (256 suggested); grid = n rounded up.
 * REF     for i in 0..n: y[i] = a.mul_add(x[i], y[i])   (Rust f32::mul_add,
 *         i.e. IEEE fma with a single rounding, round-to-nearest-even,
 *         denormals preserved).
 * COMPARE bit-exact (f32::to_bits), NaN results compare as "is NaN".
 * NEEDS   hidden_group_size_x.
 */
#include "aq.h"

__kernel void saxpy(uint n, float a, __global const float *x, __global float *y)
{
    uint i = aq_gid_x();
    if (i < n)
        y[i] = __builtin_fmaf(a, x[i], y[i]);
}
