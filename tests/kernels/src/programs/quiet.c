/*
 * PROGRAM quiet
 * WHAT    Computes for argv[1] milliseconds (default 1000) without a single
 *         host call: thread 0 waits until s_memrealtime has advanced by
 *         __llvm_libc_clock_freq * ms / 1000 ticks (the loader writes the
 *         frequency; 0 there means it did not, and the program returns 2).
 *         The RPC server has nothing to do all that time: its idle cost.
 * EXPECT  exit code 0 after about argv[1] ms of wall time.
 */
#include "start.h"

/* Written by the loader: the GPU's fixed timestamp frequency in Hz. */
AQ_EXPORT uint64_t __llvm_libc_clock_freq;

static uint32_t parse(const char *s) {
    uint32_t n = 0;
    for (; *s >= '0' && *s <= '9'; ++s)
        n = n * 10 + (uint32_t)(*s - '0');
    return n;
}

int main(int argc, char **argv, char **envp) {
    (void)envp;
    uint64_t freq = __atomic_load_n(&__llvm_libc_clock_freq, __ATOMIC_RELAXED);
    if (freq == 0)
        return 2;
    uint64_t ms = argc > 1 ? parse(argv[1]) : 1000;
    uint64_t ticks = freq / 1000 * ms;
    uint64_t start = __builtin_amdgcn_s_memrealtime();
    while (__builtin_amdgcn_s_memrealtime() - start < ticks)
        __builtin_amdgcn_s_sleep(127);
    return 0;
}
