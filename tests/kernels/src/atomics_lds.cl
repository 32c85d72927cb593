/*
 * KERNEL  atomics_lds
 * WHAT    LDS (ds_*) atomics within one work-group: add, umin, umax, and,
 *         or, xor, a returning add used as a ticket counter, and a
 *         single-winner cmpxchg; barriers around them.
 * ARGS    0 v     : global const uint*  (grid elements)
 *         1 out   : global uint*        (8 per work-group, output)
 *         2 ranks : global uint*        (grid elements, output)
 *         3 won   : global uint*        (grid elements, output)
 * GRID    1-D; work-group MUST be 256 (reqd_work_group_size); every lane
 *         active (grid a multiple of 256; no n argument).
 * REF     For work-group g with values V = v[256g .. 256g+256]:
 *          out[8g+0] = sum(V) (wrapping)   out[8g+1] = min(V)   out[8g+2] = max(V)
 *          out[8g+3] = AND(V)              out[8g+4] = OR(V)    out[8g+5] = XOR(V)
 *          out[8g+6] = 256
 *          out[8g+7] = the lid of the single lane with won[...] == 1
 *          ranks[256g .. 256g+256] is a permutation of 0..256
 *          exactly one of won[256g .. 256g+256] is 1, the rest 0.
 * COMPARE exact (ranks as a permutation).
 */
#include "aq.h"

#define WG 256

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void atomics_lds(__global const uint *v, __global uint *out,
                 __global uint *ranks, __global uint *won)
{
    __local uint s[8];
    uint lid = aq_lid_x();
    uint g = aq_group_x();
    uint i = g * WG + lid;
    uint x = v[i];

    if (lid == 0) {
        s[0] = 0; s[1] = 0xffffffffu; s[2] = 0; s[3] = 0xffffffffu;
        s[4] = 0; s[5] = 0; s[6] = 0; s[7] = 0xffffffffu;
    }
    aq_barrier();
    __scoped_atomic_fetch_add(&s[0], x, AQ_RELAXED, AQ_WG);
    __scoped_atomic_fetch_min(&s[1], x, AQ_RELAXED, AQ_WG);
    __scoped_atomic_fetch_max(&s[2], x, AQ_RELAXED, AQ_WG);
    __scoped_atomic_fetch_and(&s[3], x, AQ_RELAXED, AQ_WG);
    __scoped_atomic_fetch_or(&s[4], x, AQ_RELAXED, AQ_WG);
    __scoped_atomic_fetch_xor(&s[5], x, AQ_RELAXED, AQ_WG);
    ranks[i] = __scoped_atomic_fetch_add(&s[6], 1u, AQ_RELAXED, AQ_WG);
    uint expected = 0xffffffffu;
    won[i] = __scoped_atomic_compare_exchange_n(&s[7], &expected, lid, 0,
                                                AQ_RELAXED, AQ_RELAXED, AQ_WG);
    aq_barrier();
    if (lid < 8)
        out[g * 8 + lid] = s[lid];
}
