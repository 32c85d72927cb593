/*
 * A GPU program's start code and the few libc calls the test programs use,
 * written from the behaviour of LLVM libc's GPU startup
 * (libc/startup/gpu/amdgpu/start.cpp) and its RPC-backed calls: no code of
 * LLVM's is used.
 *
 *   _begin(argc, argv, envp)        1 thread: run the .init_array entries
 *   _start(argc, argv, envp, ret)   every thread: *ret |= main(argc, argv, envp)
 *   _end(retval)                    1 thread: run atexit handlers (the fini
 *                                   array), then RPC_EXIT with retval
 *
 * A program defines `int main(int argc, char **argv, char **envp)` and
 * includes this file once.
 */
#ifndef AQ_START_H
#define AQ_START_H

#include "rpc_client.h"

#define AQ_KERNEL __attribute__((amdgpu_kernel, visibility("protected"), used))

int main(int argc, char **argv, char **envp);

/* ------------------------------------------------------------ strings ---- */
AQ_INLINE size_t strlen(const char *s) {
    size_t n = 0;
    while (s[n])
        ++n;
    return n;
}

/* Decimal digits of `value` at `out` (NUL-terminated); returns the length. */
__attribute__((unused)) static size_t aq_utoa(uint32_t value, char *out) {
    char digits[10];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    for (size_t i = 0; i < n; ++i)
        out[i] = digits[n - 1 - i];
    out[n] = 0;
    return n;
}

AQ_INLINE uint32_t aq_thread_id(void) {
    return __builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x();
}

/* ------------------------------------------------------------- output ---- */
AQ_INLINE int aq_write(uint32_t opcode, const char *s, uint64_t size) {
    struct rpc_port port = rpc_open(opcode);
    rpc_send_n(&port, s, size);
    int written = (int)rpc_recv(&port)->data[0];
    rpc_close(&port);
    return written;
}

/* Each lane's bytes arrive on the host as one write. */
AQ_INLINE int fputs_stdout(const char *s) { return aq_write(RPC_WRITE_TO_STDOUT, s, strlen(s)); }
AQ_INLINE int fputs_stderr(const char *s) { return aq_write(RPC_WRITE_TO_STDERR, s, strlen(s)); }
/* As LLVM libc's puts: the server counts the newline it adds; 0 on success, -1 (EOF) if not. */
AQ_INLINE int puts(const char *s) {
    size_t n = strlen(s);
    return aq_write(RPC_WRITE_TO_STDOUT_NEWLINE, s, n) == (int)n + 1 ? 0 : -1;
}

/* --------------------------------------------------------------- heap ---- */
AQ_INLINE void *malloc(size_t size) {
    struct rpc_port port = rpc_open(RPC_MALLOC);
    rpc_send_begin(&port)->data[0] = size;
    rpc_send_end(&port);
    void *p = (void *)rpc_recv(&port)->data[0];
    rpc_close(&port);
    return p;
}

AQ_INLINE void free(void *p) {
    struct rpc_port port = rpc_open(RPC_FREE);
    rpc_send_begin(&port)->data[0] = (uint64_t)p;
    rpc_send_end(&port);
    rpc_close(&port);
}

/* ------------------------------------------------------ exit and abort ---- */
typedef void (*aq_atexit_fn)(void);
#define AQ_ATEXIT_MAX 32
static aq_atexit_fn aq_atexit_fns[AQ_ATEXIT_MAX];
static uint32_t aq_atexit_count;

__attribute__((unused)) static int atexit(aq_atexit_fn fn) {
    uint32_t i = __atomic_fetch_add(&aq_atexit_count, 1, __ATOMIC_RELAXED);
    if (i >= AQ_ATEXIT_MAX)
        return -1;
    aq_atexit_fns[i] = fn;
    return 0;
}

/* Tell the host the status, then end this wave; the host stops the rest. */
__attribute__((noreturn, unused)) static void quick_exit(int status) {
    struct rpc_port port = rpc_open(RPC_EXIT);
    rpc_send_begin(&port);
    rpc_send_end(&port);
    rpc_recv(&port);
    *(uint32_t *)rpc_send_begin(&port)->data = (uint32_t)status;
    rpc_send_end(&port);
    __builtin_amdgcn_endpgm();
}

__attribute__((noreturn)) static void exit(int status) {
    for (uint32_t i = __atomic_load_n(&aq_atexit_count, __ATOMIC_RELAXED); i > 0; --i)
        if (i <= AQ_ATEXIT_MAX)
            aq_atexit_fns[i - 1]();
    quick_exit(status);
}

__attribute__((noreturn, unused)) static void abort(void) {
    struct rpc_port port = rpc_open(RPC_ABORT);
    rpc_send_begin(&port);
    rpc_send_end(&port);
    rpc_recv(&port);
    rpc_send_begin(&port);
    rpc_send_end(&port);
    __builtin_amdgcn_endpgm();
}

/* ------------------------------------------------------- the kernels ---- */
typedef void (*aq_init_fn)(int, char **, char **);
typedef void (*aq_fini_fn)(void);
extern aq_init_fn __init_array_start[] __attribute__((weak, visibility("hidden")));
extern aq_init_fn __init_array_end[] __attribute__((weak, visibility("hidden")));
extern aq_fini_fn __fini_array_start[] __attribute__((weak, visibility("hidden")));
extern aq_fini_fn __fini_array_end[] __attribute__((weak, visibility("hidden")));

static void aq_run_fini_array(void) {
    size_t n = (size_t)(__fini_array_end - __fini_array_start);
    for (size_t i = n; i > 0; --i)
        __fini_array_start[i - 1]();
}

AQ_KERNEL void
_begin(int argc, char **argv, char **envp) {
    atexit(aq_run_fini_array);
    size_t n = (size_t)(__init_array_end - __init_array_start);
    for (size_t i = 0; i < n; ++i)
        __init_array_start[i](argc, argv, envp);
}

AQ_KERNEL void _start(int argc, char **argv, char **envp, int *ret) {
    __scoped_atomic_fetch_or(ret, main(argc, argv, envp), __ATOMIC_RELAXED,
                             __MEMORY_SCOPE_DEVICE);
}

AQ_KERNEL void _end(int retval) {
    exit(retval);
}

#endif
