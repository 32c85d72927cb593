/*
 * KERNEL  bss
 * WHAT    A zero-initialised program-scope array (4 KiB in .bss, NOBITS:
 *         its PT_LOAD has p_memsz > p_filesz). The loader must zero it.
 *         The kernel returns the current contents and then updates them,
 *         so a second dispatch on the same loaded object sees the first
 *         one's writes.
 * ARGS    0 out : global uint*  (n elements, output)
 *         1 n   : uint  (<= 1024)
 * GRID    1-D; any work-group size; grid = n rounded up.
 * REF     Dispatch number d (1, 2, ...) on a freshly loaded object:
 *           for i in 0..n: out[i] = (d - 1) * (i + 1)
 *         (each dispatch adds i + 1 to bss_counters[i]).
 * SYMBOLS bss_counters: STT_OBJECT, 4096 bytes, section .bss, GLOBAL PROTECTED.
 * COMPARE exact.
 */
#include "aq.h"

AQ_EXPORT __global uint bss_counters[1024];

__kernel void bss(__global uint *out, uint n)
{
    uint i = aq_gid_x();
    if (i < n && i < 1024) {
        out[i] = bss_counters[i];
        bss_counters[i] += i + 1;
    }
}
