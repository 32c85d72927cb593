/*
 * ROCr as a plugin: dlopen libhsa-runtime64, hsa_init, create and destroy a queue on the
 * first GPU, hsa_shut_down, dlclose; ROUNDS times in one process. Prints what each round saw
 * (whether the library really left the process, the agents found, the queue's status).
 *
 * usage: hsa_reload [ROUNDS]
 */
#include <dlfcn.h>
#include <hsa/hsa.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

static dev_t kfd_rdev;

typedef hsa_status_t (*init_fn)(void);
typedef hsa_status_t (*iterate_fn)(hsa_status_t (*)(hsa_agent_t, void *), void *);
typedef hsa_status_t (*get_info_fn)(hsa_agent_t, hsa_agent_info_t, void *);
typedef hsa_status_t (*queue_create_fn)(hsa_agent_t, uint32_t, hsa_queue_type32_t,
                                        void (*)(hsa_status_t, hsa_queue_t *, void *), void *,
                                        uint32_t, uint32_t, hsa_queue_t **);
typedef hsa_status_t (*queue_destroy_fn)(hsa_queue_t *);

static get_info_fn get_info;
static hsa_agent_t gpu;
static int gpus;

static hsa_status_t count_gpus(hsa_agent_t agent, void *data)
{
    (void)data;
    hsa_device_type_t type;
    if (get_info(agent, HSA_AGENT_INFO_DEVICE, &type) == HSA_STATUS_SUCCESS &&
        type == HSA_DEVICE_TYPE_GPU) {
        if (gpus++ == 0)
            gpu = agent;
    }
    return HSA_STATUS_SUCCESS;
}

/* Whether a mapping of a file whose name contains `name` is in /proc/self/maps. */
static int mapped(const char *name)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (maps && fgets(line, sizeof line, maps))
        found |= strstr(line, name) != NULL;
    if (maps)
        fclose(maps);
    return found;
}

/* Open fds on the GPU's device files (character devices: /dev/kfd and render nodes). */
static int device_fds(void)
{
    int count = 0;
    for (int fd = 0; fd < 1024; fd++) {
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && (major(st.st_rdev) == 226 ||
                                                         st.st_rdev == kfd_rdev))
            count++;
    }
    return count;
}

/* The step a round is about to take, on stderr (unbuffered): where a hang shows. */
static void step(int round, const char *name)
{
    fprintf(stderr, "round %d: step %s\n", round, name);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    int failed = 0;
    struct stat kfd;
    if (stat("/dev/kfd", &kfd) == 0)
        kfd_rdev = kfd.st_rdev;
    for (int round = 0; round < rounds; round++) {
        void *library = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!library) {
            printf("round %d: dlopen: %s\n", round, dlerror());
            return 1;
        }
        init_fn init = (init_fn)dlsym(library, "hsa_init");
        init_fn shut_down = (init_fn)dlsym(library, "hsa_shut_down");
        iterate_fn iterate = (iterate_fn)dlsym(library, "hsa_iterate_agents");
        get_info = (get_info_fn)dlsym(library, "hsa_agent_get_info");
        queue_create_fn queue_create = (queue_create_fn)dlsym(library, "hsa_queue_create");
        queue_destroy_fn queue_destroy = (queue_destroy_fn)dlsym(library, "hsa_queue_destroy");
        step(round, "hsa_init");
        hsa_status_t status = init();
        gpus = 0;
        hsa_status_t queue_status = HSA_STATUS_ERROR;
        if (status == HSA_STATUS_SUCCESS) {
            step(round, "hsa_iterate_agents");
            iterate(count_gpus, NULL);
            hsa_queue_t *queue = NULL;
            if (gpus > 0) {
                step(round, "hsa_queue_create");
                queue_status = queue_create(gpu, 256, HSA_QUEUE_TYPE_SINGLE, NULL, NULL,
                                            UINT32_MAX, UINT32_MAX, &queue);
                if (queue_status == HSA_STATUS_SUCCESS) {
                    step(round, "hsa_queue_destroy");
                    queue_destroy(queue);
                }
            }
            step(round, "hsa_shut_down");
            shut_down();
        }
        step(round, "dlclose");
        int closed = dlclose(library);
        printf("round %d: hsa_init %#x, %d GPU agent(s), queue %#x, dlclose %d; after it: "
               "libhsa-runtime64 %s, libhsakmt %s, %d device fd(s) open\n",
               round, (unsigned)status, gpus, (unsigned)queue_status, closed,
               mapped("libhsa-runtime64") ? "mapped" : "unmapped",
               mapped("libhsakmt") ? "mapped" : "unmapped", device_fds());
        failed |= status != HSA_STATUS_SUCCESS || gpus == 0 ||
                  queue_status != HSA_STATUS_SUCCESS;
    }
    printf("hsa_reload: %s\n", failed ? "some round failed" : "ok");
    return failed;
}
