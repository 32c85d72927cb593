/*
 * KERNEL  loops
 * WHAT    Loops whose trip count differs per lane (the wave keeps looping
 *         until the last lane is done, with lanes masked off in EXEC), an
 *         early return, break/continue, and a nested loop.
 * ARGS    0 in  : global const int*  (n elements)
 *         1 out : global int*        (2n elements, output)
 *         2 n   : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     for i in 0..n, x = in[i]:
 *           if x <= 0 { out[2i] = -1; out[2i+1] = -1; continue }   // early return
 *           // Collatz steps, u32 wrapping arithmetic, capped at 1000:
 *           let mut v = x as u32; let mut steps = 0;
 *           while v != 1 && steps < 1000 {
 *               v = if v & 1 != 0 { v.wrapping_mul(3).wrapping_add(1) } else { v >> 1 };
 *               steps += 1;
 *           }
 *           let mut acc = 0;
 *           for j in 0..(x & 15) {
 *               if j == 11 { break }
 *               if j & 1 != 0 { continue }
 *               for k in 0..=j { acc += k * j }
 *           }
 *           out[2i] = steps; out[2i+1] = acc;
 * COMPARE exact.
 */
#include "aq.h"

__kernel void loops(__global const int *in, __global int *out, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    int x = in[i];
    if (x <= 0) {
        out[2 * i] = -1;
        out[2 * i + 1] = -1;
        return;
    }
    uint v = (uint)x;
    int steps = 0;
    while (v != 1 && steps < 1000) {
        v = (v & 1) ? 3 * v + 1 : v >> 1;
        steps++;
    }
    int acc = 0;
    for (int j = 0; j < (x & 15); j++) {
        if (j == 11)
            break;
        if (j & 1)
            continue;
        for (int k = 0; k <= j; k++)
            acc += k * j;
    }
    out[2 * i] = steps;
    out[2 * i + 1] = acc;
}
