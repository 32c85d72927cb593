/*
 * The HSA runtime as a plugin: dlopen("libhsa-runtime64.so.1") -> hsa_init -> one dispatch of
 * the committed vector_add (results checked) -> hsa_shut_down -> dlclose, ROUNDS times, and
 * after each dlclose the library is gone from /proc/self/maps (ROCr's libhsakmt never
 * leaves). Run by hsa/tests/clients.rs with LD_LIBRARY_PATH at aqueduct's library.
 *
 *   reload_client CODE_OBJECT ROUNDS
 */
#include <dlfcn.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...)                                                                          \
    do {                                                                                   \
        fprintf(stderr, "round %d: ", round_);                                             \
        fprintf(stderr, __VA_ARGS__);                                                      \
        fprintf(stderr, "\n");                                                             \
        exit(1);                                                                           \
    } while (0)
#define CHECK(call)                                                                        \
    do {                                                                                   \
        hsa_status_t s_ = (call);                                                          \
        if (s_ != HSA_STATUS_SUCCESS)                                                      \
            FAIL("%s returned %#x", #call, (unsigned)s_);                                   \
    } while (0)

static int round_;

/* The functions used, looked up in each fresh copy of the library. */
#define API(X)                                                                             \
    X(hsa_init) X(hsa_shut_down) X(hsa_iterate_agents) X(hsa_agent_get_info)               \
    X(hsa_amd_agent_iterate_memory_pools) X(hsa_amd_memory_pool_get_info)                 \
    X(hsa_amd_memory_pool_allocate) X(hsa_amd_memory_pool_free)                           \
    X(hsa_code_object_reader_create_from_memory) X(hsa_code_object_reader_destroy)         \
    X(hsa_executable_create_alt) X(hsa_executable_load_agent_code_object)                  \
    X(hsa_executable_freeze) X(hsa_executable_get_symbol_by_name)                          \
    X(hsa_executable_symbol_get_info) X(hsa_executable_destroy) X(hsa_queue_create)        \
    X(hsa_queue_destroy) X(hsa_queue_add_write_index_relaxed) X(hsa_signal_create)         \
    X(hsa_signal_destroy) X(hsa_signal_store_screlease) X(hsa_signal_wait_scacquire)

#define DECLARE(name) static __typeof__(&name) p_##name;
API(DECLARE)

static hsa_agent_t gpu, cpu;
static hsa_amd_memory_pool_t kernarg_pool, fine_pool;

static hsa_status_t find_agents(hsa_agent_t agent, void *data)
{
    (void)data;
    hsa_device_type_t type;
    CHECK(p_hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_GPU)
        gpu = agent;
    else
        cpu = agent;
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t find_pools(hsa_amd_memory_pool_t pool, void *data)
{
    (void)data;
    uint32_t flags;
    CHECK(p_hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
    if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)
        kernarg_pool = pool;
    else if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED)
        fine_pool = pool;
    return HSA_STATUS_SUCCESS;
}

static int library_mapped(void)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps)
        return -1;
    char line[4096];
    int found = 0;
    while (fgets(line, sizeof line, maps))
        if (strstr(line, "libhsa-runtime64"))
            found = 1;
    fclose(maps);
    return found;
}

static void one_round(const void *code, size_t code_size)
{
    void *library = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library)
        FAIL("dlopen: %s", dlerror());
