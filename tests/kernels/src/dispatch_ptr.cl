/*
 * KERNEL  dispatch_ptr
 * WHAT    Reads the AQL kernel dispatch packet through
 *         __builtin_amdgcn_dispatch_ptr() (enables the dispatch-ptr user
 *         SGPR pair in the kernel descriptor) and copies it out. Also
 *         computes the flat global id from the packet's grid and work-group
 *         sizes in all three dimensions.
 * ARGS    0 pkt : global uint*  (16 elements, output)
 *         1 ids : global uint*  (grid_x*grid_y*grid_z elements, output)
 * GRID    1-, 2- or 3-D, any shape whose grid sizes are multiples of the
 *         work-group sizes, e.g. grid (64,4,2) with work-group (16,2,1).
 * REF     pkt[k] = dword k of the 64-byte hsa_kernel_dispatch_packet_t
 *         the CP executed, for k in 0..16 (written by work-item (0,0,0) of
 *         work-group (0,0,0) only):
 *           pkt[0] = header | setup << 16      pkt[1] = wg_x | wg_y << 16
 *           pkt[2] = wg_z | reserved0 << 16    pkt[3..6] = grid_x, grid_y, grid_z
 *           pkt[6] = private_segment_size      pkt[7] = group_segment_size
 *           pkt[8..10] = kernel_object         pkt[10..12] = kernarg_address
 *           pkt[12..14] = reserved2            pkt[14..16] = completion_signal
 *         For every work-item with global ids (x, y, z):
 *           ids[(z*grid_y + y)*grid_x + x] = (z*grid_y + y)*grid_x + x
 *         (grid_* and wg sizes read from the packet, not the implicit args).
 * COMPARE exact.
 */
#include "aq.h"

__kernel void dispatch_ptr(__global uint *pkt, __global uint *ids)
{
    __constant uint *dp = (__constant uint *)__builtin_amdgcn_dispatch_ptr();
    __constant ushort *dp16 = (__constant ushort *)dp;
    uint wgx = dp16[2], wgy = dp16[3], wgz = dp16[4];
    uint gx = dp[3], gy = dp[4];
    uint x = aq_group_x() * wgx + aq_lid_x();
    uint y = aq_group_y() * wgy + aq_lid_y();
    uint z = aq_group_z() * wgz + aq_lid_z();
    uint flat = (z * gy + y) * gx + x;
    ids[flat] = flat;
    if (flat == 0) {
        for (uint k = 0; k < 16; k++)
            pkt[k] = dp[k];
    }
}
