/*
 * FILE    oob_store.cl -- two kernels for memory-fault tests. The test
 *         passes a pointer to an unmapped (or read-only) address; the
 *         dispatch must end in a memory violation reported by the driver /
 *         simulator, not in silent corruption or a hang.
 *
 * KERNEL  oob_store(p: global uint*, value: uint)
 *         every work-item i stores p[i] = value + i   (a write fault)
 * KERNEL  oob_load(p: global const uint*, out: global uint*)
 *         every work-item i loads p[i] and stores it to out[i]   (a read fault
 *         when p is unmapped; out must be valid)
 * GRID    1-D; 1 work-group of 64 is enough.
 * REF     With a valid p the kernels behave as written (useful as a control:
 *         oob_store then oob_load round-trips value + i).
 */
#include "aq.h"

__kernel void oob_store(__global uint *p, uint value)
{
    uint i = aq_gid_x();
    p[i] = value + i;
}

__kernel void oob_load(__global const uint *p, __global uint *out)
{
    uint i = aq_gid_x();
    out[i] = p[i];
}
