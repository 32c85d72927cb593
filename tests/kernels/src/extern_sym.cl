/*
 * KERNEL  extern_sym
 * WHAT    References an undefined external variable, `aq_external_var`
 *         (default visibility, NOTYPE GLOBAL UND in .dynsym). ld.lld -shared
 *         leaves it unresolved, so .rela.dyn carries two R_AMDGPU_ABS64
 *         relocations against it: one in .data.rel.ro for the initialised
 *         pointer `ext_ptr` (addend 8, i.e. &aq_external_var[2]) and one in
 *         .got (addend 0) for the direct access. The loader must resolve
 *         the name from a host-provided definition (as ROCr's
 *         hsa_executable_agent_global_variable_define) or from a variable
 *         of an earlier-loaded code object, and must fail to load when the
 *         symbol is missing -- even though the addend is non-zero.
 * ARGS    0 out : global uint*  (3 elements, output)
 * GRID    1 work-item is enough (every work-item writes the same values).
 * REF     With E = the address bound to aq_external_var (at least 12 bytes):
 *           out[0] = *(E + 8) as u32    (through ext_ptr)
 *           out[1] = *(E + 0) as u32    (through the GOT)
 *           out[2] = (ext_ptr - &aq_external_var[0]) as u32 == 2
 * COMPARE exact.
 */
#include "aq.h"

extern __global uint aq_external_var[] __attribute__((visibility("default")));

AQ_EXPORT __global uint *__constant ext_ptr = &aq_external_var[2];

__kernel void extern_sym(__global uint *out)
{
    out[0] = *ext_ptr;
    out[1] = aq_external_var[0];
    out[2] = (uint)(ext_ptr - &aq_external_var[0]);
}
