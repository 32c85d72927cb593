/*
 * KERNEL  atomic_fadd
 * WHAT    Floating-point atomic add: global f32 (global_atomic_add_f32),
 *         global f64 (global_atomic_add_f64 on gfx90a/gfx942; a cmpswap
 *         loop elsewhere) and LDS f32 (ds_add_f32 / ds_add_rtn_f32).
 *         Built with -munsafe-fp-atomics so LLVM uses the native
 *         instructions instead of compare-exchange loops.
 * ARGS    0 fsum : global float*         (1 element, test initialises)
 *         1 dsum : global double*        (1 element, test initialises)
 *         2 fv   : global const float*   (n elements)
 *         3 dv   : global const double*  (n elements)
 *         4 wsum : global float*         (1 per work-group, output)
 *         5 n    : uint
 * GRID    1-D; work-group MUST be 64 (reqd_work_group_size); grid = n
 *         rounded up to 64.
 * REF     fsum = F0 + sum(fv[0..n]),  dsum = D0 + sum(dv[0..n]),
 *         wsum[g] = sum(fv[64g .. min(64g+64, n)]).
 *         Floating-point addition is not associative, so the order of
 *         the atomics would matter: choose inputs whose every partial sum
 *         is exact (e.g. multiples of 1/256 with |total| < 2^15 for f32,
 *         < 2^40 for f64). Then the result is bit-exact.
 * COMPARE bit-exact under the input rule above.
 */
#include "aq.h"

#define WG 64

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void atomic_fadd(__global float *fsum, __global double *dsum,
                  __global const float *fv, __global const double *dv,
                  __global float *wsum, uint n)
{
    __local float acc;
    uint lid = aq_lid_x();
    uint i = aq_group_x() * WG + lid;

    if (lid == 0)
        acc = 0.0f;
    aq_barrier();
    if (i < n) {
        __scoped_atomic_fetch_add(fsum, fv[i], AQ_RELAXED, AQ_DEV);
        __scoped_atomic_fetch_add(dsum, dv[i], AQ_RELAXED, AQ_DEV);
        __scoped_atomic_fetch_add(&acc, fv[i], AQ_RELAXED, AQ_WG);
    }
    aq_barrier();
    if (lid == 0)
        wsum[aq_group_x()] = acc;
}
