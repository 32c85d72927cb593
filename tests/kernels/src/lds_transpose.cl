/*
 * KERNEL  lds_transpose
 * WHAT    Matrix transpose through a 16x17 LDS tile (padding avoids bank
 *         conflicts), with a barrier between the tile write and read.
 *         Uses 2-D work-item and work-group ids.
 * ARGS    0 in     : global const uint*  (height x width, row-major)
 *         1 out    : global uint*        (width x height, row-major, output)
 *         2 width  : uint  (multiple of 16)
 *         3 height : uint  (multiple of 16)
 * GRID    2-D; work-group MUST be 16 x 16 (reqd_work_group_size);
 *         grid = width x height. 1088 bytes of static LDS.
 * REF     for y in 0..height, x in 0..width:
 *             out[x*height + y] = in[y*width + x]
 * COMPARE exact.
 */
#include "aq.h"

#define T 16

__kernel __attribute__((reqd_work_group_size(T, T, 1)))
void lds_transpose(__global const uint *in, __global uint *out, uint width,
                   uint height)
{
    __local uint tile[T][T + 1];
    uint tx = aq_lid_x(), ty = aq_lid_y();
    uint bx = aq_group_x() * T, by = aq_group_y() * T;

    tile[ty][tx] = in[(by + ty) * width + (bx + tx)];
    aq_barrier();
    /* out row = bx + ty (a column of in), out column = by + tx */
    out[(bx + ty) * height + (by + tx)] = tile[tx][ty];
}
