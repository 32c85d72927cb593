/*
 * PROGRAM fault
 * WHAT    Thread 0 prints "about to fault", then stores to address
 *         0xdead0000, which nothing maps.
 * EXPECT  a memory fault at 0xdead0000 (the page); "about to fault" on stdout.
 */
#include "start.h"

int main(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    if (aq_thread_id() == 0) {
        puts("about to fault");
        *(volatile uint32_t *)0xdead0000ul = 1;
    }
    return 0;
}
