/*
 * PROGRAM hello
 * WHAT    thread 0 prints "hello from the GPU" to stdout (puts) and
 *         "a line on stderr\n" to stderr; every thread returns 0.
 * EXPECT  exit code 0; stdout "hello from the GPU\n"; stderr
 *         "a line on stderr\n".
 */
#include "start.h"

int main(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    if (__builtin_amdgcn_workitem_id_x() == 0 && __builtin_amdgcn_workgroup_id_x() == 0) {
        puts("hello from the GPU");
        fputs_stderr("a line on stderr\n");
    }
    return 0;
}
