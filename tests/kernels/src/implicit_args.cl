/*
 * KERNEL  implicit_args   (code object V5/V6 only: the layout differs in V4,
 *                          so no .co4 is built)
 * WHAT    Dumps the 256-byte hidden (implicit) argument block through
 *         __builtin_amdgcn_implicitarg_ptr() and derives the OpenCL/HIP
 *         launch geometry from it the way ROCm's OCKL does for ABI >= 500.
 *         Because the kernel reads the block through a raw pointer, the
 *         metadata lists every hidden argument.
 * ARGS    0 dump    : global uint*  (64 elements, output)
 *         1 derived : global uint*  (4 per work-group in x, output)
 * GRID    1-D (work_dim 1). Use a grid that is NOT a multiple of the
 *         work-group size to exercise the remainder, e.g. grid 200 with
 *         work-group 64 -> 4 work-groups, the last one has 8 work-items.
 * REF     Work-items 0..64 of work-group 0 write dump[k] = dword k of the
 *         implicit block (k < group size). With H = the block as the runtime
 *         filled it (u16 at byte 12 = group_size_x, u16 at 18 = remainder_x,
 *         u32 at 0 = block_count_x, u16 at 64 = grid_dims):
 *           dump[k] == H[k] for k in 0..min(64, wg_x)
 *         Work-item 0 of every work-group g writes
 *           derived[4g+0] = block_count_x + (remainder_x > 0)     num_groups
 *           derived[4g+1] = block_count_x * group_size_x + remainder_x   global size
 *           derived[4g+2] = if g < block_count_x { group_size_x } else { remainder_x }
 *           derived[4g+3] = grid_dims
 *         For grid 200 / wg 64: [4, 200, 64, 1] for g in {0, 1, 2}, [4, 200, 8, 1] for g = 3.
 * COMPARE exact.
 */
#include "aq.h"

__kernel void implicit_args(__global uint *dump, __global uint *derived)
{
    __constant uint *ia = (__constant uint *)__builtin_amdgcn_implicitarg_ptr();
    __constant ushort *ia16 = (__constant ushort *)ia;
    uint lid = aq_lid_x();
    uint g = aq_group_x();
    if (g == 0 && lid < 64)
        dump[lid] = ia[lid];
    if (lid == 0) {
        uint count = ia[0];
        uint size = ia16[6];
        uint rem = ia16[9];
        derived[4 * g + 0] = count + (rem > 0);
        derived[4 * g + 1] = count * size + rem;
        derived[4 * g + 2] = g < count ? size : rem;
        derived[4 * g + 3] = ia16[32];
    }
}
