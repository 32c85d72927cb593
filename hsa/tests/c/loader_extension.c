/*
 * The AMD loader extension as HIP reaches it: the table from
 * hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, ...), then every
 * executable, its loaded code objects and their info (load base, size, delta, storage, URI),
 * the executable and host address of a kernel descriptor, the segment descriptors; the
 * profiler table is declined. Run on aqueduct's library and on ROCr by hsa/tests/clients.rs.
 *
 *   loader_extension KERNELS_DIR
 *
 * Prints "loader_extension: ok" and exits 0 on success.
 */
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <hsa/hsa_ven_amd_loader.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        hsa_status_t status_ = (call);                                                     \
        if (status_ != HSA_STATUS_SUCCESS) {                                               \
            fprintf(stderr, "%s:%d: %s: %#x\n", __FILE__, __LINE__, #call, status_);      \
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

static hsa_agent_t gpu;
static int have_gpu;
static hsa_ven_amd_loader_1_03_pfn_t loader;
static hsa_executable_t mine;
static int found_mine, loaded_objects;
static uint64_t load_base, load_size;

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

static hsa_status_t on_loaded(hsa_executable_t executable, hsa_loaded_code_object_t object,
                              void *data)
{
    (void)data;
    hsa_executable_t owner;
    CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
        object, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_EXECUTABLE, &owner));
    EXPECT(owner.handle == executable.handle, "owner %#lx", (unsigned long)owner.handle);
    uint32_t kind = 0, storage = 0, uri_length = 0;
    hsa_agent_t agent;
    CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
        object, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_KIND, &kind));
    EXPECT(kind == HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_KIND_AGENT, "kind %u", kind);
    CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
        object, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_AGENT, &agent));
    EXPECT(agent.handle == gpu.handle, "agent");
    CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
        object, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_TYPE, &storage));
    EXPECT(storage == HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY, "storage %u", storage);
    uint64_t base = 0, size = 0, memory = 0, memory_size = 0;
    int64_t delta = -1;
    CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
        object, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE, &base));
    CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
        object, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE, &size));
    CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
        object, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_DELTA, &delta));
    CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
        object, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_BASE,
        &memory));
    CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
        object, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_SIZE,
        &memory_size));
    EXPECT(base != 0 && size >= 4096 && (uint64_t)delta == base, "base %#lx size %lu delta %ld",
           (unsigned long)base, (unsigned long)size, (long)delta);
    EXPECT(memory != 0 && memory_size > 0 && memcmp((void *)memory, "\x7f" "ELF", 4) == 0,
           "the stored code object is an ELF");
    CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
        object, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI_LENGTH, &uri_length));
    char uri[256] = {0};
    EXPECT(uri_length > 0 && uri_length < sizeof uri, "uri length %u", uri_length);
    CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
        object, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_URI, uri));
    char want[256];
    snprintf(want, sizeof want, "memory://%d#offset=0x%lx&size=%lu", (int)getpid(),
             (unsigned long)memory, (unsigned long)memory_size);
    EXPECT(strcmp(uri, want) == 0, "uri %s, want %s", uri, want);
    if (executable.handle == mine.handle) {
        load_base = base;
        load_size = size;
    }
    loaded_objects++;
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t on_executable(hsa_executable_t executable, void *data)
{
    (void)data;
    /* ROCr also lists executables of its own (its blit kernels), which the loaded-object
     * iteration refuses as invalid: only ours are looked into. */
    if (executable.handle != mine.handle) return HSA_STATUS_SUCCESS;
    found_mine++;
    CHECK(loader.hsa_ven_amd_loader_executable_iterate_loaded_code_objects(executable, on_loaded,
                                                                            NULL));
    return HSA_STATUS_SUCCESS;
}

