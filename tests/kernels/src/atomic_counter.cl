/*
 * KERNEL  atomic_counter
 * WHAT    Every work-item atomically increments one global counter and
 *         records the value it saw (a ticket).
 * ARGS    0 counter : global uint*  (1 element; the test sets an initial value c0)
 *         1 old     : global uint*  (n elements, output)
 *         2 n       : uint
 * GRID    1-D; any work-group size 1..256; grid = n rounded up.
 * REF     counter == c0 + n (wrapping);
 *         sorted(old[0..n]) == [c0, c0+1, ..., c0+n-1] (a permutation:
 *         the order in which lanes win is not specified).
 * COMPARE exact (after sorting old).
 * NOTE    LLVM's atomic optimizer turns the uniform-address add into one
 *         atomic per wave plus a lane prefix count (mbcnt), so the old
 *         values within a wave are consecutive.
 */
#include "aq.h"

__kernel void atomic_counter(__global uint *counter, __global uint *old, uint n)
{
    uint i = aq_gid_x();
    if (i < n)
        old[i] = __scoped_atomic_fetch_add(counter, 1u, AQ_RELAXED, AQ_DEV);
}
