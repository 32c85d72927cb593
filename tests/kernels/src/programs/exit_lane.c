/*
 * PROGRAM exit_lane
 * WHAT    Launch with at least 6 threads. Thread 5 calls exit(3) (atexit
 *         handlers, then RPC_EXIT, then its wave ends); every other thread
 *         returns 1 from main.
 * EXPECT  exit code 3 (not 1: exit wins over main's return), no output.
 */
#include "start.h"

int main(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    if (aq_thread_id() == 5)
        exit(3);
    return 1;
}
