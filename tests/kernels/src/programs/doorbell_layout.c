/*
 * PROGRAM doorbell_layout
 * WHAT    The RPC client of the doorbell generation (AQ_RPC_DOORBELL: a
 *         2096-byte __llvm_rpc_client, buffer shifted by a 64-byte doorbell
 *         record, 16384 ports) with the doorbell left unset by the host.
 *         Every thread prints "lane <thread id> over the doorbell layout";
 *         thread 0 also mallocs, writes and frees a block; main returns 5.
 * EXPECT  exit code 5; one such line per thread.
 */
#define AQ_RPC_DOORBELL 1
#include "start.h"

int main(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    char line[64] = "lane ";
    size_t n = 5 + aq_utoa(aq_thread_id(), line + 5);
    const char *tail = " over the doorbell layout";
    for (size_t i = 0; tail[i]; ++i)
        line[n++] = tail[i];
    line[n] = 0;
    if (puts(line) != 0)
        return 1;
    if (aq_thread_id() == 0) {
        volatile uint64_t *p = (volatile uint64_t *)malloc(64);
        if (!p)
            return 1;
        p[7] = 7;
        free((void *)p);
    }
    return 5;
}
