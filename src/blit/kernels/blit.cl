/*
 * blit.cl -- the copy and fill kernels the driver dispatches on an AQL queue, like
 * ROCr's blit kernels (core/runtime/blit_kernel.cpp): copies and fills that run in
 * the queue's order with its launches, so a command list can hold them.
 *
 * Built by build.sh into blit.hipfb (an offload bundle, one code object per
 * target), embedded in the driver with include_bytes!. Compiled with -nogpulib:
 * no device library, only clang's AMDGPU builtins.
 *
 * Both kernels split the destination range [dst, dst + bytes) along the 16-byte
 * aligned chunks of the address space: work-item i owns chunk
 * (dst & ~15) + 16 * i, clipped to the range. A whole chunk is one 16-byte access
 * (or four dword accesses when the source is only dword-aligned relative to the
 * destination); the partial chunks at both ends, and every chunk of a copy whose
 * source and destination differ in alignment mod 4, go byte by byte. So any
 * byte count and any alignment is handled, and no byte outside the range is
 * touched. Grid: ((dst & 15) + bytes + 15) / 16 work-items, 1-D, any group size.
 */

#define BLIT_INLINE static inline __attribute__((always_inline))

BLIT_INLINE ulong blit_gid(void)
{
    return (ulong)__builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
           __builtin_amdgcn_workitem_id_x();
}

/*
 * KERNEL  aqueduct_copy
 * ARGS    0 dst : global uchar* (bytes), 1 src : global const uchar* (bytes),
 *         2 bytes : ulong
 * REF     for i in 0..bytes: dst[i] = src[i] (the ranges must not overlap).
 */
__kernel void aqueduct_copy(__global uchar *dst, __global const uchar *src, ulong bytes)
{
    ulong start = (ulong)dst;
    ulong end = start + bytes;
    ulong lo = (start & ~(ulong)15) + 16 * blit_gid();
    ulong hi = lo + 16;
    ulong from = lo > start ? lo : start;
    ulong to = hi < end ? hi : end;
    if (from >= to)
        return;
    /* Source address of destination address a: a + delta (mod 2^64). */
    ulong delta = (ulong)src - start;
    if (from == lo && to == hi) {
        if ((delta & 15) == 0) {
            *(__global uint4 *)lo = *(__global const uint4 *)(lo + delta);
            return;
        }
        if ((delta & 3) == 0) {
            __global uint *d = (__global uint *)lo;
            __global const uint *s = (__global const uint *)(lo + delta);
            uint a = s[0], b = s[1], c = s[2], e = s[3];
            d[0] = a;
            d[1] = b;
            d[2] = c;
            d[3] = e;
            return;
        }
    }
#pragma clang loop unroll(disable)
    for (ulong a = from; a < to; a++)
        *(__global uchar *)a = *(__global const uchar *)(a + delta);
}

/*
 * KERNEL  aqueduct_fill
 * ARGS    0 dst : global uchar* (bytes), 1 bytes : ulong,
 *         2 phased : uint, the pattern rotated so that byte (a & 3) of it is the
 *           byte that goes to address a (the driver rotates the caller's pattern
 *           left by 8 * (dst & 3) bits)
 * REF     for i in 0..bytes: dst[i] = byte (i % 4) of the caller's pattern.
 */
__kernel void aqueduct_fill(__global uchar *dst, ulong bytes, uint phased)
{
    ulong start = (ulong)dst;
    ulong end = start + bytes;
    ulong lo = (start & ~(ulong)15) + 16 * blit_gid();
    ulong hi = lo + 16;
    ulong from = lo > start ? lo : start;
    ulong to = hi < end ? hi : end;
    if (from >= to)
        return;
    if (from == lo && to == hi) {
        *(__global uint4 *)lo = (uint4)(phased);
        return;
    }
    /* One byte at a time, the pattern rotated along (32-bit operations only: unrolled and
     * combined, the loop became 16-bit operations on gfx11, true16 forms the simulator does
     * not model yet). */
    /* Rotated right by 8 * (from & 3): byte 0 is the one for address `from` (OpenCL takes
     * shift counts mod 32; the k = 0 case is picked apart anyway). */
    uint byte = phased >> (8 * (uint)(from & 3));
    uint rest = phased << (32 - 8 * (uint)(from & 3));
    uint p = (from & 3) ? (byte | rest) : phased;
#pragma clang loop unroll(disable)
    for (ulong a = from; a < to; a++) {
        *(__global uchar *)a = (uchar)p;
        p = (p >> 8) | (p << 24);
    }
}
