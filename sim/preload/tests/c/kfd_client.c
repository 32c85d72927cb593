/*
 * A KFD client written against the kernel's uapi header alone (<linux/kfd_ioctl.h>, no
 * libhsakmt): what any program does to find and use an AMD GPU, plus the edges a machine
 * without a feature shows (unknown ioctls, missing nodes, bad mmap offsets) — which must be
 * errors, never crashes; a buffer given back by mapping anonymous memory over its range, as
 * libhsakmt does, is released. Under the LD_PRELOAD interposer it runs on the simulated GPU.
 *
 * exit status 0 and "kfd_client: ok" on stdout when every check holds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kfd_ioctl.h>
#include <drm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <limits.h>
#include <unistd.h>

static int failures;

#define EXPECT(cond, ...)                                                            \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                            \
            fprintf(stderr, " (errno %d: %s)\n", errno, strerror(errno));            \
            failures++;                                                              \
        }                                                                            \
    } while (0)

#define TOPOLOGY "/sys/devices/virtual/kfd/kfd/topology"

/* One GPU of the topology. */
struct gpu {
    uint32_t node, gpu_id, render_minor;
};

static int read_u32(const char *path, uint32_t *value)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return -1;
    int ok = fscanf(file, "%u", value) == 1;
    fclose(file);
    return ok ? 0 : -1;
}

static int property(uint32_t node, const char *name, uint64_t *value)
{
    char path[256], key[64];
    unsigned long long number;
    snprintf(path, sizeof path, TOPOLOGY "/nodes/%u/properties", node);
    FILE *file = fopen(path, "r");
    if (!file)
        return -1;
    int found = -1;
    while (fscanf(file, "%63s %llu", key, &number) == 2) {
        if (strcmp(key, name) == 0) {
            *value = number;
            found = 0;
        }
    }
    fclose(file);
    return found;
}

/* The GPUs, from the topology's node directories. */
static int find_gpus(struct gpu *gpus, int max)
{
    DIR *dir = opendir(TOPOLOGY "/nodes");
    EXPECT(dir != NULL, "opendir nodes");
    if (!dir)
        return 0;
    int count = 0, nodes = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.')
            continue;
        nodes++;
        uint32_t node = (uint32_t)atoi(entry->d_name), gpu_id = 0;
        char path[256];
        snprintf(path, sizeof path, TOPOLOGY "/nodes/%u/gpu_id", node);
        EXPECT(read_u32(path, &gpu_id) == 0, "%s", path);
        uint64_t minor = 0;
        if (gpu_id != 0 && count < max) {
            EXPECT(property(node, "drm_render_minor", &minor) == 0, "node %u", node);
            gpus[count++] = (struct gpu){node, gpu_id, (uint32_t)minor};
        }
    }
    closedir(dir);
    EXPECT(nodes >= 2, "a CPU node and a GPU node, got %d nodes", nodes);
    return count;
}

/* VRAM the GPU has left (AMDKFD_IOC_AVAILABLE_MEMORY); 0 on failure. */
static uint64_t available_vram(int kfd, uint32_t gpu_id)
{
    struct kfd_ioctl_get_available_memory_args args = {.gpu_id = gpu_id};
    EXPECT(ioctl(kfd, AMDKFD_IOC_AVAILABLE_MEMORY, &args) == 0, "AVAILABLE_MEMORY");
    return args.available;
}

/*
 * A buffer given back as libhsakmt and ROCr give it back: freed while its CPU range is still
 * mapped through the render node, then the range reserved again with an anonymous PROT_NONE
 * MAP_FIXED mapping over it. The replaced mapping held the last reference to the BO (the VMA's
 * GEM reference), so its VRAM comes back once the range is replaced, as when it is unmapped.
 */
