// A C program on Debian's liboffload 22 (libLLVMOffload.so.22.1, opened with dlopen so that it
// can be closed and opened again): `liboffload_client KERNELS.so ROUNDS LOADS` opens the
// library LOADS times; each time it runs ROUNDS rounds of olInit → find the GPU → program
// from KERNELS.so → kernels (axpy with a device-global counter, an atomic reduction, math) →
// check every result → olShutDown, and then dlclose's liboffload. Prints
// "liboffload_client: ok (LOADS loads x ROUNDS rounds)" and exits 0 when every value is right.
#include <dlfcn.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>  // before OffloadAPI.h, which uses bool without it
#include <offload/OffloadAPI.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIBOFFLOAD "libLLVMOffload.so.22.1"

// The entry points, looked up after every dlopen.
static struct {
  ol_result_t (*init)(void);
  ol_result_t (*shut_down)(void);
  ol_result_t (*iterate_devices)(ol_device_iterate_cb_t, void*);
  ol_result_t (*device_info)(ol_device_handle_t, ol_device_info_t, size_t, void*);
  ol_result_t (*platform_info)(ol_platform_handle_t, ol_platform_info_t, size_t, void*);
  ol_result_t (*create_program)(ol_device_handle_t, const void*, size_t, ol_program_handle_t*);
  ol_result_t (*destroy_program)(ol_program_handle_t);
  ol_result_t (*get_symbol)(ol_program_handle_t, const char*, ol_symbol_kind_t,
                            ol_symbol_handle_t*);
  ol_result_t (*symbol_info)(ol_symbol_handle_t, ol_symbol_info_t, size_t, void*);
  ol_result_t (*create_queue)(ol_device_handle_t, ol_queue_handle_t*);
  ol_result_t (*destroy_queue)(ol_queue_handle_t);
  ol_result_t (*sync_queue)(ol_queue_handle_t);
  ol_result_t (*mem_alloc)(ol_device_handle_t, ol_alloc_type_t, size_t, void**);
  ol_result_t (*mem_free)(void*);
  ol_result_t (*memcpy)(ol_queue_handle_t, void*, ol_device_handle_t, const void*,
                        ol_device_handle_t, size_t);
  ol_result_t (*launch)(ol_queue_handle_t, ol_device_handle_t, ol_symbol_handle_t, const void*,
                        size_t, const ol_kernel_launch_size_args_t*);
} ol;

