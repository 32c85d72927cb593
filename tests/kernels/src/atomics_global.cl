/*
 * KERNEL  atomics_global
 * WHAT    Global-memory atomics, 32 and 64 bit, all lanes hitting the same
 *         few addresses: add, sub, smin, smax, umin, umax, and, or, xor,
 *         xchg, cmpxchg (single winner), inc/dec with wrap
 *         (global_atomic_inc/dec), and a 64-bit compare-exchange retry loop.
 * ARGS    0 s32   : global int*          (12 elements, test initialises)
 *         1 s64   : global long*         (7 elements, test initialises)
 *         2 v32   : global const int*    (n elements)
 *         3 v64   : global const long*   (n elements)
 *         4 old32 : global int*          (2n elements, output)
 *         5 old64 : global long*         (n elements, output)
 *         6 n     : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     With initial values I32[k] = s32[k], I64[k] = s64[k] before the
 *         dispatch, v = v32[i], w = v64[i], over all i in 0..n:
 *          s32[0]  = I32[0] + sum(v)        (wrapping)
 *          s32[1]  = I32[1] - sum(v)        (wrapping)
 *          s32[2]  = min(I32[2], min v)     s32[3] = max(I32[3], max v)   (signed)
 *          s32[4]  = umin(I32[4], v...)     s32[5] = umax(I32[5], v...)   (as u32)
 *          s32[6]  = I32[6] & AND(v)        s32[7] = I32[7] | OR(v)
 *          s32[8]  = I32[8] ^ XOR(v)
 *          s32[9]  : exchange chain. old32[2i] = value replaced by lane i.
 *                    Check: multiset {I32[9]} + {v} == multiset {old32[2i]} + {s32[9]}.
 *          s32[10] : every lane does cmpxchg(s32[10], expected=-1, new=i).
 *                    Set I32[10] = -1. old32[2i+1] = 1 if lane i won, else 0.
 *                    Exactly one lane wins and s32[10] == its i.
 *          s32[11] : atomic_inc with limit 7 (x -> x >= 7 ? 0 : x+1), once per lane.
 *                    With I32[11] in 0..=7: s32[11] = (I32[11] + n) % 8.
 *          s64[0] = I64[0] + sum(w)         (wrapping)
 *          s64[1] = min(I64[1], min w)      s64[2] = max(I64[2], max w)   (signed)
 *          s64[3] = umax(I64[3], w...)      (as u64)
 *          s64[4] : exchange chain, old64[i] = replaced value (multiset check as above)
 *          s64[5] = I64[5] + sum(w) via a compare-exchange loop (wrapping)
 *          s64[6] = I64[6] | OR(w)
 * COMPARE exact (multisets for the exchange chains).
 */
#include "aq.h"

__kernel void atomics_global(__global int *s32, __global long *s64,
                             __global const int *v32, __global const long *v64,
                             __global int *old32, __global long *old64, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    int v = v32[i];
    long w = v64[i];

    __scoped_atomic_fetch_add(&s32[0], v, AQ_RELAXED, AQ_DEV);
    __scoped_atomic_fetch_sub(&s32[1], v, AQ_RELAXED, AQ_DEV);
    __scoped_atomic_fetch_min(&s32[2], v, AQ_RELAXED, AQ_DEV);
    __scoped_atomic_fetch_max(&s32[3], v, AQ_RELAXED, AQ_DEV);
    __scoped_atomic_fetch_min((__global uint *)&s32[4], (uint)v, AQ_RELAXED, AQ_DEV);
    __scoped_atomic_fetch_max((__global uint *)&s32[5], (uint)v, AQ_RELAXED, AQ_DEV);
    __scoped_atomic_fetch_and(&s32[6], v, AQ_RELAXED, AQ_DEV);
    __scoped_atomic_fetch_or(&s32[7], v, AQ_RELAXED, AQ_DEV);
    __scoped_atomic_fetch_xor(&s32[8], v, AQ_RELAXED, AQ_DEV);
    old32[2 * i] = __scoped_atomic_exchange_n(&s32[9], v, AQ_RELAXED, AQ_DEV);
    int expected = -1;
    old32[2 * i + 1] = __scoped_atomic_compare_exchange_n(
        &s32[10], &expected, (int)i, 0, AQ_RELAXED, AQ_RELAXED, AQ_DEV);
    __builtin_amdgcn_atomic_inc32((__global uint *)&s32[11], 7u, AQ_RELAXED, "agent");

    __scoped_atomic_fetch_add(&s64[0], w, AQ_RELAXED, AQ_DEV);
    __scoped_atomic_fetch_min(&s64[1], w, AQ_RELAXED, AQ_DEV);
    __scoped_atomic_fetch_max(&s64[2], w, AQ_RELAXED, AQ_DEV);
    __scoped_atomic_fetch_max((__global ulong *)&s64[3], (ulong)w, AQ_RELAXED, AQ_DEV);
    old64[i] = __scoped_atomic_exchange_n(&s64[4], w, AQ_RELAXED, AQ_DEV);
    long cur = __scoped_atomic_load_n(&s64[5], AQ_RELAXED, AQ_DEV);
    while (!__scoped_atomic_compare_exchange_n(&s64[5], &cur, (long)((ulong)cur + (ulong)w),
                                               1, AQ_RELAXED, AQ_RELAXED, AQ_DEV))
        ;
    __scoped_atomic_fetch_or(&s64[6], w, AQ_RELAXED, AQ_DEV);
}
