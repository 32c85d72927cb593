/*
 * KERNEL  grid_2d
 * WHAT    2-D NDRange: work-item ids and work-group ids in x and y
 *         (VGPR v0/v1 or the packed v0 on gfx90a+, SGPR work-group ids).
 * ARGS    0 coords : global uint*  (width*height elements, output)
 *         1 meta   : global uint*  (width*height elements, output)
 *         2 width  : uint
 *         3 height : uint
 * GRID    2-D; grid (width, height), any work-group shape with
 *         wg_x*wg_y <= 256, e.g. (8, 8); partial edge groups are allowed
 *         (items outside width x height store nothing).
 * REF     for y in 0..height, x in 0..width, with work-group size (WX, WY):
 *           coords[y*width + x] = (y << 16) | x
 *           meta[y*width + x]   = (x / WX) | (y / WY) << 8 | (x % WX) << 16 | (y % WY) << 24
 *         (group ids and local ids must fit in 8 bits: width/WX, height/WY <= 256.)
 * COMPARE exact.
 */
#include "aq.h"

__kernel void grid_2d(__global uint *coords, __global uint *meta, uint width,
                      uint height)
{
    uint x = aq_gid_x(), y = aq_gid_y();
    if (x >= width || y >= height)
        return;
    coords[y * width + x] = (y << 16) | x;
    meta[y * width + x] = aq_group_x() | aq_group_y() << 8 | aq_lid_x() << 16 |
                          aq_lid_y() << 24;
}
