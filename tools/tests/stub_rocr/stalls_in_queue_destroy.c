/* A stand-in for libhsa-runtime64 whose hsa_queue_destroy never returns, as ROCr 5.2's can
 * (issue 27: a lost wake-up of its own, see sim/tests/shared_event_wakeups.rs). For
 * tools/tests/bench.rs: `aqueduct bench --rocr --rocr-from` this must end anyway, saying
 * where ROCr's side stopped. Exports what tools/src/bench/rocr/hsa.rs looks up; the layouts
 * are those it declares (ROCr 5.2's hsa.h, 64-bit). */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

typedef uint32_t status_t;
typedef struct {
    uint64_t handle;
} handle_t;
typedef struct {
    uint32_t type, features;
    void *base_address;
    handle_t doorbell_signal;
    uint32_t size, reserved1;
    uint64_t id;
} queue_t;

enum { AGENT_INFO_NAME = 0, AGENT_INFO_DEVICE = 17, DEVICE_TYPE_GPU = 1 };

static queue_t the_queue;
static uint8_t ring[256 * 64];

status_t hsa_init(void) { return 0; }
status_t hsa_shut_down(void) { return 0; }
status_t hsa_status_string(status_t status, const char **text) {
    (void)status;
    *text = "stub status";
    return 0;
}
status_t hsa_iterate_agents(status_t (*callback)(handle_t, void *), void *data) {
    handle_t gpu = {1};
    return callback(gpu, data);
}
status_t hsa_agent_get_info(handle_t agent, uint32_t attribute, void *value) {
    (void)agent;
    if (attribute == AGENT_INFO_DEVICE) {
        *(uint32_t *)value = DEVICE_TYPE_GPU;
    } else if (attribute == AGENT_INFO_NAME) {
        memset(value, 0, 64);
        strcpy(value, "gfx90a");
    }
    return 0;
}
status_t hsa_queue_create(handle_t agent, uint32_t size, uint32_t type, void *callback,
                          void *data, uint32_t private_size, uint32_t group_size,
                          queue_t **queue) {
    (void)agent, (void)type, (void)callback, (void)data, (void)private_size, (void)group_size;
    the_queue.base_address = ring;
    the_queue.size = size;
    *queue = &the_queue;
    return 0;
}
/* Never returns: what ROCr 5.2 does when its wake-up is lost. */
status_t hsa_queue_destroy(queue_t *queue) {
    (void)queue;
    for (;;) pause();
}
uint64_t hsa_queue_add_write_index_relaxed(const queue_t *queue, uint64_t n) {
    (void)queue, (void)n;
    return 0;
}
status_t hsa_signal_create(int64_t value, uint32_t n, const handle_t *consumers, handle_t *signal) {
    (void)value, (void)n, (void)consumers;
    signal->handle = 2;
    return 0;
}
status_t hsa_signal_destroy(handle_t signal) { (void)signal; return 0; }
void hsa_signal_store_relaxed(handle_t signal, int64_t value) { (void)signal, (void)value; }
void hsa_signal_store_screlease(handle_t signal, int64_t value) { (void)signal, (void)value; }
int64_t hsa_signal_load_scacquire(handle_t signal) { (void)signal; return 0; }
int64_t hsa_signal_wait_scacquire(handle_t signal, uint32_t condition, int64_t value,
                                  uint64_t timeout, uint32_t state) {
    (void)signal, (void)condition, (void)value, (void)timeout, (void)state;
    return 0;
}
status_t hsa_code_object_reader_create_from_memory(const void *code, size_t size, handle_t *reader) {
    (void)code, (void)size;
    reader->handle = 3;
    return 0;
}
status_t hsa_code_object_reader_destroy(handle_t reader) { (void)reader; return 0; }
status_t hsa_executable_create_alt(uint32_t profile, uint32_t rounding, const char *options,
                                   handle_t *executable) {
    (void)profile, (void)rounding, (void)options;
    executable->handle = 4;
    return 0;
}
status_t hsa_executable_load_agent_code_object(handle_t executable, handle_t agent,
                                               handle_t reader, const char *options,
                                               handle_t *loaded) {
    (void)executable, (void)agent, (void)reader, (void)options, (void)loaded;
    return 0;
}
status_t hsa_executable_freeze(handle_t executable, const char *options) {
    (void)executable, (void)options;
    return 0;
}
status_t hsa_executable_get_symbol_by_name(handle_t executable, const char *name,
                                           const handle_t *agent, handle_t *symbol) {
    (void)executable, (void)name, (void)agent;
    symbol->handle = 5;
    return 0;
}
status_t hsa_executable_symbol_get_info(handle_t symbol, uint32_t attribute, void *value) {
    (void)symbol, (void)attribute;
    *(uint64_t *)value = 0;
    return 0;
}
status_t hsa_executable_destroy(handle_t executable) { (void)executable; return 0; }
