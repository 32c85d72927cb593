/*
 * KERNEL  ptr64
 * WHAT    64-bit pointer arithmetic with signed 64-bit element offsets
 *         (negative offsets, offsets beyond 4 GiB if the test maps such a
 *         range). The computed address is written out, and the memory it
 *         points to is loaded only when `do_load` is non-zero, so address
 *         math can be tested without mapping the target range.
 * ARGS    0 base    : global const uint*  (any address, may point into the middle of a buffer)
 *         1 off     : long                (element offset, may be negative)
 *         2 stride  : long                (elements between consecutive work-items)
 *         3 addrs   : global ulong*       (n elements, output)
 *         4 vals    : global uint*        (n elements, output; written only if do_load != 0)
 *         5 n       : uint
 *         6 do_load : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     for i in 0..n:
 *           addrs[i] = base.wrapping_add(4u64.wrapping_mul((off + i*stride) as u64))
 *           if do_load != 0 { vals[i] = *(addrs[i] as *const u32) }
 *         (off + i*stride evaluated in i64.)
 * COMPARE exact.
 */
#include "aq.h"

__kernel void ptr64(__global const uint *base, long off, long stride,
                    __global ulong *addrs, __global uint *vals, uint n,
                    uint do_load)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    __global const uint *p = base + (off + (long)i * stride);
    addrs[i] = (ulong)p;
    if (do_load)
        vals[i] = *p;
}
