/*
 * KERNEL  divergence
 * WHAT    Per-lane control flow: if/else on data, nested divergent ifs, a
 *         switch, a lane-id-dependent branch, and a uniform branch on a
 *         kernel argument (scalar branch, s_cbranch_scc*). Exercises EXEC
 *         mask save/restore (s_and_saveexec, s_or_b64 exec) and
 *         s_cbranch_execz.
 * ARGS    0 in   : global const int*  (n elements)
 *         1 out  : global int*        (n elements, output)
 *         2 n    : uint
 *         3 mode : uint  (0 or 1, uniform)
 * GRID    1-D; any work-group size (64 suggested); grid = n rounded up.
 * REF     Inputs |x| < 2^20 (no overflow). For i in 0..n, x = in[i],
 *         l = lid % 64 where lid is the work-item id inside its work-group
 *         (with 64-wide work-groups, l = i % 64):
 *           let mut r = if x & 1 != 0 {
 *               let t = 3*x + 1; if x > 100 { t - 7 } else { t + 11 }
 *           } else {
 *               let t = x >> 1; if (x & 6) == 2 { -t } else { t }
 *           };
 *           match x & 7 { 0 => r += 100, 1 => r ^= 0x55, 3 => r *= 5,
 *                         5 | 6 => r -= x, _ => r |= 0x1000 }
 *           if l % 3 == 0 { r = r.wrapping_add(l as i32) }
 *           if mode == 1 { r = !r }
 *           out[i] = r
 *         (x >> 1 is arithmetic; x & 7 is on the two's-complement bits.)
 * COMPARE exact.
 */
#include "aq.h"

__kernel void divergence(__global const int *in, __global int *out, uint n,
                         uint mode)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    int x = in[i];
    int r;
    if (x & 1) {
        r = 3 * x + 1;
        if (x > 100)
            r -= 7;
        else
            r += 11;
    } else {
        r = x >> 1;
        if ((x & 6) == 2)
            r = -r;
    }
    switch (x & 7) {
    case 0: r += 100; break;
    case 1: r ^= 0x55; break;
    case 3: r *= 5; break;
    case 5:
    case 6: r -= x; break;
    default: r |= 0x1000; break;
    }
    uint l = aq_lid_x() % 64;
    if (l % 3 == 0)
        r = (int)((uint)r + l);
    if (mode == 1)
        r = ~r;
    out[i] = r;
}
