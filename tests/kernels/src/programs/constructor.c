/*
 * PROGRAM constructor
 * WHAT    A global constructor (in .init_array, run by _begin) adds 1234 to
 *         `constructed` (so a loader that ran it twice, through _begin and
 *         through LLVM's amdgcn.device.init kernel, leaves 2468); a destructor (in
 *         .fini_array, run by exit's atexit walk in _end) prints
 *         "destructor ran". main prints "constructed 1234" when it sees the
 *         value.
 * EXPECT  exit code 0; stdout "constructed 1234\ndestructor ran\n".
 */
#include "start.h"

static volatile uint32_t constructed;

__attribute__((constructor)) static void set_up(void) { constructed += 1234; }

__attribute__((destructor)) static void tear_down(void) { puts("destructor ran"); }

int main(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    if (constructed != 1234)
        return 1;
    if (aq_thread_id() == 0)
        puts("constructed 1234");
    return 0;
}