#define LOOKUP(name)                                                                       \
    p_##name = (__typeof__(p_##name))dlsym(library, #name);                                \
    if (!p_##name)                                                                         \
        FAIL("dlsym %s: %s", #name, dlerror());
    API(LOOKUP)

    CHECK(p_hsa_init());
    gpu.handle = cpu.handle = 0;
    CHECK(p_hsa_iterate_agents(find_agents, NULL));
    if (!gpu.handle || !cpu.handle)
        FAIL("no GPU or CPU agent");
    CHECK(p_hsa_amd_agent_iterate_memory_pools(cpu, find_pools, NULL));

    hsa_code_object_reader_t reader;
    hsa_executable_t executable;
    hsa_executable_symbol_t symbol;
    CHECK(p_hsa_code_object_reader_create_from_memory(code, code_size, &reader));
    CHECK(p_hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                                      NULL, &executable));
    CHECK(p_hsa_executable_load_agent_code_object(executable, gpu, reader, NULL, NULL));
    CHECK(p_hsa_executable_freeze(executable, NULL));
    CHECK(p_hsa_executable_get_symbol_by_name(executable, "vector_add.kd", &gpu, &symbol));
    uint64_t object;
    CHECK(p_hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                           &object));

    hsa_queue_t *queue;
    CHECK(p_hsa_queue_create(gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                             &queue));
    const uint32_t n = 100 + (uint32_t)round_;
    int32_t *a, *b, *c;
    uint8_t *args;
    CHECK(p_hsa_amd_memory_pool_allocate(fine_pool, n * 4, 0, (void **)&a));
    CHECK(p_hsa_amd_memory_pool_allocate(fine_pool, n * 4, 0, (void **)&b));
    CHECK(p_hsa_amd_memory_pool_allocate(fine_pool, n * 4, 0, (void **)&c));
    CHECK(p_hsa_amd_memory_pool_allocate(kernarg_pool, 256, 0, (void **)&args));
    for (uint32_t i = 0; i < n; i++) {
        a[i] = (int32_t)i + round_;
        b[i] = 3 * (int32_t)i;
        c[i] = -1;
    }
    uint32_t groups = (n + 63) / 64;
    memset(args, 0, 256);
    memcpy(args, &a, 8);
    memcpy(args + 8, &b, 8);
    memcpy(args + 16, &c, 8);
    memcpy(args + 24, &n, 4);
    uint32_t block_count[3] = {groups, 1, 1};
    uint16_t group_dims[3] = {64, 1, 1}, grid_dims = 1;
    memcpy(args + 32, block_count, sizeof block_count);
    memcpy(args + 44, group_dims, sizeof group_dims);
    memcpy(args + 96, &grid_dims, sizeof grid_dims);

    hsa_signal_t done;
    CHECK(p_hsa_signal_create(1, 0, NULL, &done));
    uint64_t index = p_hsa_queue_add_write_index_relaxed(queue, 1);
    hsa_kernel_dispatch_packet_t *packet =
        (hsa_kernel_dispatch_packet_t *)queue->base_address + (index & (queue->size - 1));
    memset((uint8_t *)packet + 4, 0, sizeof *packet - 4);
    packet->workgroup_size_x = 64;
    packet->workgroup_size_y = packet->workgroup_size_z = 1;
    packet->grid_size_x = groups * 64;
    packet->grid_size_y = packet->grid_size_z = 1;
    packet->kernel_object = object;
    packet->kernarg_address = args;
    packet->completion_signal = done;
    uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    __atomic_store_n((uint32_t *)packet, header | (1u << 16), __ATOMIC_RELEASE);
    p_hsa_signal_store_screlease(queue->doorbell_signal, (hsa_signal_value_t)index);
    hsa_signal_value_t value = 1;
    for (int slice = 0; slice < 600 && value != 0; slice++)
        value = p_hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, 100000000,
                                            HSA_WAIT_STATE_BLOCKED);
    if (value != 0)
        FAIL("the dispatch did not complete");
    for (uint32_t i = 0; i < n; i++)
        if (c[i] != a[i] + b[i])
            FAIL("c[%u] = %d, expected %d", i, c[i], a[i] + b[i]);

    CHECK(p_hsa_signal_destroy(done));
    CHECK(p_hsa_queue_destroy(queue));
    CHECK(p_hsa_amd_memory_pool_free(a));
    CHECK(p_hsa_amd_memory_pool_free(b));
    CHECK(p_hsa_amd_memory_pool_free(c));
    CHECK(p_hsa_amd_memory_pool_free(args));
    CHECK(p_hsa_executable_destroy(executable));
    CHECK(p_hsa_code_object_reader_destroy(reader));
    CHECK(p_hsa_shut_down());
    if (dlclose(library) != 0)
        FAIL("dlclose: %s", dlerror());
    if (library_mapped() != 0)
        FAIL("libhsa-runtime64 is still mapped after dlclose");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s CODE_OBJECT ROUNDS\n", argv[0]);
        return 2;
    }
    FILE *file = fopen(argv[1], "rb");
    if (!file) {
        perror(argv[1]);
        return 1;
    }
    fseek(file, 0, SEEK_END);
    size_t size = (size_t)ftell(file);
    fseek(file, 0, SEEK_SET);
    void *code = malloc(size);
    if (!code || fread(code, 1, size, file) != size) {
        perror(argv[1]);
        return 1;
    }
    fclose(file);
    int rounds = atoi(argv[2]);
    for (round_ = 0; round_ < rounds; round_++)
        one_round(code, size);
    printf("reload_client: ok (%d rounds)\n", rounds);
    return 0;
}
