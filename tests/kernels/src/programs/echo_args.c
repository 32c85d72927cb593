/*
 * PROGRAM echo_args
 * WHAT    Thread 0 prints "argv[i]=<arg>" for every argument, then
 *         "env <entry>" for every environment entry that starts with "AQ_".
 * EXPECT  exit code argc (from every thread); the lines in order.
 */
#include "start.h"

static int starts_with(const char *s, const char *prefix) {
    for (size_t i = 0; prefix[i]; ++i)
        if (s[i] != prefix[i])
            return 0;
    return 1;
}

static void print2(const char *a, const char *b) {
    char line[256];
    size_t n = 0;
    for (size_t i = 0; a[i] && n < 255; ++i)
        line[n++] = a[i];
    for (size_t i = 0; b[i] && n < 255; ++i)
        line[n++] = b[i];
    line[n] = 0;
    puts(line);
}

int main(int argc, char **argv, char **envp) {
    if (aq_thread_id() == 0) {
        for (int i = 0; i < argc; ++i) {
            char head[24] = "argv[";
            size_t n = 5 + aq_utoa((uint32_t)i, head + 5);
            head[n++] = ']';
            head[n++] = '=';
            head[n] = 0;
            print2(head, argv[i]);
        }
        for (char **e = envp; *e; ++e)
            if (starts_with(*e, "AQ_"))
                print2("env ", *e);
    }
    return argc;
}
