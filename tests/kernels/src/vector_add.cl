/*
 * KERNEL  vector_add
 * WHAT    Element-wise sum of two 32-bit integer vectors.
 * ARGS    0 a : global const int*  (n elements)
 *         1 b : global const int*  (n elements)
 *         2 c : global int*        (n elements, output)
 *         3 n : uint
 * GRID    1-D; work-group size any of 1..256 (64 suggested);
 *         grid = n rounded up to a multiple of the work-group size.
 * REF     for i in 0..n: c[i] = a[i].wrapping_add(b[i]); c[i..] untouched.
 * COMPARE exact.
 * NEEDS   hidden_group_size_x (V5/V6 implicit args; V4: dispatch packet).
 */
#include "aq.h"

__kernel void vector_add(__global const int *a, __global const int *b,
                         __global int *c, uint n)
{
    uint i = aq_gid_x();
    if (i < n)
        c[i] = (int)((uint)a[i] + (uint)b[i]);
}
