// HIP 5.2 host-side costs, for the README's comparison of the two HSA runtimes under the
// interposer: hipLaunchKernel's host cost (launches of an empty kernel, timed on the host
// without waiting), launch + hipStreamSynchronize round trips, and hipMemcpy bandwidth
// host -> device, device -> host (pinned host memory) and device -> device. Prints one
// "name value unit" line per measurement, then "hip_bench: ok".
#include <chrono>
#include <stdlib.h>

#include "check.h"

__global__ void empty() {}

static double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int main(int argc, char** argv) {
  int launches = argc > 1 ? atoi(argv[1]) : 2000;
  int round_trips = argc > 2 ? atoi(argv[2]) : 200;
  size_t bytes = (size_t)(argc > 3 ? atoi(argv[3]) : 16) << 20;
  int copies = argc > 4 ? atoi(argv[4]) : 5;
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  // Warm up: the first launch loads the code object.
  hipLaunchKernelGGL(empty, dim3(1), dim3(64), 0, stream);
  CHECK(hipStreamSynchronize(stream));

  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < launches; i++) hipLaunchKernelGGL(empty, dim3(1), dim3(64), 0, stream);
  double launch = seconds_since(start);
  CHECK(hipGetLastError());
  CHECK(hipStreamSynchronize(stream));
  printf("launch_host %.2f us\n", launch / launches * 1e6);

  start = std::chrono::steady_clock::now();
  for (int i = 0; i < round_trips; i++) {
    hipLaunchKernelGGL(empty, dim3(1), dim3(64), 0, stream);
    CHECK(hipStreamSynchronize(stream));
  }
  printf("launch_sync %.2f us\n", seconds_since(start) / round_trips * 1e6);

  void *host, *dev, *dev2;
  CHECK(hipHostMalloc(&host, bytes, hipHostMallocDefault));
  CHECK(hipMalloc(&dev, bytes));
  CHECK(hipMalloc(&dev2, bytes));
  memset(host, 1, bytes);
  struct {
    const char* name;
    void* dst;
    void* src;
    hipMemcpyKind kind;
  } runs[] = {{"h2d", dev, host, hipMemcpyHostToDevice},
              {"d2h", host, dev, hipMemcpyDeviceToHost},
              {"d2d", dev2, dev, hipMemcpyDeviceToDevice}};
  for (auto& run : runs) {
    CHECK(hipMemcpy(run.dst, run.src, bytes, run.kind));
    start = std::chrono::steady_clock::now();
    for (int i = 0; i < copies; i++) CHECK(hipMemcpy(run.dst, run.src, bytes, run.kind));
    printf("%s %.3f GB/s\n", run.name, (double)bytes * copies / seconds_since(start) / 1e9);
  }
  CHECK(hipFree(dev));
  CHECK(hipFree(dev2));
  CHECK(hipHostFree(host));
  CHECK(hipStreamDestroy(stream));
  printf("hip_bench: ok\n");
  print_mapped_runtime();
  return 0;
}
