/*
 * An HSA client that uses the API the way LLVM's GPU loader (llvm-gpu-loader, amdhsa.cpp)
 * does: agents, memory pools, a code-object reader, an executable and its symbols, a kernarg
 * pool, a queue whose packets the program writes itself, a completion signal, and a system
 * event handler for GPU memory faults. Run against aqueduct's libhsa-runtime64.so.1 on the
 * simulated MI210 by hsa/tests/clients.rs.
 *
 *   loader_client KERNELS_DIR
 *
 * KERNELS_DIR holds the committed gfx90a code objects: vector_add.co5 (dispatched, results
 * checked, profiled, completion seen by an async handler), indirect_call.co5 (its device
 * functions are visible as indirect-function symbols, by iteration and by name) and
 * oob_store.co5 (a store to an unmapped address: the fault reaches the handler with its
 * address, and the process goes on). Prints "loader_client: ok" and exits 0 on success.
 */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        hsa_status_t status_ = (call);                                                     \
        if (status_ != HSA_STATUS_SUCCESS) {                                               \
            const char *text_ = NULL;                                                      \
            hsa_status_string(status_, &text_);                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                 \
                    text_ ? text_ : "?");                                                  \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

#define EXPECT(condition, ...)                                                             \
    do {                                                                                   \
        if (!(condition)) {                                                                \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, "\n");                                                         \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

static hsa_agent_t gpu, cpu;
static int have_gpu, have_cpu;
static hsa_amd_memory_pool_t kernarg_pool, fine_pool, device_pool;
static int have_kernarg_pool, have_fine_pool, have_device_pool;

static _Atomic uint64_t fault_address;
static _Atomic int faults;
static _Atomic int queue_errors;
static _Atomic int handled;

static hsa_status_t find_agents(hsa_agent_t agent, void *data)
{
    (void)data;
    hsa_device_type_t type;
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_GPU && !have_gpu) {
        gpu = agent;
        have_gpu = 1;
    } else if (type == HSA_DEVICE_TYPE_CPU && !have_cpu) {
        cpu = agent;
        have_cpu = 1;
    }
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_pools(hsa_amd_memory_pool_t pool, void *data)
{
    int on_gpu = data != NULL;
    hsa_amd_segment_t segment;
    uint32_t flags;
    bool allowed;
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
    if (segment != HSA_AMD_SEGMENT_GLOBAL)
        return HSA_STATUS_SUCCESS;
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
                                       &allowed));
    if (!allowed)
        return HSA_STATUS_SUCCESS;
    if (on_gpu) {
        if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED) {
            device_pool = pool;
            have_device_pool = 1;
        }
    } else if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) {
        kernarg_pool = pool;
        have_kernarg_pool = 1;
    } else if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) {
        fine_pool = pool;
        have_fine_pool = 1;
    }
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t on_event(const hsa_amd_event_t *event, void *data)
{
    (void)data;
    if (event->event_type == HSA_AMD_GPU_MEMORY_FAULT_EVENT) {
        atomic_store(&fault_address, event->memory_fault.virtual_address);
        atomic_fetch_add(&faults, 1);
    }
    return HSA_STATUS_SUCCESS;
}

static void on_queue_error(hsa_status_t status, hsa_queue_t *queue, void *data)
{
    (void)queue;
    (void)data;
    if (status != HSA_STATUS_SUCCESS)
        atomic_fetch_add(&queue_errors, 1);
}

static bool on_completion(hsa_signal_value_t value, void *arg)
{
    (void)arg;
    if (value == 0)
        atomic_fetch_add(&handled, 1);
    return false;
}

static void *read_file(const char *dir, const char *name, size_t *size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen(path, "rb");
    EXPECT(file, "cannot open %s", path);
    fseek(file, 0, SEEK_END);
    *size = (size_t)ftell(file);
    fseek(file, 0, SEEK_SET);
    void *bytes = malloc(*size);
    EXPECT(bytes && fread(bytes, 1, *size, file) == *size, "cannot read %s", path);
    fclose(file);
    return bytes;
}

