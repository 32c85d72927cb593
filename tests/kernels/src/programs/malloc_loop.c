/*
 * PROGRAM malloc_loop
 * WHAT    Every thread: 50 rounds of p = malloc(16 + 8 * round), fill it with
 *         its thread id and the round, read it back, free(p); then one more
 *         malloc(256) that is never freed (the host frees it at the end).
 *         Thread 0 then prints "malloc ok" or "malloc failed".
 * EXPECT  exit code 0 and stdout "malloc ok\n"; exit code 1 if a block was
 *         NULL or did not read back.
 */
#include "start.h"

int main(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    uint32_t id = aq_thread_id();
    int bad = 0;
    for (uint32_t round = 0; round < 50; ++round) {
        uint32_t words = 4 + 2 * round;
        volatile uint32_t *p = (volatile uint32_t *)malloc(4 * words);
        if (!p) {
            bad = 1;
            continue;
        }
        for (uint32_t i = 0; i < words; ++i)
            p[i] = id * 1000 + round + i;
        for (uint32_t i = 0; i < words; ++i)
            bad |= p[i] != id * 1000 + round + i;
        free((void *)p);
    }
    volatile uint32_t *leak = (volatile uint32_t *)malloc(256);
    bad |= leak == 0;
    if (leak)
        leak[0] = id;
    if (id == 0)
        puts(bad ? "malloc failed" : "malloc ok");
    return bad;
}
