/*
 * KERNEL  int32_ops
 * WHAT    32-bit integer ALU coverage: add/sub/mul, mul-high, division and
 *         remainder by runtime divisors, shifts, bit logic, popcount,
 *         clz/ctz, bitfield extract/insert, min/max, rotate, bit reverse,
 *         byte swap.
 * ARGS    0 a   : global const int*  (n elements)
 *         1 b   : global const int*  (n elements)
 *         2 out : global int*        (n*28 elements, output)
 *         3 n   : uint
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     Rust, with a = a[i], b = b[i] (i32), ua = a as u32, ub = b as u32,
 *         s = ub & 31, d = b | 1 (never 0), ud = ub | 1; o = &mut out[28*i..]:
 *          o[0]  = a.wrapping_add(b)         o[1]  = a.wrapping_sub(b)
 *          o[2]  = a.wrapping_mul(b)
 *          o[3]  = ((a as i64 * b as i64) >> 32) as i32          (mul_hi signed)
 *          o[4]  = ((ua as u64 * ub as u64) >> 32) as i32        (mul_hi unsigned)
 *          o[5]  = a.wrapping_div(d)         o[6]  = a.wrapping_rem(d)
 *          o[7]  = (ua / ud) as i32          o[8]  = (ua % ud) as i32
 *          o[9]  = (ua << s) as i32          o[10] = a >> s   (arithmetic)
 *          o[11] = (ua >> s) as i32          o[12] = a & b
 *          o[13] = a | b                     o[14] = a ^ b
 *          o[15] = !a & b                    o[16] = ua.count_ones() as i32
 *          o[17] = ua.leading_zeros() as i32 (32 for 0)
 *          o[18] = ua.trailing_zeros() as i32 (32 for 0)
 *          o[19] = ((ua >> (ub & 15)) & 0xfff) as i32            (unsigned bitfield extract)
 *          o[20] = ((ua << (20 - (ub & 15))) as i32) >> 20       (signed 12-bit field at
 *                  bit ub & 15, via __builtin_amdgcn_sbfe)
 *          o[21] = ((ua & 0xff00ff00) | (ub & 0x00ff00ff)) as i32 (bitfield insert/select)
 *          o[22] = a.min(b)                  o[23] = a.max(b)
 *          o[24] = ua.min(ub) as i32         o[25] = ua.max(ub) as i32
 *          o[26] = ua.rotate_left(s) as i32
 *          o[27] = (ua.reverse_bits() ^ ua.swap_bytes()) as i32
 *         Precondition: never (a == i32::MIN && d == -1) (C leaves it undefined).
 * COMPARE exact.
 */
#include "aq.h"

#define NOUT 28

__kernel void int32_ops(__global const int *pa, __global const int *pb,
                        __global int *out, uint n)
{
    uint i = aq_gid_x();
    if (i >= n)
        return;
    int a = pa[i], b = pb[i];
    uint ua = (uint)a, ub = (uint)b;
    uint s = ub & 31;
    int d = b | 1;
    uint ud = ub | 1;
    __global int *o = out + (ulong)i * NOUT;

    o[0] = (int)(ua + ub);
    o[1] = (int)(ua - ub);
    o[2] = (int)(ua * ub);
    o[3] = (int)(((long)a * (long)b) >> 32);
    o[4] = (int)(((ulong)ua * (ulong)ub) >> 32);
    o[5] = a / d;
    o[6] = a % d;
    o[7] = (int)(ua / ud);
    o[8] = (int)(ua % ud);
    o[9] = (int)(ua << s);
    o[10] = a >> s;
    o[11] = (int)(ua >> s);
    o[12] = a & b;
    o[13] = a | b;
    o[14] = a ^ b;
    o[15] = ~a & b;
    o[16] = __builtin_popcount(ua);
    o[17] = __builtin_clzg(ua, 32);
    o[18] = __builtin_ctzg(ua, 32);
    o[19] = (int)((ua >> (ub & 15)) & 0xfffu);
    o[20] = __builtin_amdgcn_sbfe(a, ub & 15, 12);   /* v_bfe_i32 */
    o[21] = (int)((ua & 0xff00ff00u) | (ub & 0x00ff00ffu));
    o[22] = a < b ? a : b;
    o[23] = a > b ? a : b;
    o[24] = (int)(ua < ub ? ua : ub);
    o[25] = (int)(ua > ub ? ua : ub);
    o[26] = (int)__builtin_rotateleft32(ua, s);
    o[27] = (int)(__builtin_bitreverse32(ua) ^ __builtin_bswap32(ua));
}
