/*
 * PROGRAM stack_strings
 * WHAT    thread 0 of work-group 0 builds its output in stack arrays at run
 *         time (functions that are not inlined copy words and format
 *         numbers into them through pointers) and prints them with puts and
 *         fputs_stdout, whose strlen, inlined over a stack array, clang
 *         compiles on gfx90a to a scratch pointer started one byte early (a
 *         VGPR offset of -1) loaded with offset:1. Every thread returns 0.
 * EXPECT  exit code 0; stdout
 *         "stack line 1: aqueduct\nstack line 2: scratch\n"
 *         "stack line 3: 4294967295\ndesrever\n"; stderr empty.
 */
#include "start.h"

/* The length as LLVM libc's string_length has it: a pointer walked to the NUL. */
AQ_INLINE size_t string_length(const char *s) {
    const char *end = s;
    while (*end)
        ++end;
    return (size_t)(end - s);
}

/* puts with that length: the bytes and a newline the server adds. */
AQ_INLINE void print_line(const char *s) {
    aq_write(RPC_WRITE_TO_STDOUT_NEWLINE, s, string_length(s));
}

__attribute__((noinline)) static char *append(char *dst, const char *src) {
    while (*src)
        *dst++ = *src++;
    *dst = 0;
    return dst;
}

__attribute__((noinline)) static char *append_u32(char *dst, uint32_t v) {
    char digits[12];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *dst++ = digits[--n];
    *dst = 0;
    return dst;
}

__attribute__((noinline)) static void reverse(char *dst, const char *src) {
    const char *end = src;
    while (*end)
        end++;
    while (end != src)
        *dst++ = *--end;
    *dst = 0;
}

int main(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    if (__builtin_amdgcn_workitem_id_x() != 0 || __builtin_amdgcn_workgroup_id_x() != 0)
        return 0;
    char line[64];
    char *p = append(line, "stack line ");
    p = append_u32(p, 1);
    append(append(p, ": "), "aqueduct");
    print_line(line);
    p = append(line, "stack line ");
    p = append_u32(p, 2);
    append(append(p, ": "), "scratch");
    print_line(line);
    p = append(line, "stack line ");
    p = append_u32(p, 3);
    append(append(p, ": "), "");
    append_u32(line + 14, 0xffffffffu);
    print_line(line);
    char word[16];
    reverse(word, "reversed");
    fputs_stdout(word);
    char newline[2];
    append(newline, "\n");
    fputs_stdout(newline);
    return 0;
}
