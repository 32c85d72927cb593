/*
 * KERNEL  device_call
 * WHAT    Real calls to non-inlined device functions (s_getpc_b64 /
 *         s_swappc_b64, s_setpc_b64 return) with a kernel stack frame:
 *         the kernel keeps an 8-word private array whose address is passed
 *         to the callees, so it must live in scratch
 *         (private_segment_fixed_size > 0, stack pointer s32).
 *         - dc_mix: exported function (GLOBAL DEFAULT STT_FUNC in .dynsym).
 *         - dc_window_sum: static (LOCAL STT_FUNC, .symtab only); takes a
 *           __private pointer and reads the caller's frame with
 *           buffer_load/scratch_load.
 *         - dc_xor_generic: static; takes a generic pointer to the same
 *           private array, so it reads scratch through flat_load and the
 *           private aperture (unless the compiler specialises it; see the
 *           README's instruction table).
 * ARGS    0 in  : global const uint*  (n + 8 elements: the kernel reads in[i..i+8])
 *         1 out : global uint*        (n elements, output)
 *         2 n   : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     (u32 wrapping) w = in[i..i+8], k = in[i] & 7:
 *           mix(a, b) = (a ^ b.wrapping_mul(0x9e3779b9)).rotate_left(5) + b
 *           wsum      = sum over j in 0..8 of w[(j*k + 3) & 7]
 *           xorg      = XOR over j in 0..8 of (w[j] << j)
 *           out[i]    = mix(in[i], i) + wsum + xorg
 * COMPARE exact.
 */
#include "aq.h"

__attribute__((noinline, visibility("default")))
uint dc_mix(uint a, uint b)
{
    return __builtin_rotateleft32(a ^ (b * 0x9e3779b9u), 5) + b;
}

__attribute__((noinline))
static uint dc_window_sum(__private const uint *w, uint k)
{
    uint s = 0;
    for (uint j = 0; j < 8; j++)
        s += w[(j * k + 3) & 7];
    return s;
}

__attribute__((noinline))
static uint dc_xor_generic(const uint *w)
{
    uint x = 0;
    for (uint j = 0; j < 8; j++)
        x ^= w[j] << j;
    return x;
}

__kernel void device_call(__global const uint *in, __global uint *out, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    uint w[8];
    for (uint j = 0; j < 8; j++)
        w[j] = in[i + j];
    out[i] = dc_mix(in[i], i) + dc_window_sum(w, in[i] & 7) + dc_xor_generic(w);
}
