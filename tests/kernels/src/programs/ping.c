/*
 * PROGRAM ping
 * WHAT    Thread 0 makes argv[1] round trips to the host (default 100): each an
 *         empty WRITE_TO_STDOUT (one packet out, one answer back), timed with
 *         s_memrealtime. Then it prints "ticks <T>" (T: timestamp ticks for all
 *         the calls; the host's GPU timestamp frequency converts them).
 * EXPECT  exit code 0; stdout "ticks <T>\n".
 */
#include "start.h"

static uint32_t parse(const char *s) {
    uint32_t n = 0;
    for (; *s >= '0' && *s <= '9'; ++s)
        n = n * 10 + (uint32_t)(*s - '0');
    return n;
}

int main(int argc, char **argv, char **envp) {
    (void)envp;
    if (aq_thread_id() != 0)
        return 0;
    uint32_t calls = argc > 1 ? parse(argv[1]) : 100;
    uint64_t start = __builtin_amdgcn_s_memrealtime();
    for (uint32_t i = 0; i < calls; ++i)
        aq_write(RPC_WRITE_TO_STDOUT, "", 0);
    uint64_t ticks = __builtin_amdgcn_s_memrealtime() - start;
    char line[32] = "ticks ";
    aq_utoa((uint32_t)(ticks > 0xffffffffu ? 0xffffffffu : ticks), line + 6);
    puts(line);
    return 0;
}
