/*
 * KERNEL  dynamic_lds
 * WHAT    Dynamic LDS through a __local pointer kernel argument, next to
 *         4 bytes of static LDS. Metadata: the argument has
 *         .value_kind dynamic_shared_pointer, .address_space local, size 4,
 *         .pointee_align 4; the kernel also lists hidden_dynamic_lds_size.
 *         The dispatcher must add the dynamic size to the packet's
 *         group_segment_size (static size from the KD/metadata
 *         .group_segment_fixed_size, here 4) and pass in the kernarg slot
 *         the LDS byte offset of the dynamic area (>= the static size,
 *         aligned to 4). Overlapping the two areas corrupts `out`.
 * ARGS    0 in  : global const uint*  (grid elements)
 *         1 out : global uint*        (grid elements, output)
 *         2 tmp : local uint*         (dynamic LDS, >= 4*wg_x bytes)
 * GRID    1-D; any work-group size 1..256, grid a multiple of it (every
 *         lane active); dynamic LDS size = 4 * wg_x bytes.
 * REF     for work-group g of size L, l in 0..L:
 *           out[g*L + l] = in[g*L + (L-1-l)] + 1000 + g     (wrapping)
 * COMPARE exact.
 */
#include "aq.h"

__kernel void dynamic_lds(__global const uint *in, __global uint *out,
                          __local uint *tmp)
{
    __local uint bias[1];
    uint lid = aq_lid_x();
    uint L = aq_group_size_x();
    uint g = aq_group_x();
    uint i = g * L + lid;

    if (lid == 0)
        bias[0] = 1000 + g;
    tmp[lid] = in[i];
    aq_barrier();
    out[i] = tmp[L - 1 - lid] + bias[0];
}