static void die(const char* what, const char* detail) {
  fprintf(stderr, "liboffload_client: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(1);
}

static void check(ol_result_t result, const char* what) {
  if (result != NULL && result->Code != OL_ERRC_SUCCESS) {
    fprintf(stderr, "liboffload_client: %s failed: error %d: %s\n", what, (int)result->Code,
            result->Details ? result->Details : "");
    exit(1);
  }
}

static void* entry(void* library, const char* name) {
  void* f = dlsym(library, name);
  if (!f) die("missing entry point", name);
  return f;
}

static void* open_liboffload(void) {
  void* library = dlopen(LIBOFFLOAD, RTLD_NOW | RTLD_LOCAL);
  if (!library) die("dlopen " LIBOFFLOAD, dlerror());
  *(void**)&ol.init = entry(library, "olInit");
  *(void**)&ol.shut_down = entry(library, "olShutDown");
  *(void**)&ol.iterate_devices = entry(library, "olIterateDevices");
  *(void**)&ol.device_info = entry(library, "olGetDeviceInfo");
  *(void**)&ol.platform_info = entry(library, "olGetPlatformInfo");
  *(void**)&ol.create_program = entry(library, "olCreateProgram");
  *(void**)&ol.destroy_program = entry(library, "olDestroyProgram");
  *(void**)&ol.get_symbol = entry(library, "olGetSymbol");
  *(void**)&ol.symbol_info = entry(library, "olGetSymbolInfo");
  *(void**)&ol.create_queue = entry(library, "olCreateQueue");
  *(void**)&ol.destroy_queue = entry(library, "olDestroyQueue");
  *(void**)&ol.sync_queue = entry(library, "olSyncQueue");
  *(void**)&ol.mem_alloc = entry(library, "olMemAlloc");
  *(void**)&ol.mem_free = entry(library, "olMemFree");
  *(void**)&ol.memcpy = entry(library, "olMemcpy");
  *(void**)&ol.launch = entry(library, "olLaunchKernel");
  return library;
}

struct devices {
  ol_device_handle_t gpu, host;
};

static bool find_devices(ol_device_handle_t device, void* data) {
  struct devices* found = data;
  ol_platform_handle_t platform;
  ol_platform_backend_t backend;
  check(ol.device_info(device, OL_DEVICE_INFO_PLATFORM, sizeof platform, &platform), "platform");
  check(ol.platform_info(platform, OL_PLATFORM_INFO_BACKEND, sizeof backend, &backend), "backend");
  if (backend == OL_PLATFORM_BACKEND_AMDGPU && !found->gpu) found->gpu = device;
  if (backend == OL_PLATFORM_BACKEND_HOST && !found->host) found->host = device;
  return true;
}

static ol_kernel_launch_size_args_t launch_of(uint32_t n, uint32_t group) {
  ol_kernel_launch_size_args_t size = {0};
  size.Dimensions = 1;
  size.NumGroups.x = (n + group - 1) / group;
  size.NumGroups.y = size.NumGroups.z = 1;
  size.GroupSize.x = group;
  size.GroupSize.y = size.GroupSize.z = 1;
  return size;
}

static void* to_device(struct devices* d, const void* host, size_t bytes) {
  void* p;
  check(ol.mem_alloc(d->gpu, OL_ALLOC_TYPE_DEVICE, bytes, &p), "olMemAlloc");
  check(ol.memcpy(NULL, p, d->gpu, host, d->host, bytes), "olMemcpy to the GPU");
  return p;
}

static void round_trip(const void* image, size_t image_size, int round) {
  check(ol.init(), "olInit");
  struct devices d = {0};
  check(ol.iterate_devices(find_devices, &d), "olIterateDevices");
  if (!d.gpu || !d.host) die("no AMDGPU device (or no host device)", NULL);
  char name[64] = {0};
  check(ol.device_info(d.gpu, OL_DEVICE_INFO_NAME, sizeof name, name), "device name");
  if (strcmp(name, "gfx90a") != 0) die("unexpected GPU", name);

  ol_program_handle_t program;
  check(ol.create_program(d.gpu, image, image_size, &program), "olCreateProgram");
  ol_symbol_handle_t axpy, reduce, math, launches, magic;
  check(ol.get_symbol(program, "axpy", OL_SYMBOL_KIND_KERNEL, &axpy), "kernel axpy");
  check(ol.get_symbol(program, "reduce", OL_SYMBOL_KIND_KERNEL, &reduce), "kernel reduce");
  check(ol.get_symbol(program, "math", OL_SYMBOL_KIND_KERNEL, &math), "kernel math");
  check(ol.get_symbol(program, "launches", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &launches),
        "global launches");
  check(ol.get_symbol(program, "magic", OL_SYMBOL_KIND_GLOBAL_VARIABLE, &magic), "global magic");
  ol_queue_handle_t queue;
  check(ol.create_queue(d.gpu, &queue), "olCreateQueue");

  // Device globals: the initialised table arrived; the counter starts where the host puts it.
  void *magic_at, *launches_at;
  size_t magic_size = 0;
  check(ol.symbol_info(magic, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof magic_at, &magic_at),
        "magic address");
  check(ol.symbol_info(magic, OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE, sizeof magic_size, &magic_size),
        "magic size");
  check(ol.symbol_info(launches, OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS, sizeof launches_at,
                       &launches_at),
        "launches address");
  int32_t table[4];
  if (magic_size != sizeof table) die("magic has the wrong size", NULL);
  check(ol.memcpy(NULL, table, d.host, magic_at, d.gpu, sizeof table), "read magic");
  if (table[0] != 0x41 || table[3] != 0x44) die("the initialised global was not loaded", NULL);
  uint64_t start = 1000 * (uint64_t)round;
  check(ol.memcpy(NULL, launches_at, d.gpu, &start, d.host, sizeof start), "write launches");

  // axpy, three launches on the queue.
  enum { N = 5000 };
  static double x[N], y[N];
  for (int i = 0; i < N; i++) {
    x[i] = i;
    y[i] = 0.5 * i;
  }
  double* dx = to_device(&d, x, sizeof x);
  double* dy = to_device(&d, y, sizeof y);
  struct {
    double a;
    const double* x;
    double* y;
    uint32_t n;
  } axpy_args = {2.0, dx, dy, N};
  ol_kernel_launch_size_args_t size = launch_of(N, 128);
  for (int i = 0; i < 3; i++)
    check(ol.launch(queue, d.gpu, axpy, &axpy_args, sizeof axpy_args, &size), "launch axpy");
  check(ol.sync_queue(queue), "olSyncQueue");
  check(ol.memcpy(NULL, y, d.host, dy, d.gpu, sizeof y), "read y");
  for (int i = 0; i < N; i++) {
    double want = 0.5 * i + 3 * (2.0 * i + table[i % 4]);
    if (y[i] != want) {
      fprintf(stderr, "y[%d] = %f, want %f\n", i, y[i], want);
      die("axpy computed a wrong value", NULL);
    }
  }
  uint64_t counted = 0;
  check(ol.memcpy(NULL, &counted, d.host, launches_at, d.gpu, sizeof counted), "read launches");
  if (counted != start + 3) {
    fprintf(stderr, "launches = %" PRIu64 ", want %" PRIu64 "\n", counted, start + 3);
    die("the device global did not count the launches", NULL);
  }

  // An atomic reduction over many work-groups.
  enum { M = 20000 };
  static int64_t values[M];
  int64_t want_sum = 0, want_max = INT64_MIN;
  for (int i = 0; i < M; i++) {
    values[i] = (int64_t)((i * 7919) % 10007) - 5000;
    want_sum += values[i];
    if (values[i] > want_max) want_max = values[i];
  }
  int64_t init[2] = {0, INT64_MIN};
  int64_t* dvalues = to_device(&d, values, sizeof values);
  int64_t* dresult = to_device(&d, init, sizeof init);
  struct {
    const int64_t* x;
    uint32_t n;
    int64_t *sum, *max;
  } reduce_args = {dvalues, M, dresult, dresult + 1};
  size = launch_of(M, 256);
  check(ol.launch(queue, d.gpu, reduce, &reduce_args, sizeof reduce_args, &size), "launch reduce");
  check(ol.sync_queue(queue), "olSyncQueue");
  int64_t result[2];
  check(ol.memcpy(NULL, result, d.host, dresult, d.gpu, sizeof result), "read the reduction");
  if (result[0] != want_sum || result[1] != want_max) {
    fprintf(stderr, "sum %" PRId64 " max %" PRId64 ", want %" PRId64 " %" PRId64 "\n", result[0],
            result[1], want_sum, want_max);
    die("the atomic reduction is wrong", NULL);
  }

  // Math the compiler lowers to instructions.
  enum { K = 1000 };
  static double out[4 * K];
  double* dout;
  check(ol.mem_alloc(d.gpu, OL_ALLOC_TYPE_DEVICE, sizeof out, (void**)&dout), "olMemAlloc");
  struct {
    double* out;
    uint32_t n;
  } math_args = {dout, K};
  size = launch_of(K, 64);
  check(ol.launch(queue, d.gpu, math, &math_args, sizeof math_args, &size), "launch math");
  check(ol.sync_queue(queue), "olSyncQueue");
  check(ol.memcpy(NULL, out, d.host, dout, d.gpu, sizeof out), "read math");
  for (int i = 0; i < K; i++) {
    double v = i + 0.25;
    double want[4] = {sqrt(v), fma(v, v, 1.0), v, floor(v * 2.5)};
    for (int f = 0; f < 4; f++)
      if (out[4 * i + f] != want[f]) {
        fprintf(stderr, "x = %f function %d: %.17g, want %.17g\n", v, f, out[4 * i + f], want[f]);
        die("math differs from the host's (these are correctly rounded)", NULL);
      }
  }

  void* frees[] = {dx, dy, dvalues, dresult, dout};
  for (size_t i = 0; i < sizeof frees / sizeof *frees; i++) check(ol.mem_free(frees[i]), "olMemFree");
  check(ol.destroy_queue(queue), "olDestroyQueue");
  check(ol.destroy_program(program), "olDestroyProgram");
  check(ol.shut_down(), "olShutDown");
}

// Whether /proc/self/maps names `needle`.
static bool mapped(const char* needle) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (!maps) die("cannot read /proc/self/maps", NULL);
  char line[4096];
  bool found = false;
  while (!found && fgets(line, sizeof line, maps)) found = strstr(line, needle) != NULL;
  fclose(maps);
  return found;
}

