/*
 * A small ROCr (HSA runtime) client: load a committed code object for the first GPU agent,
 * dispatch vector_add through an AQL queue, and check every element. Nothing here knows about
 * the simulator; under the LD_PRELOAD interposer it runs on the simulated GPU.
 *
 * usage: hsa_vector_add CODE_OBJECT [ELEMENTS]
 * exit status 0 and "hsa_vector_add: ok" on stdout when every element is right.
 */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        hsa_status_t status_ = (call);                                               \
        if (status_ != HSA_STATUS_SUCCESS) {                                         \
            const char *text_ = NULL;                                                \
            hsa_status_string(status_, &text_);                                      \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
                    text_ ? text_ : "unknown status");                               \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

static hsa_agent_t gpu, cpu;
static int have_gpu, have_cpu;
static hsa_amd_memory_pool_t kernarg_pool, fine_pool;
static int have_kernarg_pool, have_fine_pool;

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
    (void)data;
    hsa_amd_segment_t segment;
    uint32_t flags;
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
    if (segment != HSA_AMD_SEGMENT_GLOBAL)
        return HSA_STATUS_SUCCESS;
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
    if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) && !have_kernarg_pool) {
        kernarg_pool = pool;
        have_kernarg_pool = 1;
    } else if ((flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED) && !have_fine_pool) {
        fine_pool = pool;
        have_fine_pool = 1;
    }
    return HSA_STATUS_SUCCESS;
}

static void *read_file(const char *path, size_t *size)
{
    FILE *file = fopen(path, "rb");
    if (!file) {
        perror(path);
        exit(1);
    }
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    fseek(file, 0, SEEK_SET);
    void *bytes = malloc((size_t)length);
    if (!bytes || fread(bytes, 1, (size_t)length, file) != (size_t)length) {
        fprintf(stderr, "%s: cannot read\n", path);
        exit(1);
    }
    fclose(file);
    *size = (size_t)length;
    return bytes;
}

