// HIP 5.2: two streams and events between them, asynchronous copies from and to pinned host
// memory (hipHostMalloc), hipEventElapsedTime. Stream "a" uploads and doubles; stream "b"
// waits for a's event, adds one and downloads; the host checks every element and that the
// elapsed time between an event on a and one on b is positive. Prints
// "hip_streams_events: ok <n> <ms>" and exits 0.
#include <math.h>
#include <stdlib.h>

#include "check.h"

__global__ void twice(int* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= 2;
}

__global__ void plus_one(int* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += 1;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 200000;
  size_t bytes = (size_t)n * sizeof(int);
  int *in, *out, *dev;
  CHECK(hipHostMalloc((void**)&in, bytes, hipHostMallocDefault));
  CHECK(hipHostMalloc((void**)&out, bytes, hipHostMallocDefault));
  CHECK(hipMalloc((void**)&dev, bytes));
  for (int i = 0; i < n; i++) {
    in[i] = i - 1000;
    out[i] = 0;
  }
  hipStream_t a, b;
  CHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
  CHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
  hipEvent_t start, middle, stop;
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreate(&middle));
  CHECK(hipEventCreate(&stop));
  CHECK(hipEventRecord(start, a));
  CHECK(hipMemcpyAsync(dev, in, bytes, hipMemcpyHostToDevice, a));
  hipLaunchKernelGGL(twice, dim3((n + 255) / 256), dim3(256), 0, a, dev, n);
  CHECK(hipGetLastError());
  CHECK(hipEventRecord(middle, a));
  CHECK(hipStreamWaitEvent(b, middle, 0));
  hipLaunchKernelGGL(plus_one, dim3((n + 255) / 256), dim3(256), 0, b, dev, n);
  CHECK(hipGetLastError());
  CHECK(hipMemcpyAsync(out, dev, bytes, hipMemcpyDeviceToHost, b));
  CHECK(hipEventRecord(stop, b));
  CHECK(hipEventSynchronize(stop));
  CHECK(hipStreamSynchronize(a));
  if (hipEventQuery(stop) != hipSuccess) {
    fprintf(stderr, "stop event not complete after hipEventSynchronize\n");
    return 1;
  }
  float ms = -1.0f;
  CHECK(hipEventElapsedTime(&ms, start, stop));
  float first = -1.0f;
  CHECK(hipEventElapsedTime(&first, start, middle));
  for (int i = 0; i < n; i++) {
    int want = (i - 1000) * 2 + 1;
    if (out[i] != want) {
      fprintf(stderr, "element %d: %d, want %d\n", i, out[i], want);
      return 1;
    }
  }
  if (!(ms > 0.0f) || !isfinite(ms) || !(first >= 0.0f) || first > ms) {
    fprintf(stderr, "elapsed: start..stop %f ms, start..middle %f ms\n", ms, first);
    return 1;
  }
  CHECK(hipEventDestroy(start));
  CHECK(hipEventDestroy(middle));
  CHECK(hipEventDestroy(stop));
  CHECK(hipStreamDestroy(a));
  CHECK(hipStreamDestroy(b));
  CHECK(hipFree(dev));
  CHECK(hipHostFree(in));
  CHECK(hipHostFree(out));
  printf("hip_streams_events: ok %d %f\n", n, ms);
  print_mapped_runtime();
  return 0;
}
