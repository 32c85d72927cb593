/*
 * KERNEL  grid_3d
 * WHAT    3-D NDRange: work-item and work-group ids in x, y and z.
 * ARGS    0 coords : global uint*  (nx*ny*nz elements, output)
 *         1 meta   : global uint*  (nx*ny*nz elements, output)
 *         2 nx, 3 ny, 4 nz : uint
 * GRID    3-D; grid (nx, ny, nz), any work-group shape with
 *         wg_x*wg_y*wg_z <= 256, e.g. (4, 4, 4); partial edge groups allowed.
 * REF     for z in 0..nz, y in 0..ny, x in 0..nx, with work-group size (WX, WY, WZ),
 *         k = (z*ny + y)*nx + x:
 *           coords[k] = x | y << 10 | z << 20          (each < 1024)
 *           meta[k]   = (x/WX) | (y/WY) << 8 | (z/WZ) << 16 | ((z%WZ)*WY*WX + (y%WY)*WX + x%WX) << 24
 *         (the top byte is the flattened local id; group ids and the
 *         flattened local id must fit in 8 bits.)
 * COMPARE exact.
 */
#include "aq.h"

__kernel void grid_3d(__global uint *coords, __global uint *meta, uint nx,
                      uint ny, uint nz)
{
    uint x = aq_gid_x(), y = aq_gid_y(), z = aq_gid_z();
    if (x >= nx || y >= ny || z >= nz)
        return;
    uint k = (z * ny + y) * nx + x;
    uint flat = (aq_lid_z() * aq_group_size_y() + aq_lid_y()) * aq_group_size_x() + aq_lid_x();
    coords[k] = x | y << 10 | z << 20;
    meta[k] = aq_group_x() | aq_group_y() << 8 | aq_group_z() << 16 | flat << 24;
}