static void *allocate(hsa_amd_memory_pool_t pool, size_t bytes)
{
    void *ptr = NULL;
    CHECK(hsa_amd_memory_pool_allocate(pool, bytes, 0, &ptr));
    hsa_agent_t both[2] = {gpu, cpu};
    CHECK(hsa_amd_agents_allow_access(2, both, NULL, ptr));
    return ptr;
}

static hsa_executable_t load(const char *dir, const char *name)
{
    size_t size;
    void *code = read_file(dir, name, &size);
    hsa_code_object_reader_t reader;
    hsa_executable_t executable;
    CHECK(hsa_code_object_reader_create_from_memory(code, size, &reader));
    CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                                    NULL, &executable));
    CHECK(hsa_executable_load_agent_code_object(executable, gpu, reader, NULL, NULL));
    CHECK(hsa_executable_freeze(executable, NULL));
    uint32_t result = 1;
    CHECK(hsa_executable_validate(executable, &result));
    EXPECT(result == 0, "%s does not validate (%u)", name, result);
    CHECK(hsa_code_object_reader_destroy(reader));
    free(code);
    return executable;
}

struct kernel {
    uint64_t object;
    uint32_t kernarg_size, group_size, private_size;
};

static struct kernel find_kernel(hsa_executable_t executable, const char *name)
{
    hsa_executable_symbol_t symbol;
    struct kernel k;
    CHECK(hsa_executable_get_symbol_by_name(executable, name, &gpu, &symbol));
    hsa_symbol_kind_t kind;
    CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind));
    EXPECT(kind == HSA_SYMBOL_KIND_KERNEL, "%s is of kind %d", name, kind);
    CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                         &k.object));
    CHECK(hsa_executable_symbol_get_info(
        symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &k.kernarg_size));
    CHECK(hsa_executable_symbol_get_info(
        symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &k.group_size));
    CHECK(hsa_executable_symbol_get_info(
        symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &k.private_size));
    EXPECT(k.object != 0, "%s has no kernel object", name);
    return k;
}

/* Kernel arguments: `explicit_bytes` of explicit ones, then the code object V5 implicit ones
 * (block counts at 0, group sizes at 12, grid dims at 64 after the explicit part rounded to 8). */
static void *kernargs(const struct kernel *k, const void *explicit_args, size_t explicit_bytes,
                      uint32_t groups, uint16_t workgroup)
{
    size_t size = k->kernarg_size < 256 ? 256 : k->kernarg_size;
    uint8_t *args = allocate(kernarg_pool, size);
    memset(args, 0, size);
    memcpy(args, explicit_args, explicit_bytes);
    size_t hidden = (explicit_bytes + 7) & ~(size_t)7;
    uint32_t block_count[3] = {groups, 1, 1};
    uint16_t group_dims[3] = {workgroup, 1, 1};
    uint16_t grid_dims = 1;
    memcpy(args + hidden, block_count, sizeof block_count);
    memcpy(args + hidden + 12, group_dims, sizeof group_dims);
    memcpy(args + hidden + 64, &grid_dims, sizeof grid_dims);
    return args;
}

