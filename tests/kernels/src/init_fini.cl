/*
 * KERNEL  init_fini
 * WHAT    A program-scope constructor and destructor. LLVM's
 *         AMDGPUCtorDtorLowering turns them into two extra kernels,
 *         `amdgcn.device.init` (metadata `.kind: init`) and
 *         `amdgcn.device.fini` (`.kind: fini`), which walk
 *         __init_array_start..__init_array_end and the fini array and call
 *         each entry through a pointer (R_AMDGPU_RELATIVE64 in .init_array
 *         and .fini_array; USES_DYNAMIC_STACK, but the callees are leaves
 *         that need no stack). A loader runs the init kernel once after
 *         loading and the fini kernel once before unloading (ROCr never
 *         runs them).
 *         - aq_on_load (constructor): init_runs += 1.
 *         - aq_on_unload (destructor): *fini_counter += 1 when the host has
 *           stored a counter's address in fini_counter (else nothing).
 *         It also exports `aq_external_var`, the variable extern_sym needs.
 * ARGS    init_fini_read: 0 out : global uint*  (2 elements, output)
 *         init and fini kernels: none (hidden arguments only); launch them
 *         with one work-item.
 * GRID    init_fini_read: 1 work-item is enough.
 * REF     init_fini_read: out[0] = init_runs (1 after one init run),
 *                         out[1] = aq_external_var[0] = 11.
 * COMPARE exact.
 * SYMBOLS init_runs (u32), fini_counter (global uint*), aq_external_var
 *         (u32[4] = {11, 22, 33, 44}): exported (GLOBAL PROTECTED).
 */
#include "aq.h"

AQ_EXPORT __global uint aq_external_var[4] = {11, 22, 33, 44};
AQ_EXPORT __global uint init_runs;
AQ_EXPORT __global uint *fini_counter;

__attribute__((constructor)) static void aq_on_load(void)
{
    __atomic_fetch_add(&init_runs, 1, __ATOMIC_RELAXED);
}

__attribute__((destructor)) static void aq_on_unload(void)
{
    if (fini_counter)
        __atomic_fetch_add(fini_counter, 1, __ATOMIC_RELAXED);
}

__kernel void init_fini_read(__global uint *out)
{
    out[0] = init_runs;
    out[1] = aq_external_var[0];
}
