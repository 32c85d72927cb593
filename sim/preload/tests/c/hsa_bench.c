/*
 * ROCr's figures for the paths `aqueduct bench` measures, on whatever device ROCr finds (the
 * simulated GPU under the LD_PRELOAD interposer): hsa_init, hsa_shut_down, queue creation and
 * destruction, and the dispatch → completion round trip of the committed empty kernel, the
 * host spinning on the completion signal or waiting on it. Medians and percentiles in µs.
 *
 * usage: hsa_bench EMPTY_CODE_OBJECT [ITERATIONS]
 */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static hsa_agent_t gpu;
static int have_gpu;

static hsa_status_t find_gpu(hsa_agent_t agent, void *data)
{
    (void)data;
    hsa_device_type_t type;
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_GPU && !have_gpu) {
        gpu = agent;
        have_gpu = 1;
    }
    return HSA_STATUS_SUCCESS;
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, double *samples, int n)
{
    qsort(samples, (size_t)n, sizeof *samples, compare);
    printf("%-58s %12.2f %12.2f %12.2f  µs\n", name, samples[n / 2], samples[n / 10],
           samples[(n * 9) / 10]);
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
    if (!bytes || fread(bytes, 1, (size_t)length, file) != (size_t)length)
        exit(1);
    fclose(file);
    *size = (size_t)length;
    return bytes;
}

/* One dispatch of the kernel with an empty kernarg segment; returns its round trip. */
static double dispatch(hsa_queue_t *queue, uint64_t kernel_object, hsa_signal_t done, int spin)
{
    hsa_signal_store_relaxed(done, 1);
    double started = now_us();
    uint64_t index = hsa_queue_add_write_index_relaxed(queue, 1);
    hsa_kernel_dispatch_packet_t *packet =
        (hsa_kernel_dispatch_packet_t *)queue->base_address + (index & (queue->size - 1));
    memset((uint8_t *)packet + 4, 0, sizeof *packet - 4);
    packet->workgroup_size_x = 1;
    packet->workgroup_size_y = 1;
    packet->workgroup_size_z = 1;
    packet->grid_size_x = 1;
    packet->grid_size_y = 1;
    packet->grid_size_z = 1;
    packet->kernel_object = kernel_object;
    packet->completion_signal = done;
    uint16_t header = (HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                      (1 << HSA_PACKET_HEADER_BARRIER) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE);
    uint16_t setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
    __atomic_store_n((uint32_t *)packet, header | ((uint32_t)setup << 16), __ATOMIC_RELEASE);
    hsa_signal_store_screlease(queue->doorbell_signal, (hsa_signal_value_t)index);
    if (spin) {
        while (hsa_signal_load_scacquire(done) != 0)
            ;
    } else {
        while (hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX,
                                         HSA_WAIT_STATE_BLOCKED) != 0)
            ;
    }
    return now_us() - started;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s EMPTY_CODE_OBJECT [ITERATIONS]\n", argv[0]);
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 100;
    if (n < 10)
        n = 10;
    size_t code_size;
    void *code = read_file(argv[1], &code_size);
    double *samples = calloc((size_t)n, sizeof *samples);
    double *more = calloc((size_t)n, sizeof *more);

    /* hsa_init / hsa_shut_down cycles (the first init is the cold one, counted too). */
    int cycles = n / 10;
    for (int i = 0; i < cycles; i++) {
        double started = now_us();
        CHECK(hsa_init());
        samples[i] = now_us() - started;
        have_gpu = 0;
        CHECK(hsa_iterate_agents(find_gpu, NULL));
        started = now_us();
        CHECK(hsa_shut_down());
        more[i] = now_us() - started;
    }
    printf("ROCr (libhsa-runtime64), %d iterations\n", n);
    printf("%-58s %12s %12s %12s  unit\n", "path", "median", "p10", "p90");
    report("hsa_init (open the device, topology, agents)", samples, cycles);
    report("hsa_shut_down", more, cycles);

    CHECK(hsa_init());
    have_gpu = 0;
    CHECK(hsa_iterate_agents(find_gpu, NULL));
    if (!have_gpu) {
        fprintf(stderr, "no GPU agent\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        hsa_queue_t *queue;
        double started = now_us();
        CHECK(hsa_queue_create(gpu, 256, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX,
                               UINT32_MAX, &queue));
        samples[i] = now_us() - started;
        started = now_us();
        CHECK(hsa_queue_destroy(queue));
        more[i] = now_us() - started;
    }
    report("hsa_queue_create (256 packets)", samples, n);
    report("hsa_queue_destroy", more, n);

    hsa_code_object_reader_t reader;
    hsa_executable_t executable;
    hsa_executable_symbol_t symbol;
    uint64_t kernel_object;
    CHECK(hsa_code_object_reader_create_from_memory(code, code_size, &reader));
    CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                                    NULL, &executable));
    CHECK(hsa_executable_load_agent_code_object(executable, gpu, reader, NULL, NULL));
    CHECK(hsa_executable_freeze(executable, NULL));
    CHECK(hsa_executable_get_symbol_by_name(executable, "empty.kd", &gpu, &symbol));
    CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                         &kernel_object));
    hsa_queue_t *queue;
    hsa_signal_t done;
    CHECK(hsa_queue_create(gpu, 256, HSA_QUEUE_TYPE_SINGLE, NULL, NULL, UINT32_MAX, UINT32_MAX,
                           &queue));
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    for (int i = 0; i < n; i++) {
        samples[i] = dispatch(queue, kernel_object, done, 1);
        more[i] = dispatch(queue, kernel_object, done, 0);
    }
    report("dispatch → completion, empty kernel, host spinning", samples, n);
    report("dispatch → completion, empty kernel, waiting on the signal", more, n);
    CHECK(hsa_signal_destroy(done));
    CHECK(hsa_queue_destroy(queue));
    CHECK(hsa_executable_destroy(executable));
    CHECK(hsa_code_object_reader_destroy(reader));
    CHECK(hsa_shut_down());
    free(samples);
    free(more);
    free(code);
    return 0;
}
