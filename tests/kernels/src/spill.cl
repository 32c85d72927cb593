/*
 * KERNEL  spill
 * WHAT    Forces VGPR spills to scratch: 48 values per lane stay live
 *         through 4 rounds of mixing while the kernel is limited to 24
 *         VGPRs (amdgpu_num_vgpr). gfx90a spills with buffer_store/load
 *         (MUBUF on the private segment buffer, SGPRs 0-3), gfx942 and
 *         gfx950 with scratch_store/load (architected flat scratch), gfx11/12
 *         with scratch_store_b64 / scratch_load_b64 and friends. Metadata reports
 *         .vgpr_spill_count > 0 and a non-zero private_segment_fixed_size.
 * ARGS    0 in  : global const uint*  (48n elements)
 *         1 out : global uint*        (n elements, output)
 *         2 n   : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     for i in 0..n (u32 wrapping):
 *           let mut v: [u32; 48] = in[48i .. 48i+48];
 *           for r in 0..4 { for k in 0..48 {
 *               v[k] = v[k] * (2r+3) + v[(k+1+r) % 48];    // sequential, in place
 *           } }
 *           out[i] = XOR over k of (v[k] << (k % 32));
 * COMPARE exact.
 */
#include "aq.h"

#define NV 48

__kernel __attribute__((amdgpu_num_vgpr(24)))
void spill(__global const uint *in, __global uint *out, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    uint v[NV];
#pragma unroll
    for (int k = 0; k < NV; k++)
        v[k] = in[i * NV + k];
#pragma unroll
    for (uint r = 0; r < 4; r++) {
#pragma unroll
        for (int k = 0; k < NV; k++)
            v[k] = v[k] * (2 * r + 3) + v[(k + 1 + r) % NV];
    }
    uint acc = 0;
#pragma unroll
    for (int k = 0; k < NV; k++)
        acc ^= v[k] << (k % 32);
    out[i] = acc;
}
