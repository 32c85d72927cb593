/*
 * KERNEL  timing
 * WHAT    Shader clocks and sleep. On gfx9 targets: s_memtime (64-bit
 *         shader clock) and s_memrealtime (64-bit constant-rate "REFCLK"
 *         counter, 100 MHz on MI200/MI300), and s_sleep in a loop. gfx11
 *         and gfx12 have neither SMEM timer instruction; there the kernel
 *         uses __builtin_readcyclecounter / __builtin_readsteadycounter,
 *         which become s_getreg_b32 HW_REG_SHADER_CYCLES (only 20 bits,
 *         wraps) + s_sendmsg_rtn_b64 MSG_RTN_GET_REALTIME on gfx11, and
 *         s_getreg_b32 HW_REG_SHADER_CYCLES_HI/LO/HI + s_sendmsg_rtn_b64 on
 *         gfx12.
 * ARGS    0 out   : global ulong*  (4 per work-item, output)
 *         1 iters : uint           (number of s_sleep 10 instructions, uniform)
 * GRID    1-D; any shape (1 work-group of 64 suggested).
 * REF     For work-item i: o = out[4i..]
 *           o[0] = clock before, o[1] = clock after the sleep loop,
 *           o[2] = realtime before, o[3] = realtime after.
 *         Check o[3] >= o[2], and on gfx9 o[1] >= o[0] (with iters > 0,
 *         o[1] > o[0]; s_sleep 10 sleeps about 64*10 clocks). On gfx11 the
 *         clock is 20 bits wide and may wrap: check only o[3] >= o[2]. Values
 *         are not reproducible; only the ordering is.
 * COMPARE ordering only.
 */
#include "aq.h"

AQ_INLINE ulong clock64(void)
{
#if defined(__GFX9__)
    return __builtin_amdgcn_s_memtime();
#else
    return __builtin_readcyclecounter();
#endif
}

AQ_INLINE ulong realtime64(void)
{
#if defined(__GFX9__)
    return __builtin_amdgcn_s_memrealtime();
#else
    return __builtin_readsteadycounter();
#endif
}

__kernel void timing(__global ulong *out, uint iters)
{
    uint i = aq_gid_x();
    ulong c0 = clock64();
    ulong r0 = realtime64();
    for (uint k = 0; k < iters; k++)
        __builtin_amdgcn_s_sleep(10);
    ulong c1 = clock64();
    ulong r1 = realtime64();
    __global ulong *o = out + (ulong)i * 4;
    o[0] = c0;
    o[1] = c1;
    o[2] = r0;
    o[3] = r1;
}
