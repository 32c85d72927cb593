/*
 * KERNEL  preload   (built with -mllvm -amdgpu-kernarg-preload-count=3;
 *                    gfx90a, gfx942 and gfx950 only)
 * WHAT    Kernel arguments preloaded into user SGPRs. The kernel
 *         descriptor's kernarg_preload field (byte 58) is non-zero, and the
 *         first 256 bytes after the entry point are a compatibility prologue
 *         for firmware without preload support; firmware that supports it
 *         starts at entry + 256. clang-19 (.co5) fills the prologue with
 *         s_trap 2 + s_nop; clang-22 (.co6) fills it with s_load of the
 *         arguments followed by s_branch to entry + 256, so it also runs
 *         correctly when entered at the entry point. The kernarg segment
 *         still holds every argument in memory.
 * ARGS    0 out : global uint*  (n elements, output)
 *         1 a   : uint
 *         2 b   : uint
 *         3 n   : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     for i in 0..n: out[i] = a * i + b   (u32 wrapping)
 * COMPARE exact.
 */
#include "aq.h"

__kernel void preload(__global uint *out, uint a, uint b, uint n)
{
    uint i = aq_gid_x();
    if (i < n)
        out[i] = a * i + b;
}
