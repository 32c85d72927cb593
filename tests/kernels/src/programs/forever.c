/*
 * PROGRAM forever
 * WHAT    Prints "running", then never ends (a loop on a volatile flag that
 *         nothing sets, sleeping between reads).
 * EXPECT  a timeout; "running" on stdout.
 */
#include "start.h"

static volatile uint32_t never_set;

int main(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    if (aq_thread_id() == 0)
        puts("running");
    while (!never_set)
        __builtin_amdgcn_s_sleep(10);
    return 0;
}