static void *allocate(hsa_amd_memory_pool_t pool, size_t bytes)
{
    void *memory = NULL;
    CHECK(hsa_amd_memory_pool_allocate(pool, bytes, 0, &memory));
    CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, memory));
    return memory;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s CODE_OBJECT [ELEMENTS]\n", argv[0]);
        return 2;
    }
    uint32_t n = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 0) : 1000;
    const uint32_t workgroup = 64;
    uint32_t groups = (n + workgroup - 1) / workgroup;

    size_t code_size;
    void *code = read_file(argv[1], &code_size);

    CHECK(hsa_init());
    CHECK(hsa_iterate_agents(find_agents, NULL));
    if (!have_gpu || !have_cpu) {
        fprintf(stderr, "no GPU or no CPU agent\n");
        return 1;
    }
    CHECK(hsa_amd_agent_iterate_memory_pools(cpu, find_pools, NULL));
    if (!have_kernarg_pool || !have_fine_pool) {
        fprintf(stderr, "no kernarg or fine-grained system pool\n");
        return 1;
    }
    char name[64] = {0};
    CHECK(hsa_agent_get_info(gpu, HSA_AGENT_INFO_NAME, name));
    printf("GPU agent: %s\n", name);

    hsa_code_object_reader_t reader;
    hsa_executable_t executable;
    hsa_executable_symbol_t symbol;
    CHECK(hsa_code_object_reader_create_from_memory(code, code_size, &reader));
    CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                                    NULL, &executable));
    CHECK(hsa_executable_load_agent_code_object(executable, gpu, reader, NULL, NULL));
    CHECK(hsa_executable_freeze(executable, NULL));
    CHECK(hsa_executable_get_symbol_by_name(executable, "vector_add.kd", &gpu, &symbol));
    uint64_t kernel_object;
    uint32_t kernarg_size, group_size, private_size;
    CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                         &kernel_object));
    CHECK(hsa_executable_symbol_get_info(
        symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &kernarg_size));
    CHECK(hsa_executable_symbol_get_info(
        symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &group_size));
    CHECK(hsa_executable_symbol_get_info(
        symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE, &private_size));

    hsa_queue_t *queue;
    CHECK(hsa_queue_create(gpu, 256, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX,
                           UINT32_MAX, &queue));

    size_t bytes = (size_t)n * 4;
    int32_t *a = allocate(fine_pool, bytes);
    int32_t *b = allocate(fine_pool, bytes);
    int32_t *c = allocate(fine_pool, bytes);
    for (uint32_t i = 0; i < n; i++) {
        a[i] = (int32_t)i;
        b[i] = 5 * (int32_t)i - 11;
        c[i] = 0;
    }

    /* Explicit arguments, then the code object V5 implicit ones vector_add reads
     * (offsets from its metadata; the rest stay zero). */
    uint8_t *kernargs = allocate(kernarg_pool, kernarg_size < 288 ? 288 : kernarg_size);
    memset(kernargs, 0, kernarg_size < 288 ? 288 : kernarg_size);
    memcpy(kernargs + 0, &a, 8);
    memcpy(kernargs + 8, &b, 8);
    memcpy(kernargs + 16, &c, 8);
    memcpy(kernargs + 24, &n, 4);
    uint32_t block_count[3] = {groups, 1, 1};
    uint16_t group_dims[3] = {(uint16_t)workgroup, 1, 1};
    uint16_t grid_dims = 1;
    memcpy(kernargs + 32, block_count, sizeof block_count);
    memcpy(kernargs + 44, group_dims, sizeof group_dims);
    memcpy(kernargs + 96, &grid_dims, sizeof grid_dims);

    hsa_signal_t done;
    CHECK(hsa_signal_create(1, 0, NULL, &done));

    uint64_t index = hsa_queue_add_write_index_relaxed(queue, 1);
    hsa_kernel_dispatch_packet_t *packet =
        (hsa_kernel_dispatch_packet_t *)queue->base_address + (index & (queue->size - 1));
    memset((uint8_t *)packet + 4, 0, sizeof *packet - 4);
    packet->workgroup_size_x = (uint16_t)workgroup;
    packet->workgroup_size_y = 1;
    packet->workgroup_size_z = 1;
    packet->grid_size_x = groups * workgroup;
    packet->grid_size_y = 1;
    packet->grid_size_z = 1;
    packet->kernel_object = kernel_object;
    packet->kernarg_address = kernargs;
    packet->group_segment_size = group_size;
    packet->private_segment_size = private_size;
    packet->completion_signal = done;
    uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                      (1 << HSA_PACKET_HEADER_BARRIER) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
    __atomic_store_n((uint32_t *)packet, header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
    hsa_signal_store_screlease(queue->doorbell_signal, (hsa_signal_value_t)index);

    /* Wait in slices so that a lost completion fails instead of hanging. */
    hsa_signal_value_t value = 1;
    for (int slice = 0; slice < 600 && value != 0; slice++)
        value = hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, 100000000,
                                          HSA_WAIT_STATE_BLOCKED);
    if (value != 0) {
        fprintf(stderr, "the dispatch did not complete (signal %ld)\n", (long)value);
        return 1;
    }
    for (uint32_t i = 0; i < n; i++) {
        int32_t expected = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
        if (c[i] != expected) {
            fprintf(stderr, "c[%u] = %d, expected %d\n", i, c[i], expected);
            return 1;
        }
    }

    CHECK(hsa_signal_destroy(done));
    CHECK(hsa_queue_destroy(queue));
    CHECK(hsa_amd_memory_pool_free(kernargs));
    CHECK(hsa_amd_memory_pool_free(a));
    CHECK(hsa_amd_memory_pool_free(b));
    CHECK(hsa_amd_memory_pool_free(c));
    CHECK(hsa_executable_destroy(executable));
    CHECK(hsa_code_object_reader_destroy(reader));
    CHECK(hsa_shut_down());
    free(code);
    printf("hsa_vector_add: ok (%u elements)\n", n);
    return 0;
}
