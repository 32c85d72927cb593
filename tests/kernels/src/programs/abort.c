/*
 * PROGRAM abort
 * WHAT    Thread 0 prints "aborting" and calls abort(); the rest return 0.
 * EXPECT  the program ends with abort; "aborting" on stdout.
 */
#include "start.h"

int main(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    if (aq_thread_id() == 0) {
        puts("aborting");
        abort();
    }
    return 0;
}
