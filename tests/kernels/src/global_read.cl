/*
 * KERNEL  global_read
 * WHAT    Reads initialised program-scope variables: a writable __global
 *         array (lands in .data) and a __constant array (lands in .rodata),
 *         and copies both to an output buffer. Checks that the loader
 *         copied the initialised data segments.
 * ARGS    0 out : global int*  (16 elements, output)
 * GRID    1 work-group of 64 work-items (only lid < 8 store). Any 1-D grid
 *         with a first work-group of >= 8 items works; other groups do
 *         nothing.
 * REF     out[0..8]  = GR_DATA  = [1, -2, 3, -4, 0x7fffffff, 0x80000000 as i32, 0x12345678, 0x0badf00d]
 *         out[8..16] = GR_CONST = [0x11111111, 0x22222222, 0x33333333, 0x44444444,
 *                                  0x55555555, 0x66666666, 0x77777777, 0x0eadbeef]
 * COMPARE exact.
 * SYMBOLS gr_data (STT_OBJECT, 32 bytes, .data) and gr_const (32 bytes,
 *         .rodata) are exported (GLOBAL PROTECTED) so a loader can find
 *         them by name; their bytes are the arrays above, little-endian.
 */
#include "aq.h"

AQ_EXPORT __global int gr_data[8] = {
    1, -2, 3, -4, 0x7fffffff, (int)0x80000000u, 0x12345678, 0x0badf00d,
};

AQ_EXPORT __constant int gr_const[8] = {
    0x11111111, 0x22222222, 0x33333333, 0x44444444,
    0x55555555, 0x66666666, 0x77777777, 0x0eadbeef,
};

__kernel void global_read(__global int *out)
{
    uint lid = aq_lid_x();
    if (aq_group_x() == 0 && lid < 8) {
        out[lid] = gr_data[lid];
        out[8 + lid] = gr_const[lid];
    }
}
