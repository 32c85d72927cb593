/*
 * KERNEL  lds_scan
 * WHAT    Inclusive prefix sum inside each work-group (Hillis-Steele in LDS,
 *         8 rounds of read / barrier / write / barrier).
 * ARGS    0 in  : global const uint*  (n elements)
 *         1 out : global uint*        (n elements, output)
 *         2 n   : uint
 * GRID    1-D; work-group MUST be 256 (reqd_work_group_size);
 *         grid = n rounded up to 256. 1 KiB static LDS.
 * REF     for i in 0..n: g = i / 256 * 256;
 *             out[i] = sum(in[g ..= i])   (wrapping u32)
 *         Each work-group scans independently; there is no carry between groups.
 * COMPARE exact.
 */
#include "aq.h"

#define WG 256

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void lds_scan(__global const uint *in, __global uint *out, uint n)
{
    __local uint buf[WG];
    uint lid = aq_lid_x();
    uint i = aq_group_x() * WG + lid;

    buf[lid] = (i < n) ? in[i] : 0u;
    aq_barrier();
    for (uint off = 1; off < WG; off <<= 1) {
        uint v = buf[lid];
        if (lid >= off)
            v += buf[lid - off];
        aq_barrier();
        buf[lid] = v;
        aq_barrier();
    }
    if (i < n)
        out[i] = buf[lid];
}
