/*
 * KERNEL  reduce_lds
 * WHAT    Per-work-group sum through LDS: tree reduction with barriers,
 *         one partial sum per work-group.
 * ARGS    0 in      : global const uint*  (n elements)
 *         1 partial : global uint*        (one element per work-group)
 *         2 n       : uint
 * GRID    1-D; work-group size MUST be 256 (reqd_work_group_size);
 *         grid = n rounded up to a multiple of 256. 1 KiB static LDS.
 * REF     for g in 0..ceil(n/256):
 *             partial[g] = sum(in[i] for i in 256*g .. min(256*g+256, n)),
 *         wrapping u32 addition (order does not matter).
 * COMPARE exact.
 */
#include "aq.h"

#define WG 256

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_lds(__global const uint *in, __global uint *partial, uint n)
{
    __local uint buf[WG];
    uint lid = aq_lid_x();
    uint i = aq_group_x() * WG + lid;

    buf[lid] = (i < n) ? in[i] : 0u;
    aq_barrier();
    for (uint stride = WG / 2; stride > 0; stride >>= 1) {
        if (lid < stride)
            buf[lid] += buf[lid + stride];
        aq_barrier();
    }
    if (lid == 0)
        partial[aq_group_x()] = buf[0];
}
