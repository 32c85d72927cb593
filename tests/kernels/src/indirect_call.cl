/*
 * KERNEL  indirect_call
 * WHAT    Calls through a table of function pointers, selected per lane
 *         (divergent target: the compiler emits a waterfall loop with
 *         v_readfirstlane of the target address and s_swappc_b64). The table
 *         is a program-scope __constant array, so ld.lld emits one
 *         R_AMDGPU_RELATIVE64 per entry whose addend is the function's
 *         vaddr (STT_FUNC, LOCAL, .symtab). The kernel descriptor has
 *         USES_DYNAMIC_STACK set: the dispatcher must provide scratch beyond
 *         private_segment_fixed_size (e.g. 16 KiB per lane is plenty here).
 *         Uses OpenCL's __cl_clang_function_pointers extension.
 * ARGS    0 a   : global const uint*  (n elements)
 *         1 b   : global const uint*  (n elements)
 *         2 sel : global const uint*  (n elements; table index, masked & 3)
 *         3 out : global uint*        (n elements, output)
 *         4 n   : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     (u32 wrapping) table = [add, sub, mul, xor]:
 *           out[i] = table[sel[i] & 3](a[i], b[i])
 *           add(a,b) = a + b, sub(a,b) = a - b, mul(a,b) = a * b, xor(a,b) = a ^ b
 * COMPARE exact.
 */
#include "aq.h"

#pragma OPENCL EXTENSION __cl_clang_function_pointers : enable

typedef uint (*ic_fn)(uint, uint);

__attribute__((noinline)) static uint ic_add(uint a, uint b) { return a + b; }
__attribute__((noinline)) static uint ic_sub(uint a, uint b) { return a - b; }
__attribute__((noinline)) static uint ic_mul(uint a, uint b) { return a * b; }
__attribute__((noinline)) static uint ic_xor(uint a, uint b) { return a ^ b; }

AQ_EXPORT __constant ic_fn ic_table[4] = {ic_add, ic_sub, ic_mul, ic_xor};

__kernel void indirect_call(__global const uint *a, __global const uint *b,
                            __global const uint *sel, __global uint *out, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    out[i] = ic_table[sel[i] & 3](a[i], b[i]);
}
