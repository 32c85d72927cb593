/*
 * KERNEL  global_ptr
 * WHAT    A program-scope __constant array of pointers to a __global array.
 *         ld.lld turns each initialiser into an R_AMDGPU_RELATIVE64 dynamic
 *         relocation in .rela.dyn (symbol index 0, addend = vaddr of the
 *         pointee), so the kernel only works if the loader applied them.
 * ARGS    0 sel   : global const uint*   (n elements; index into the table, masked & 7)
 *         1 vals  : global int*          (n elements, output)
 *         2 addrs : global ulong*        (n elements, output: the pointer itself)
 *         3 n     : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     Let B = load base (address the object's vaddr 0 was placed at),
 *         D = st_value of symbol gp_data. gp_ptrs[k] = &gp_data[7 - k].
 *         for i in 0..n: k = sel[i] & 7
 *             vals[i]  = GP_DATA[7 - k]   where GP_DATA = [10,20,30,40,50,60,70,80]
 *             addrs[i] = B + D + 4*(7 - k)
 * COMPARE exact. `llvm-readelf -r` shows 8 RELATIVE64 entries whose addends
 *         are D+28, D+24, ..., D+0 at the 8 slots of gp_ptrs.
 * SYMBOLS gp_data (.data, 32 bytes) and gp_ptrs (.data.rel.ro, 64 bytes)
 *         exported GLOBAL PROTECTED.
 */
#include "aq.h"

AQ_EXPORT __global int gp_data[8] = {10, 20, 30, 40, 50, 60, 70, 80};

AQ_EXPORT __global int *__constant gp_ptrs[8] = {
    &gp_data[7], &gp_data[6], &gp_data[5], &gp_data[4],
    &gp_data[3], &gp_data[2], &gp_data[1], &gp_data[0],
};

__kernel void global_ptr(__global const uint *sel, __global int *vals,
                         __global ulong *addrs, uint n)
{
    uint i = aq_gid_x();
    if (i < n) {
        __global int *p = gp_ptrs[sel[i] & 7];
        vals[i] = *p;
        addrs[i] = (ulong)p;
    }
}
