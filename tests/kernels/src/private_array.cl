/*
 * KERNEL  private_array
 * WHAT    A private (per-lane) array indexed by runtime values, too large to
 *         live in registers or be promoted to LDS, so it goes to scratch
 *         memory (scratch_* on gfx90a/gfx942, buffer_* ... offen on older
 *         targets). Needs a private segment: the KD's
 *         private_segment_fixed_size is non-zero and the dispatcher must
 *         provide scratch. A small 8-entry array is also indexed
 *         dynamically (register indexing or a select chain, per target).
 * ARGS    0 idx : global const uint*  (16n elements)
 *         1 out : global uint*        (2n elements, output)
 *         2 n   : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     for i in 0..n (all u32 wrapping):
 *           let mut p = [0u32; 256]; for k in 0..256 { p[k] = k*k + i }
 *           let mut sm = [0u32; 8];  for k in 0..8 { sm[k] = (k as u32) << i%8 }
 *           let (mut s, mut t) = (0, 0);
 *           for k in 0..16 {
 *               let j = idx[16i+k] & 255;
 *               p[j] += k;
 *               s += p[(j*7 + k) & 255];
 *               t += sm[(j + k) & 7];
 *               sm[j & 7] ^= k;
 *           }
 *           out[2i] = s; out[2i+1] = t;
 * COMPARE exact.
 */
#include "aq.h"

__kernel void private_array(__global const uint *idx, __global uint *out, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    uint p[256];
    uint sm[8];
    for (uint k = 0; k < 256; k++)
        p[k] = k * k + i;
    for (uint k = 0; k < 8; k++)
        sm[k] = k << (i % 8);
    uint s = 0, t = 0;
    for (uint k = 0; k < 16; k++) {
        uint j = idx[16 * i + k] & 255;
        p[j] += k;
        s += p[(j * 7 + k) & 255];
        t += sm[(j + k) & 7];
        sm[j & 7] ^= k;
    }
    out[2 * i] = s;
    out[2 * i + 1] = t;
}