static void dispatch(hsa_queue_t *queue, const struct kernel *k, void *args, uint32_t groups,
                     uint16_t workgroup, hsa_signal_t done)
{
    uint64_t index = hsa_queue_add_write_index_relaxed(queue, 1);
    while (index - hsa_queue_load_read_index_scacquire(queue) >= queue->size)
        ;
    hsa_kernel_dispatch_packet_t *packet =
        (hsa_kernel_dispatch_packet_t *)queue->base_address + (index & (queue->size - 1));
    memset((uint8_t *)packet + 4, 0, sizeof *packet - 4);
    packet->workgroup_size_x = workgroup;
    packet->workgroup_size_y = 1;
    packet->workgroup_size_z = 1;
    packet->grid_size_x = groups * workgroup;
    packet->grid_size_y = 1;
    packet->grid_size_z = 1;
    packet->kernel_object = k->object;
    packet->kernarg_address = args;
    packet->group_segment_size = k->group_size;
    packet->private_segment_size = k->private_size;
    packet->completion_signal = done;
    uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                      (1 << HSA_PACKET_HEADER_BARRIER) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
    __atomic_store_n((uint32_t *)packet, header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
    hsa_signal_store_relaxed(queue->doorbell_signal, (hsa_signal_value_t)index);
}

/* Wait in 100 ms slices, at most a minute, so that a lost completion fails. */
static hsa_signal_value_t wait_zero(hsa_signal_t signal)
{
    hsa_signal_value_t value = 1;
    for (int slice = 0; slice < 600 && value != 0; slice++)
        value = hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_LT, 1, 100000000,
                                          HSA_WAIT_STATE_BLOCKED);
    return value;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

struct symbol_count {
    int functions, kernels, variables;
    int saw_ic_add;
};

static hsa_status_t count_symbol(hsa_executable_t executable, hsa_executable_symbol_t symbol,
                                 void *data)
{
    (void)executable;
    struct symbol_count *count = data;
    hsa_symbol_kind_t kind;
    CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind));
    uint32_t length;
    char name[256] = {0};
    CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH,
                                         &length));
    EXPECT(length < sizeof name, "a symbol name of %u bytes", length);
    CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_NAME, name));
    if (kind == HSA_SYMBOL_KIND_INDIRECT_FUNCTION) {
        count->functions++;
        uint64_t object = 0;
        CHECK(hsa_executable_symbol_get_info(
            symbol, HSA_EXECUTABLE_SYMBOL_INFO_INDIRECT_FUNCTION_OBJECT, &object));
        EXPECT(object != 0, "function %s has no address", name);
        if (strcmp(name, "ic_add") == 0)
            count->saw_ic_add = 1;
    } else if (kind == HSA_SYMBOL_KIND_KERNEL) {
        count->kernels++;
    } else if (kind == HSA_SYMBOL_KIND_VARIABLE) {
        count->variables++;
    }
    return HSA_STATUS_SUCCESS;
}