static void free_by_replacing_the_range(int kfd, int render, uint32_t gpu_id, uint64_t va)
{
    const uint64_t size = 2 << 20;
    void *host = mmap((void *)va, size, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    EXPECT(host == (void *)va, "reserve the VA range for VRAM");
    if (host != (void *)va)
        return;
    uint64_t before = available_vram(kfd, gpu_id);
    struct kfd_ioctl_alloc_memory_of_gpu_args alloc = {
        .va_addr = va,
        .size = size,
        .gpu_id = gpu_id,
        .flags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
                 KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC | KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE,
    };
    EXPECT(ioctl(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc) == 0, "ALLOC_MEMORY_OF_GPU VRAM");
    void *cpu = mmap((void *)va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, render,
                     (off_t)alloc.mmap_offset);
    EXPECT(cpu == (void *)va, "mmap the VRAM BO at its GPU address");
    if (cpu == (void *)va)
        *(volatile uint32_t *)cpu = 0x600dcafe;
    struct kfd_ioctl_free_memory_of_gpu_args free_args = {.handle = alloc.handle};
    EXPECT(ioctl(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &free_args) == 0, "FREE_MEMORY_OF_GPU VRAM");
    EXPECT(available_vram(kfd, gpu_id) < before,
           "the CPU mapping keeps the freed VRAM BO alive");
    void *reserved = mmap((void *)va, size, PROT_NONE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    EXPECT(reserved == (void *)va, "reserve the range again over the mapping");
    uint64_t after = available_vram(kfd, gpu_id);
    EXPECT(after == before,
           "replacing the mapping released the BO: %llu bytes of VRAM available, %llu before",
           (unsigned long long)after, (unsigned long long)before);
    EXPECT(munmap((void *)va, size) == 0, "munmap the reservation");
}

int main(void)
{
    struct stat st;
    EXPECT(stat("/dev/kfd", &st) == 0 && S_ISCHR(st.st_mode), "/dev/kfd is a char device");
    EXPECT(access("/dev/kfd", R_OK | W_OK) == 0, "access /dev/kfd");

    int kfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
    EXPECT(kfd >= 0, "open /dev/kfd");
    if (kfd < 0)
        return 1;

    struct kfd_ioctl_get_version_args version = {0};
    EXPECT(ioctl(kfd, AMDKFD_IOC_GET_VERSION, &version) == 0, "GET_VERSION");
    EXPECT(version.major_version == 1, "major %u", version.major_version);
    printf("KFD interface %u.%u\n", version.major_version, version.minor_version);

    /* Unknown requests: amdkfd answers a number outside its table with ENOTTY. */
    uint64_t scratch[8] = {0};
    errno = 0;
    EXPECT(ioctl(kfd, _IOWR('K', 0x7f, uint64_t[8]), scratch) == -1 && errno == ENOTTY,
           "unknown KFD ioctl");

    /* dup'd fds share the file; the original can go. */
    int copy = dup(kfd);
    int copy2 = fcntl(kfd, F_DUPFD_CLOEXEC, 100);
    EXPECT(copy >= 0 && copy2 >= 100, "dup/F_DUPFD_CLOEXEC");
    EXPECT(close(kfd) == 0, "close the original");
    memset(&version, 0, sizeof version);
    EXPECT(ioctl(copy, AMDKFD_IOC_GET_VERSION, &version) == 0 && version.major_version == 1,
           "GET_VERSION on the dup");
    EXPECT(close(copy2) == 0, "close the F_DUPFD copy");
    kfd = copy;

    /* sysfs as the kernel lays it out: the class link, resolved paths, the module. */
    char link[256] = {0};
    EXPECT(readlink("/sys/class/kfd/kfd", link, sizeof link - 1) > 0 &&
               strcmp(link, "../../devices/virtual/kfd/kfd") == 0,
           "/sys/class/kfd/kfd links to the device, got %s", link);
    char resolved[PATH_MAX];
    EXPECT(realpath("/sys/class/kfd/kfd/topology", resolved) != NULL &&
               strcmp(resolved, TOPOLOGY) == 0,
           "realpath of the class topology, got %s", resolved);
    char attribute[64];
    errno = 0;
    EXPECT(getxattr("/dev/kfd", "security.selinux", attribute, sizeof attribute) == -1 &&
               errno == ENODATA,
           "no extended attributes on /dev/kfd");
    FILE *modules = fopen("/proc/modules", "r");
    char line[256];
    int amdgpu_loaded = 0;
    while (modules && fgets(line, sizeof line, modules))
        amdgpu_loaded |= strncmp(line, "amdgpu ", 7) == 0;
    if (modules)
        fclose(modules);
    EXPECT(amdgpu_loaded, "amdgpu in /proc/modules");

    uint32_t generation = 0;
    EXPECT(read_u32(TOPOLOGY "/generation_id", &generation) == 0, "generation_id");
    struct gpu gpus[16];
    int gpu_count = find_gpus(gpus, 16);
    EXPECT(gpu_count >= 1, "at least one GPU");
    if (gpu_count < 1)
        return 1;
    struct gpu gpu = gpus[0];
    printf("GPU node %u: gpu_id %u, renderD%u\n", gpu.node, gpu.gpu_id, gpu.render_minor);

    /* Nodes and devices the machine does not have. */
    errno = 0;
    EXPECT(open(TOPOLOGY "/nodes/99/properties", O_RDONLY) == -1 && errno == ENOENT,
           "missing node");
    errno = 0;
    EXPECT(open("/dev/dri/card0", O_RDWR) == -1 && errno == ENOENT, "no card node");
    errno = 0;
    EXPECT(stat("/dev/dri/renderD250", &st) == -1 && errno == ENOENT, "no such render node");

    char render_path[64];
    snprintf(render_path, sizeof render_path, "/dev/dri/renderD%u", gpu.render_minor);
    int render = open(render_path, O_RDWR | O_CLOEXEC);
    EXPECT(render >= 0, "open %s", render_path);
    if (render < 0)
        return 1;
    EXPECT(fstat(render, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 226 &&
               minor(st.st_rdev) == gpu.render_minor,
           "render node numbers");
    char driver[32] = {0};
    struct drm_version drm = {0};
    drm.name = driver;
    drm.name_len = sizeof driver - 1;
    EXPECT(ioctl(render, DRM_IOCTL_VERSION, &drm) == 0 && strcmp(driver, "amdgpu") == 0,
           "DRM_IOCTL_VERSION says amdgpu, got %s", driver);
    /* A KFD request on the render node is someone else's ioctl. */
    errno = 0;
    EXPECT(ioctl(render, AMDKFD_IOC_GET_VERSION, &version) == -1, "KFD ioctl on DRM fd");

    struct kfd_ioctl_acquire_vm_args acquire = {.drm_fd = (uint32_t)render,
                                                 .gpu_id = gpu.gpu_id};
    EXPECT(ioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &acquire) == 0, "ACQUIRE_VM");

    /* The fd links in /proc name the device files (what a program that looks for its device
     * fds reads); followed, they are the devices; a device reopened through its link is a new
     * file, which ACQUIRE_VM refuses once the GPU is bound to another (EBUSY). */
    char fd_link[64], link_target[64] = {0};
    snprintf(fd_link, sizeof fd_link, "/proc/self/fd/%d", render);
    EXPECT(readlink(fd_link, link_target, sizeof link_target - 1) == (ssize_t)strlen(render_path) &&
               strcmp(link_target, render_path) == 0,
           "readlink %s, got %s", fd_link, link_target);
    EXPECT(stat(fd_link, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 226 &&
               minor(st.st_rdev) == gpu.render_minor,
           "stat through the render node's fd link");
    EXPECT(lstat(fd_link, &st) == 0 && S_ISLNK(st.st_mode), "lstat of an fd link is the link");
    int reopened = open(fd_link, O_RDWR | O_CLOEXEC);
    EXPECT(reopened >= 0 && reopened != render, "reopen the render node through its fd link");
    struct kfd_ioctl_acquire_vm_args other_file = {.drm_fd = (uint32_t)reopened,
                                                    .gpu_id = gpu.gpu_id};
    errno = 0;
    EXPECT(ioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &other_file) == -1 && errno == EBUSY,
           "ACQUIRE_VM with another file of the same render node: EBUSY");
    EXPECT(ioctl(kfd, AMDKFD_IOC_ACQUIRE_VM, &acquire) == 0, "ACQUIRE_VM with the same file: 0");
    if (reopened >= 0)
        close(reopened);
    memset(link_target, 0, sizeof link_target);
    snprintf(fd_link, sizeof fd_link, "/dev/fd/%d", kfd);
    EXPECT(readlink(fd_link, link_target, sizeof link_target - 1) == 8 &&
               strcmp(link_target, "/dev/kfd") == 0,
           "readlink %s, got %s", fd_link, link_target);

    struct kfd_process_device_apertures apertures[16];
    memset(apertures, 0, sizeof apertures);
    struct kfd_ioctl_get_process_apertures_new_args get_apertures = {
        .kfd_process_device_apertures_ptr = (uintptr_t)apertures, .num_of_nodes = 16};
    EXPECT(ioctl(kfd, AMDKFD_IOC_GET_PROCESS_APERTURES_NEW, &get_apertures) == 0,
           "GET_PROCESS_APERTURES_NEW");
    EXPECT(get_apertures.num_of_nodes == (uint32_t)gpu_count, "%u apertures",
           get_apertures.num_of_nodes);
    uint64_t gpuvm_base = 0;
    for (uint32_t i = 0; i < get_apertures.num_of_nodes; i++)
        if (apertures[i].gpu_id == gpu.gpu_id)
            gpuvm_base = apertures[i].gpuvm_base;
    EXPECT(gpuvm_base != 0, "a GPUVM aperture");

    /* GTT memory: allocate at a GPU address of our choosing, map it for the CPU through
     * the render node, map it to the GPU, and free it. */
    const uint64_t size = 2 << 20;
    uint64_t va = (gpuvm_base + (64ull << 20) + size - 1) & ~(size - 1);
    void *host = mmap((void *)va, size, PROT_NONE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    EXPECT(host == (void *)va, "reserve the VA range");
    struct kfd_ioctl_alloc_memory_of_gpu_args alloc = {
        .va_addr = va,
        .size = size,
        .gpu_id = gpu.gpu_id,
        .flags = KFD_IOC_ALLOC_MEM_FLAGS_GTT | KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE |
                 KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE | KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE,
    };
    EXPECT(ioctl(kfd, AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &alloc) == 0, "ALLOC_MEMORY_OF_GPU");
    void *cpu = mmap((void *)va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, render,
                     (off_t)alloc.mmap_offset);
    EXPECT(cpu == (void *)va, "mmap the BO at its GPU address");
    if (cpu == (void *)va) {
        volatile uint32_t *words = cpu;
        for (uint32_t i = 0; i < 1024; i++)
            words[i] = i * 2654435761u;
        uint32_t bad = 0;
        for (uint32_t i = 0; i < 1024; i++)
            bad += words[i] != i * 2654435761u;
        EXPECT(bad == 0, "%u words read back wrong", bad);
    }
    uint32_t device_ids[1] = {gpu.gpu_id};
    struct kfd_ioctl_map_memory_to_gpu_args map = {
        .handle = alloc.handle,
        .device_ids_array_ptr = (uintptr_t)device_ids,
        .n_devices = 1,
    };
    EXPECT(ioctl(kfd, AMDKFD_IOC_MAP_MEMORY_TO_GPU, &map) == 0 && map.n_success == 1,
           "MAP_MEMORY_TO_GPU");
    struct kfd_ioctl_unmap_memory_from_gpu_args unmap = {
        .handle = alloc.handle,
        .device_ids_array_ptr = (uintptr_t)device_ids,
        .n_devices = 1,
    };
    EXPECT(ioctl(kfd, AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &unmap) == 0 && unmap.n_success == 1,
           "UNMAP_MEMORY_FROM_GPU");
    EXPECT(munmap((void *)va, size) == 0, "munmap");
    struct kfd_ioctl_free_memory_of_gpu_args free_args = {.handle = alloc.handle};
    EXPECT(ioctl(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &free_args) == 0, "FREE_MEMORY_OF_GPU");
    errno = 0;
    EXPECT(ioctl(kfd, AMDKFD_IOC_FREE_MEMORY_OF_GPU, &free_args) == -1 && errno == EINVAL,
           "freeing twice");

    free_by_replacing_the_range(kfd, render, gpu.gpu_id, va + 2 * size);

    /* An mmap offset that names nothing: an error, not a crash. */
    errno = 0;
    void *nothing = mmap(NULL, 4096, PROT_READ, MAP_SHARED, kfd, 0);
    EXPECT(nothing == MAP_FAILED, "mmap of /dev/kfd at offset 0 fails");

    EXPECT(close(render) == 0, "close render node");
    EXPECT(close(kfd) == 0, "close /dev/kfd");
    errno = 0;
    EXPECT(ioctl(kfd, AMDKFD_IOC_GET_VERSION, &version) == -1 && errno == EBADF,
           "ioctl on a closed fd");

    if (failures) {
        fprintf(stderr, "kfd_client: %d check(s) failed\n", failures);
        return 1;
    }
    printf("kfd_client: ok\n");
    return 0;
}
