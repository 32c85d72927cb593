/*
 * PROGRAM many_lanes
 * WHAT    Every thread (blocks of 64) prints one line with puts:
 *         "line <thread id> from a lane of the GPU" (thread id = block * 64 +
 *         lane); all lanes of a wave share one RPC call.
 * EXPECT  exit code 0 (1 if a puts failed: the host must answer with the
 *         bytes written, newline included); stdout holds exactly one such line
 *         per thread, each complete (order between lanes and waves is not
 *         fixed).
 */
#include "start.h"

int main(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    char line[64];
    size_t n = 0;
    const char *head = "line ";
    const char *tail = " from a lane of the GPU";
    for (size_t i = 0; head[i]; ++i)
        line[n++] = head[i];
    n += aq_utoa(aq_thread_id(), line + n);
    for (size_t i = 0; tail[i]; ++i)
        line[n++] = tail[i];
    line[n] = 0;
    return puts(line) == 0 ? 0 : 1;
}