int main(int argc, char** argv) {
  if (argc < 4) die("usage: liboffload_client KERNELS.so ROUNDS LOADS", NULL);
  int rounds = atoi(argv[2]), loads = atoi(argv[3]);
  FILE* file = fopen(argv[1], "rb");
  if (!file) die("cannot open", argv[1]);
  static char image[1 << 20];
  size_t image_size = fread(image, 1, sizeof image, file);
  fclose(file);
  for (int load = 0; load < loads; load++) {
    void* library = open_liboffload();
    for (int round = 0; round < rounds; round++) round_trip(image, image_size, round);
    if (dlclose(library) != 0) die("dlclose", dlerror());
    // What stays mapped after dlclose, for the test's record (LLVM keeps the libraries its
    // plugins opened as permanent; that is liboffload's choice, not a failure).
    printf("after dlclose %d: liboffload %s, libhsa-runtime64 %s\n", load + 1,
           mapped("libLLVMOffload") ? "mapped" : "unmapped",
           mapped("libhsa-runtime64") ? "mapped" : "unmapped");
  }
  if (mapped("libhsa-runtime64.so.1.5.0") || mapped("libhsakmt")) die("ROCr's library is mapped", NULL);
  printf("liboffload_client: ok (%d loads x %d rounds)\n", loads, rounds);
  return 0;
}
