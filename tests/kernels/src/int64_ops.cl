/*
 * KERNEL  int64_ops
 * WHAT    64-bit integer coverage: add/sub/mul (split into 32-bit halves by
 *         the compiler), 32x32->64 multiplies (v_mad_u64_u32 / v_mad_i64_i32),
 *         64-bit division and remainder (long software expansion), shifts by
 *         variable amounts, bit logic, popcount, clz/ctz, min/max, byte swap.
 * ARGS    0 a   : global const long*  (n elements)
 *         1 b   : global const long*  (n elements)
 *         2 out : global long*        (n*22 elements, output)
 *         3 n   : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     Rust, a = a[i], b = b[i] (i64), ua = a as u64, ub = b as u64,
 *         s = (ub & 63) as u32, d = b | 1, ud = ub | 1; o = &mut out[22*i..]:
 *          o[0]  = a.wrapping_add(b)        o[1]  = a.wrapping_sub(b)
 *          o[2]  = a.wrapping_mul(b)
 *          o[3]  = a.wrapping_div(d)        o[4]  = a.wrapping_rem(d)
 *          o[5]  = (ua / ud) as i64         o[6]  = (ua % ud) as i64
 *          o[7]  = (ua << s) as i64         o[8]  = a >> s (arithmetic)
 *          o[9]  = (ua >> s) as i64
 *          o[10] = (a & b) ^ (a | !b)
 *          o[11] = ua.count_ones() as i64
 *          o[12] = ua.leading_zeros() as i64   (64 for 0)
 *          o[13] = ua.trailing_zeros() as i64  (64 for 0)
 *          o[14] = a.min(b)                 o[15] = a.max(b)
 *          o[16] = ua.min(ub) as i64        o[17] = ua.max(ub) as i64
 *          o[18] = (a as i32 as i64) * (b as i32 as i64)       (signed 32x32->64)
 *          o[19] = ((a as u32 as u64) * (b as u32 as u64)) as i64 (unsigned 32x32->64)
 *          o[20] = ua.swap_bytes() as i64
 *          o[21] = ((ua as u128 * ub as u128) >> 64) as i64   (unsigned mul_hi)
 *         Precondition: never (a == i64::MIN && d == -1).
 * COMPARE exact.
 */
#include "aq.h"

#define NOUT 22

AQ_INLINE ulong mulhi_u64(ulong x, ulong y)
{
    ulong xl = x & 0xffffffffu, xh = x >> 32;
    ulong yl = y & 0xffffffffu, yh = y >> 32;
    ulong ll = xl * yl, lh = xl * yh, hl = xh * yl, hh = xh * yh;
    ulong mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

__kernel void int64_ops(__global const long *pa, __global const long *pb,
                        __global long *out, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    long a = pa[i], b = pb[i];
    ulong ua = (ulong)a, ub = (ulong)b;
    uint s = (uint)(ub & 63);
    long d = b | 1;
    ulong ud = ub | 1;
    __global long *o = out + (ulong)i * NOUT;

    o[0] = (long)(ua + ub);
    o[1] = (long)(ua - ub);
    o[2] = (long)(ua * ub);
    o[3] = a / d;
    o[4] = a % d;
    o[5] = (long)(ua / ud);
    o[6] = (long)(ua % ud);
    o[7] = (long)(ua << s);
    o[8] = a >> s;
    o[9] = (long)(ua >> s);
    o[10] = (a & b) ^ (a | ~b);
    o[11] = __builtin_popcountl(ua);
    o[12] = __builtin_clzg(ua, 64);
    o[13] = __builtin_ctzg(ua, 64);
    o[14] = a < b ? a : b;
    o[15] = a > b ? a : b;
    o[16] = (long)(ua < ub ? ua : ub);
    o[17] = (long)(ua > ub ? ua : ub);
    o[18] = (long)(int)a * (long)(int)b;
    o[19] = (long)((ulong)(uint)a * (ulong)(uint)b);
    o[20] = (long)__builtin_bswap64(ua);
    o[21] = (long)mulhi_u64(ua, ub);
}
