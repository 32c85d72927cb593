/*
 * PROGRAM return_value
 * WHAT    main returns 42 from every thread; nothing else.
 * EXPECT  exit code 42, no output.
 */
#include "start.h"

int main(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    return 42;
}
