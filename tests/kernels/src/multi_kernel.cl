/*
 * FILE    multi_kernel.cl -- four kernels in one code object (one .kd and one
 *         FUNC symbol each), sharing an inlined helper. A loader must list
 *         all four and find each by name.
 *
 * KERNEL  mk_fill(out: global uint*, value: uint, n: uint)
 *         for i in 0..n: out[i] = value
 * KERNEL  mk_iota(out: global uint*, start: uint, n: uint)
 *         for i in 0..n: out[i] = start + i   (wrapping)
 * KERNEL  mk_scale(x: global float*, s: float, n: uint)
 *         for i in 0..n: x[i] = x[i] * s      (f32, RNE; bit-exact)
 * KERNEL  mk_vector_add_f32(a: global const float*, b: global const float*,
 *                           c: global float*, n: uint)
 *         for i in 0..n: c[i] = a[i] + b[i]   (f32, RNE; bit-exact)
 * GRID    all: 1-D; any work-group size; grid = n rounded up.
 * COMPARE exact / bit-exact (NaN: is-NaN only).
 */
#include "aq.h"

AQ_INLINE int in_range(uint *i, uint n)
{
    *i = aq_gid_x();
    return *i < n;
}

__kernel void mk_fill(__global uint *out, uint value, uint n)
{
    uint i;
    if (in_range(&i, n))
        out[i] = value;
}

__kernel void mk_iota(__global uint *out, uint start, uint n)
{
    uint i;
    if (in_range(&i, n))
        out[i] = start + i;
}

__kernel void mk_scale(__global float *x, float s, uint n)
{
    uint i;
    if (in_range(&i, n))
        x[i] = x[i] * s;
}

__kernel void mk_vector_add_f32(__global const float *a, __global const float *b,
                                __global float *c, uint n)
{
    uint i;
    if (in_range(&i, n))
        c[i] = a[i] + b[i];
}