int main(int argc, char **argv)
{
    EXPECT(argc == 2, "usage: loader_extension KERNELS_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/atomic_counter.co5", argv[1]);
    FILE *file = fopen(path, "rb");
    EXPECT(file, "cannot open %s", path);
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    fseek(file, 0, SEEK_SET);
    void *code = malloc(length);
    EXPECT(fread(code, 1, length, file) == (size_t)length, "cannot read %s", path);
    fclose(file);

    CHECK(hsa_init());
    CHECK(hsa_iterate_agents(find_gpu, NULL));
    EXPECT(have_gpu, "no GPU agent");
    bool supported = false;
    CHECK(hsa_system_extension_supported(HSA_EXTENSION_AMD_LOADER, 1, 0, &supported));
    EXPECT(supported, "the loader extension is not supported");
    memset(&loader, 0, sizeof loader);
    CHECK(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, sizeof loader,
                                               &loader));
    EXPECT(loader.hsa_ven_amd_loader_iterate_executables &&
               loader.hsa_ven_amd_loader_loaded_code_object_get_info,
           "a 1.03 table");
    /* The profiler table needs ROCr's tools library: declined. */
    char profiler[256];
    EXPECT(hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_PROFILER, 1, sizeof profiler,
                                                profiler) != HSA_STATUS_SUCCESS,
           "the profiler table was served");

    hsa_code_object_reader_t reader;
    CHECK(hsa_code_object_reader_create_from_memory(code, length, &reader));
    CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                                    NULL, &mine));
    CHECK(hsa_executable_load_agent_code_object(mine, gpu, reader, NULL, NULL));
    CHECK(hsa_executable_freeze(mine, NULL));
    /* HIP destroys its readers once loaded but keeps the code object's memory. */
    CHECK(hsa_code_object_reader_destroy(reader));

    CHECK(loader.hsa_ven_amd_loader_iterate_executables(on_executable, NULL));
    EXPECT(found_mine == 1 && loaded_objects >= 1, "executables: mine %d, loaded %d", found_mine,
           loaded_objects);

    hsa_executable_symbol_t symbol;
    CHECK(hsa_executable_get_symbol_by_name(mine, "atomic_counter.kd", &gpu, &symbol));
    uint64_t object = 0;
    CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT,
                                         &object));
    EXPECT(object >= load_base && object < load_base + load_size, "kernel %#lx outside %#lx+%lu",
           (unsigned long)object, (unsigned long)load_base, (unsigned long)load_size);
    hsa_executable_t owner = {0};
    CHECK(loader.hsa_ven_amd_loader_query_executable((const void *)object, &owner));
    EXPECT(owner.handle == mine.handle, "the kernel's executable");
    const void *host = NULL;
    CHECK(loader.hsa_ven_amd_loader_query_host_address((const void *)object, &host));
    EXPECT(host != NULL, "no host address");
    /* A kernel descriptor's kernel_code_entry_byte_offset (bytes 16..23) points into the
     * loaded code. */
    int64_t entry = 0;
    memcpy(&entry, (const char *)host + 16, sizeof entry);
    EXPECT(object + entry >= load_base && object + entry < load_base + load_size,
           "entry offset %ld", (long)entry);
    const void *nowhere = NULL;
    EXPECT(loader.hsa_ven_amd_loader_query_host_address((const void *)16, &nowhere) ==
               HSA_STATUS_ERROR_INVALID_ARGUMENT,
           "an address in no segment");

    size_t count = 0;
    CHECK(loader.hsa_ven_amd_loader_query_segment_descriptors(NULL, &count));
    EXPECT(count >= 1, "segments %zu", count);
    hsa_ven_amd_loader_segment_descriptor_t *segments = calloc(count, sizeof *segments);
    CHECK(loader.hsa_ven_amd_loader_query_segment_descriptors(segments, &count));
    int covered = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t base = (uint64_t)segments[i].segment_base;
        if (segments[i].executable.handle == mine.handle && object >= base &&
            object < base + segments[i].segment_size)
            covered = 1;
    }
    EXPECT(covered, "no segment descriptor covers the kernel");
    free(segments);

    CHECK(hsa_executable_destroy(mine));
    found_mine = 0;
    CHECK(loader.hsa_ven_amd_loader_iterate_executables(on_executable, NULL));
    EXPECT(found_mine == 0, "a destroyed executable is still iterated");
    CHECK(hsa_shut_down());
    free(code);
    printf("loader_extension: ok\n");
    return 0;
}