int main(int argc, char **argv)
{
    EXPECT(argc == 2, "usage: %s KERNELS_DIR", argv[0]);
    const char *dir = argv[1];

    CHECK(hsa_init());
    CHECK(hsa_amd_register_system_event_handler(on_event, NULL));
    CHECK(hsa_iterate_agents(find_agents, NULL));
    EXPECT(have_gpu && have_cpu, "no GPU or no CPU agent");
    CHECK(hsa_amd_agent_iterate_memory_pools(cpu, find_pools, NULL));
    CHECK(hsa_amd_agent_iterate_memory_pools(gpu, find_pools, (void *)1));
    EXPECT(have_kernarg_pool && have_fine_pool && have_device_pool, "pools missing");

    /* vector_add: inputs in fine-grained host memory, the output in device memory, filled,
     * copied back; profiled; its completion also seen by an async handler. */
    hsa_executable_t vector = load(dir, "vector_add.co5");
    struct kernel add = find_kernel(vector, "vector_add.kd");
    hsa_queue_t *queue;
    CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, on_queue_error, NULL, UINT32_MAX,
                           UINT32_MAX, &queue));
    EXPECT(queue->size == 64 && queue->base_address != NULL, "a malformed hsa_queue_t");
    CHECK(hsa_amd_profiling_set_profiler_enabled(queue, 1));

    const uint32_t n = 3000;
    const uint16_t workgroup = 64;
    const uint32_t groups = (n + workgroup - 1) / workgroup;
    int32_t *a = allocate(fine_pool, n * 4);
    int32_t *b = allocate(fine_pool, n * 4);
    int32_t *c = allocate(device_pool, n * 4);
    int32_t *result = allocate(fine_pool, n * 4);
    for (uint32_t i = 0; i < n; i++) {
        a[i] = (int32_t)(i * 7);
        b[i] = 100 - (int32_t)i;
    }
    CHECK(hsa_amd_memory_fill(c, 0xdeadbeef, n));
    CHECK(hsa_amd_memory_fill(result, 0, n));

    struct {
        int32_t *a, *b, *c;
        uint32_t n;
    } explicit_args = {a, b, c, n};
    void *args = kernargs(&add, &explicit_args, 28, groups, workgroup);

    hsa_signal_t done;
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    CHECK(hsa_amd_signal_async_handler(done, HSA_SIGNAL_CONDITION_EQ, 0, on_completion, NULL));
    dispatch(queue, &add, args, groups, workgroup, done);
    hsa_signal_value_t value = wait_zero(done);
    EXPECT(value == 0, "vector_add did not complete (signal %ld)", (long)value);

    hsa_amd_profiling_dispatch_time_t times;
    CHECK(hsa_amd_profiling_get_dispatch_time(gpu, done, &times));
    EXPECT(times.start != 0 && times.end >= times.start, "dispatch times %lu..%lu",
           (unsigned long)times.start, (unsigned long)times.end);

    hsa_signal_t copied;
    CHECK(hsa_signal_create(1, 0, NULL, &copied));
    CHECK(hsa_amd_memory_async_copy(result, cpu, c, gpu, n * 4, 0, NULL, copied));
    EXPECT(wait_zero(copied) == 0, "the copy did not complete");
    for (uint32_t i = 0; i < n; i++) {
        int32_t expected = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
        EXPECT(result[i] == expected, "c[%u] = %d, expected %d", i, result[i], expected);
    }
    int32_t first[4];
    CHECK(hsa_memory_copy(first, c, sizeof first));
    EXPECT(first[3] == a[3] + b[3], "hsa_memory_copy read %d", first[3]);
    for (int i = 0; i < 500 && atomic_load(&handled) == 0; i++)
        sleep_ms(10);
    EXPECT(atomic_load(&handled) == 1, "the async handler ran %d times", atomic_load(&handled));

    /* The program's own memory, locked, as the output: the GPU writes it in place. */
    int32_t *own = aligned_alloc(4096, n * 4);
    EXPECT(own != NULL, "aligned_alloc");
    memset(own, 0xff, n * 4);
    void *own_gpu = NULL;
    CHECK(hsa_amd_memory_lock(own, n * 4, &gpu, 1, &own_gpu));
    EXPECT(own_gpu == own, "locked memory at %p for %p", own_gpu, (void *)own);
    hsa_amd_pointer_info_t info = {.size = sizeof info};
    CHECK(hsa_amd_pointer_info(own + 10, &info, NULL, NULL, NULL));
    EXPECT(info.type == HSA_EXT_POINTER_TYPE_LOCKED && info.hostBaseAddress == own,
           "locked memory: pointer type %d base %p", info.type, info.hostBaseAddress);
    info.size = sizeof info;
    uint32_t reach = 0;
    CHECK(hsa_amd_pointer_info(a + 5, &info, NULL, &reach, NULL));
    EXPECT(info.type == HSA_EXT_POINTER_TYPE_HSA && info.agentBaseAddress == a &&
               info.sizeInBytes == n * 4 && reach == 2,
           "pool memory: pointer type %d base %p size %zu reach %u", info.type,
           info.agentBaseAddress, info.sizeInBytes, reach);
    explicit_args.c = own_gpu;
    void *own_args = kernargs(&add, &explicit_args, 28, groups, workgroup);
    hsa_signal_t into_own;
    CHECK(hsa_signal_create(1, 0, NULL, &into_own));
    dispatch(queue, &add, own_args, groups, workgroup, into_own);
    EXPECT(wait_zero(into_own) == 0, "the dispatch into locked memory did not complete");
    for (uint32_t i = 0; i < n; i++)
        EXPECT(own[i] == (int32_t)((uint32_t)a[i] + (uint32_t)b[i]), "own[%u] = %d", i, own[i]);
    CHECK(hsa_amd_memory_unlock(own));
    CHECK(hsa_signal_destroy(into_own));
    free(own);

    /* Asynchronous copies on the copy engine: one queued behind a gate signal does not run
     * until the gate opens (the call returns first), its profiled times are ordered, and a
     * rectangle of c (rows of 256 bytes) lands in locked memory (rows of 48 bytes), as
     * hipMemcpy2D asks. */
    CHECK(hsa_amd_profiling_async_copy_enable(true));
    hsa_signal_t gate, gated;
    CHECK(hsa_signal_create(1, 0, NULL, &gate));
    CHECK(hsa_signal_create(1, 0, NULL, &gated));
    memset(result, 0, n * 4);
    CHECK(hsa_amd_memory_async_copy(result, cpu, c, gpu, n * 4, 1, &gate, gated));
    sleep_ms(50);
    EXPECT(hsa_signal_load_scacquire(gated) == 1 && result[n - 1] == 0,
           "the copy ran before its dependency (signal %ld)",
           (long)hsa_signal_load_scacquire(gated));
    hsa_signal_store_screlease(gate, 0);
    EXPECT(wait_zero(gated) == 0, "the gated copy did not complete");
    for (uint32_t i = 0; i < n; i++)
        EXPECT(result[i] == (int32_t)((uint32_t)a[i] + (uint32_t)b[i]), "gated copy [%u] = %d",
               i, result[i]);
    hsa_amd_profiling_async_copy_time_t copy_time = {0, 0};
    CHECK(hsa_amd_profiling_get_async_copy_time(gated, &copy_time));
    EXPECT(copy_time.start != 0 && copy_time.end >= copy_time.start, "copy times %lu..%lu",
           (unsigned long)copy_time.start, (unsigned long)copy_time.end);
    int32_t *rect = aligned_alloc(4096, 4096);
    EXPECT(rect != NULL, "aligned_alloc");
    memset(rect, 0xff, 4096);
    void *rect_gpu = NULL;
    CHECK(hsa_amd_memory_lock(rect, 4096, &gpu, 1, &rect_gpu));
    hsa_pitched_ptr_t rect_src = {c, 256, 0}, rect_dst = {rect_gpu, 48, 0};
    hsa_dim3_t src_at = {8, 3, 0}, dst_at = {4, 1, 0}, box = {40, 20, 1};
    hsa_signal_t boxed;
    CHECK(hsa_signal_create(1, 0, NULL, &boxed));
    CHECK(hsa_amd_memory_async_copy_rect(&rect_dst, &dst_at, &rect_src, &src_at, &box, gpu,
                                         hsaDeviceToHost, 0, NULL, boxed));
    EXPECT(wait_zero(boxed) == 0, "the rectangle did not complete");
    for (uint32_t y = 0; y < 20; y++)
        for (uint32_t x = 0; x < 10; x++) {
            uint32_t i = (3 + y) * 64 + 2 + x;
            int32_t want = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
            EXPECT(rect[(1 + y) * 12 + 1 + x] == want, "rect (%u, %u) = %d, want %d", x, y,
                   rect[(1 + y) * 12 + 1 + x], want);
        }
    EXPECT(rect[12] == -1 && rect[21 * 12 + 1] == -1 && rect[12 + 11] == -1,
           "the rectangle wrote outside its box");
    hsa_pitched_ptr_t unaligned = {(char *)rect_gpu + 1, 48, 0};
    EXPECT(hsa_amd_memory_async_copy_rect(&unaligned, &dst_at, &rect_src, &src_at, &box, gpu,
                                          hsaDeviceToHost, 0, NULL, boxed) ==
               HSA_STATUS_ERROR_INVALID_ARGUMENT,
           "an unaligned rectangle base is refused, as ROCr refuses it");
    CHECK(hsa_amd_profiling_async_copy_enable(false));
    CHECK(hsa_amd_memory_unlock(rect));
    free(rect);
    CHECK(hsa_signal_destroy(boxed));
    CHECK(hsa_signal_destroy(gate));
    CHECK(hsa_signal_destroy(gated));

    /* Device functions are indirect-function symbols, by iteration and by name. */
    hsa_executable_t indirect = load(dir, "indirect_call.co5");
    struct symbol_count count = {0};
    CHECK(hsa_executable_iterate_symbols(indirect, count_symbol, &count));
    EXPECT(count.kernels == 1 && count.functions >= 4 && count.saw_ic_add,
           "indirect_call.co5: %d kernels, %d functions (ic_add %s)", count.kernels,
           count.functions, count.saw_ic_add ? "seen" : "missing");
    hsa_executable_symbol_t ic_add;
    CHECK(hsa_executable_get_symbol_by_name(indirect, "ic_add", &gpu, &ic_add));
    hsa_symbol_kind_t kind;
    CHECK(hsa_executable_symbol_get_info(ic_add, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind));
    EXPECT(kind == HSA_SYMBOL_KIND_INDIRECT_FUNCTION, "ic_add is of kind %d", kind);

    /* indirect_call calls through a table of function pointers with a dynamic stack: a queue
     * created with a private-segment hint provides the scratch it needs. */
    struct kernel call = find_kernel(indirect, "indirect_call.kd");
    call.private_size = 16384;
    hsa_queue_t *stack_queue;
    CHECK(hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, call.private_size,
                           UINT32_MAX, &stack_queue));
    const uint32_t calls = 256;
    uint32_t *sel = allocate(fine_pool, calls * 4);
    uint32_t *called = allocate(fine_pool, calls * 4);
    for (uint32_t i = 0; i < calls; i++)
        sel[i] = i * 7 + 1;
    struct {
        int32_t *a, *b;
        uint32_t *sel, *out;
        uint32_t n;
    } call_args = {a, b, sel, called, calls};
    void *call_kernargs = kernargs(&call, &call_args, 36, calls / 64, 64);
    hsa_signal_t call_done;
    CHECK(hsa_signal_create(1, 0, NULL, &call_done));
    dispatch(stack_queue, &call, call_kernargs, calls / 64, 64, call_done);
    EXPECT(wait_zero(call_done) == 0, "indirect_call did not complete");
    for (uint32_t i = 0; i < calls; i++) {
        uint32_t x = (uint32_t)a[i], y = (uint32_t)b[i], expected;
        switch (sel[i] & 3) {
        case 0: expected = x + y; break;
        case 1: expected = x - y; break;
        case 2: expected = x * y; break;
        default: expected = x ^ y; break;
        }
        EXPECT(called[i] == expected, "indirect_call out[%u] = %u, expected %u", i, called[i],
               expected);
    }
    CHECK(hsa_signal_destroy(call_done));
    CHECK(hsa_queue_destroy(stack_queue));
    CHECK(hsa_amd_memory_pool_free(sel));
    CHECK(hsa_amd_memory_pool_free(called));

    /* A store to an unmapped address: the fault reaches the handler with its address, the
     * queue's callback hears of it, and the process goes on. */
    hsa_executable_t oob = load(dir, "oob_store.co5");
    struct kernel store = find_kernel(oob, "oob_store.kd");
    const uint64_t unmapped = 0x7ff000000000ull;
    struct {
        uint64_t p;
        uint32_t value;
    } store_args = {unmapped, 7};
    void *fault_args = kernargs(&store, &store_args, 12, 1, 64);
    hsa_signal_t faulted;
    CHECK(hsa_signal_create(1, 0, NULL, &faulted));
    dispatch(queue, &store, fault_args, 1, 64, faulted);
    for (int i = 0; i < 1000 && atomic_load(&faults) == 0; i++)
        sleep_ms(10);
    EXPECT(atomic_load(&faults) >= 1, "no memory fault reached the handler");
    uint64_t address = atomic_load(&fault_address);
    EXPECT((address & ~0xfffull) == unmapped, "the fault is at %#lx, the store at %#lx",
           (unsigned long)address, (unsigned long)unmapped);
    for (int i = 0; i < 500 && atomic_load(&queue_errors) == 0; i++)
        sleep_ms(10);
    EXPECT(atomic_load(&queue_errors) >= 1, "the queue's error callback was not called");

    CHECK(hsa_signal_destroy(faulted));
    CHECK(hsa_signal_destroy(copied));
    CHECK(hsa_signal_destroy(done));
    CHECK(hsa_queue_destroy(queue));
    CHECK(hsa_amd_memory_pool_free(a));
    CHECK(hsa_amd_memory_pool_free(b));
    CHECK(hsa_amd_memory_pool_free(c));
    CHECK(hsa_amd_memory_pool_free(result));
    CHECK(hsa_executable_destroy(oob));
    CHECK(hsa_executable_destroy(indirect));
    CHECK(hsa_executable_destroy(vector));
    CHECK(hsa_shut_down());
    EXPECT(hsa_iterate_agents(find_agents, NULL) == HSA_STATUS_ERROR_NOT_INITIALIZED,
           "a call after the last shut down did not fail cleanly");
    printf("loader_client: ok (%u elements, dispatch %lu ns, fault at %#lx)\n", n,
           (unsigned long)(times.end - times.start), (unsigned long)address);
    return 0;
}
