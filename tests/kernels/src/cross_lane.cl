/*
 * KERNEL  cross_lane
 * WHAT    Cross-lane operations inside a wavefront: v_readfirstlane,
 *         v_readlane (constant lane and a uniform loop over all lanes),
 *         ds_bpermute_b32, ds_swizzle_b32, DPP (row_shr, row_shl,
 *         quad_perm, row_ror, row_mirror, with and without bound_ctrl),
 *         ballot (a VCC/SGPR-pair compare mask), mbcnt, a butterfly
 *         wave reduction through ds_bpermute and an in-row DPP scan.
 * ARGS    0 in     : global const uint*  (grid elements)
 *         1 out    : global uint*        (16 per work-item, output)
 *         2 ballot : global ulong*       (1 per work-item, output)
 * GRID    1-D; work-group MUST be 64 (reqd_work_group_size), grid a
 *         multiple of 64: every lane of every wave must be active.
 *         Wave size W = 64 on gfx9 builds, 32 on gfx11/gfx12 builds
 *         (out[16i+12] reports it).
 * REF     For work-item i: lane l = i % W, wave base b = i - l, x(j) = in[b + j],
 *         row r = l - l%16, quad q = l - l%4; o = out[16i..]:
 *          o[0]  = x(0)                          readfirstlane
 *          o[1]  = x(5)                          readlane 5
 *          o[2]  = x(l ^ 1)                      ds_bpermute, address 4*(l^1)
 *          o[3]  = if l%16 == 0 { 0xdeadbeef } else { x(l-1) }   row_shr:1, old kept
 *          o[4]  = if l%16 == 15 { 0 } else { x(l+1) }          row_shl:1, bound_ctrl -> 0
 *          o[5]  = x(q + 3 - l%4)                quad_perm [3,2,1,0]
 *          o[6]  = x(r + (l%16 + 12) % 16)       row_ror:4 (lane reads lane-4 mod 16)
 *          o[7]  = x(r + 15 - l%16)              row_mirror
 *          o[8]  = sum over j in 0..W of x(j)    butterfly via ds_bpermute (wrapping)
 *          o[9]  = sum over j in r..=l of x(j)   in-row inclusive scan, DPP row_shr 1,2,4,8
 *          o[10] = sum over j in 0..W of x(j)    v_readlane loop (wrapping)
 *          o[11] = l                             mbcnt_lo/mbcnt_hi
 *          o[12] = W
 *          o[13] = x(l ^ 1)                      ds_swizzle, bitmask mode xor 1
 *          o[14] = number of lanes j in the wave with x(j) odd   (popcount of ballot)
 *          o[15] = max over j in 0..W of x(j)    wave max via DPP + readlane
 *         ballot[i] = bit j set iff x(j) is odd, j in 0..W (upper 32 bits 0 when W = 32)
 * COMPARE exact.
 */
#include "aq.h"

#define WG 64

AQ_INLINE uint dpp_shr(uint v, uint k)
{
    /* old = 0 for lanes whose source is outside the row */
    switch (k) {
    case 1: return __builtin_amdgcn_update_dpp(0u, v, 0x111, 0xf, 0xf, false);
    case 2: return __builtin_amdgcn_update_dpp(0u, v, 0x112, 0xf, 0xf, false);
    case 4: return __builtin_amdgcn_update_dpp(0u, v, 0x114, 0xf, 0xf, false);
    default: return __builtin_amdgcn_update_dpp(0u, v, 0x118, 0xf, 0xf, false);
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void cross_lane(__global const uint *in, __global uint *out, __global ulong *ballot)
{
    uint i = aq_group_x() * WG + aq_lid_x();
    uint W = aq_wave_size();
    uint lane = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
    uint x = in[i];
    __global uint *o = out + (ulong)i * 16;

    o[0] = __builtin_amdgcn_readfirstlane(x);
    o[1] = __builtin_amdgcn_readlane(x, 5);
    o[2] = (uint)__builtin_amdgcn_ds_bpermute((int)(4 * (lane ^ 1)), (int)x);
    o[3] = __builtin_amdgcn_update_dpp(0xdeadbeefu, x, 0x111, 0xf, 0xf, false);
    o[4] = __builtin_amdgcn_mov_dpp(x, 0x101, 0xf, 0xf, true);
    o[5] = __builtin_amdgcn_mov_dpp(x, 0x1b, 0xf, 0xf, false);
    o[6] = __builtin_amdgcn_mov_dpp(x, 0x124, 0xf, 0xf, false);
    o[7] = __builtin_amdgcn_mov_dpp(x, 0x140, 0xf, 0xf, false);

    uint s = x;
    for (uint m = 1; m < W; m <<= 1)
        s += (uint)__builtin_amdgcn_ds_bpermute((int)(4 * (lane ^ m)), (int)s);
    o[8] = s;

    uint scan = x;
    scan += dpp_shr(scan, 1);
    scan += dpp_shr(scan, 2);
    scan += dpp_shr(scan, 4);
    scan += dpp_shr(scan, 8);
    o[9] = scan;

    uint t = 0;
    for (uint j = 0; j < W; j++)
        t += __builtin_amdgcn_readlane(x, j);
    o[10] = t;
    o[11] = lane;
    o[12] = W;
    o[13] = (uint)__builtin_amdgcn_ds_swizzle((int)x, 0x041f);

    ulong mask = __builtin_amdgcn_ballot_w64((x & 1) != 0);
    o[14] = (uint)__builtin_popcountl(mask);
    ballot[i] = mask;

    /* wave max: max within rows by DPP, then combine rows with readlane */
    uint mx = x;
    uint y;
    y = __builtin_amdgcn_update_dpp(0u, mx, 0x111, 0xf, 0xf, false); mx = mx > y ? mx : y;
    y = __builtin_amdgcn_update_dpp(0u, mx, 0x112, 0xf, 0xf, false); mx = mx > y ? mx : y;
    y = __builtin_amdgcn_update_dpp(0u, mx, 0x114, 0xf, 0xf, false); mx = mx > y ? mx : y;
    y = __builtin_amdgcn_update_dpp(0u, mx, 0x118, 0xf, 0xf, false); mx = mx > y ? mx : y;
    uint wmax = 0;
    for (uint r = 15; r < W; r += 16) {
        uint v = __builtin_amdgcn_readlane(mx, r);
        wmax = wmax > v ? wmax : v;
    }
    o[15] = wmax;
}
