/*
 * KERNEL  implicit_args_v4   (code object V4 only, gfx90a: build.sh builds
 *                             no V5/V6 copy, whose block differs)
 * WHAT    Reads the code object V4 hidden (implicit) argument block through
 *         __builtin_amdgcn_implicitarg_ptr(): 56 bytes, 7 x 8, right after
 *         the explicit arguments:
 *           +0/+8/+16 hidden_global_offset_x/y/z, +24 printf or hostcall
 *           buffer, +32 default queue, +40 completion action, +48 multigrid
 *           sync argument.
 *         V4 has no block counts, group sizes, remainders or grid dims in
 *         the block: a V4 kernel takes the launch geometry from the dispatch
 *         packet (__builtin_amdgcn_dispatch_ptr()), as OCKL's ABI-400 path
 *         does, so it also derives the OpenCL sizes from the packet here.
 *         Because the kernel reads the block through a raw pointer, the
 *         metadata lists every hidden argument.
 * ARGS    0 dump : global uint*  (14 elements, output)
 *         1 ids  : global uint*  (4 per work-item of the grid, output)
 * GRID    1-, 2- or 3-D, any shape (partial work-groups allowed), e.g. grid
 *         (20, 3, 2) with work-group (8, 2, 1) and global offset (5, 7, 9).
 * REF     Work-items with flat local id k < 14 of work-group (0,0,0) write
 *           dump[k] = dword k of the hidden block
 *         i.e. dump[0..6] = the global offsets as three u64, dump[6..14] = 0
 *         (no printf, hostcall, queue, completion or multigrid services).
 *         Every work-item at grid position (x, y, z), flat index
 *         f = (z*grid_y + y)*grid_x + x (grid sizes from the packet), writes
 *           ids[4f+0] = x + offset_x     (OpenCL get_global_id(0), V4 way)
 *           ids[4f+1] = y + offset_y
 *           ids[4f+2] = z + offset_z
 *           ids[4f+3] = work-items of its group in x: min(wg_x, grid_x -
 *                       group_x * wg_x)  (get_local_size(0) from the packet)
 *         (offsets truncated to 32 bits).
 * COMPARE exact.
 */
#include "aq.h"

__kernel void implicit_args_v4(__global uint *dump, __global uint *ids)
{
    __constant uint *ia = (__constant uint *)__builtin_amdgcn_implicitarg_ptr();
    __constant ulong *offset = (__constant ulong *)ia;
    __constant uint *dp = (__constant uint *)__builtin_amdgcn_dispatch_ptr();
    uint gx = dp[3], gy = dp[4];
    uint wx = aq_group_size_x(), wy = aq_group_size_y();
    uint x = aq_gid_x(), y = aq_gid_y(), z = aq_gid_z();
    uint k = (aq_lid_z() * wy + aq_lid_y()) * wx + aq_lid_x();
    if (aq_group_x() == 0 && aq_group_y() == 0 && aq_group_z() == 0 && k < 14)
        dump[k] = ia[k];
    uint f = (z * gy + y) * gx + x;
    uint left = gx - aq_group_x() * wx;
    ids[4 * f + 0] = x + (uint)offset[0];
    ids[4 * f + 1] = y + (uint)offset[1];
    ids[4 * f + 2] = z + (uint)offset[2];
    ids[4 * f + 3] = left < wx ? left : wx;
}
