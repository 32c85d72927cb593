/*
 * KERNEL  stack_string
 * WHAT    A string built in a per-lane stack array, handed to functions that
 *         are not inlined and walk it with a pointer: a strlen over a
 *         __private pointer (on gfx90a clang starts the pointer one byte
 *         early, a VGPR offset of -1, and loads with offset:1: the MUBUF
 *         offset must wrap at 32 bits), an FNV-1a hash over a generic
 *         pointer (FLAT loads through the private aperture), and a reversing
 *         copy into a second stack array through __private pointers (stores),
 *         hashed again. Needs a private segment.
 * ARGS    0 seed : global const uint*  (n elements)
 *         1 out  : global uint*        (3n elements, output)
 *         2 n    : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     fn fnv(b: &[u8]) -> u32 { b.iter().fold(2166136261u32, |h, &c|
 *             (h ^ c as u32).wrapping_mul(16777619)) }
 *         for i in 0..n (all u32 wrapping):
 *           let mut x = seed[i]; let len = 1 + x % 60;
 *           let text: Vec<u8> = (0..len).map(|_| { x = x*1103515245 + 12345;
 *               (32 + (x >> 16) % 95) as u8 }).collect();
 *           let rev: Vec<u8> = text.iter().rev().copied().collect();
 *           out[3i] = len; out[3i+1] = fnv(&text); out[3i+2] = fnv(&rev);
 * COMPARE exact.
 */
#include "aq.h"

__attribute__((noinline)) static uint length_private(const __private char *s)
{
    const __private char *p = s;
    while (*p)
        p++;
    return (uint)(p - s);
}

__attribute__((noinline)) static uint hash_generic(const char *s)
{
    uint h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (uchar)*s) * 16777619u;
    return h;
}

__attribute__((noinline)) static void reverse_private(__private char *dst,
                                                      const __private char *src)
{
    const __private char *end = src;
    while (*end)
        end++;
    while (end != src)
        *dst++ = *--end;
    *dst = 0;
}

__kernel void stack_string(__global const uint *seed, __global uint *out, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    char text[64];
    char rev[64];
    uint x = seed[i];
    uint len = 1 + x % 60;
    for (uint k = 0; k < len; k++) {
        x = x * 1103515245u + 12345u;
        text[k] = (char)(32 + (x >> 16) % 95);
    }
    text[len] = 0;
    reverse_private(rev, text);
    out[3 * i] = length_private(text);
    out[3 * i + 1] = hash_generic(text);
    out[3 * i + 2] = hash_generic(rev);
}
