// HIP 5.2 client for the simulator: host -> device copies, a kernel, device -> host copies,
// on two streams ordered by events, with ROCr's default copy engines (SDMA for host<->device).
// Prints "hip_streams: ok <n>" and exits 0 when every element is right.
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                  \
  do {                                                                               \
    hipError_t e_ = (call);                                                          \
    if (e_ != hipSuccess) {                                                          \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
              hipGetErrorString(e_));                                                \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

__global__ void axpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  size_t bytes = (size_t)n * sizeof(float);
  float *x, *y, *out;
  CHECK(hipHostMalloc((void**)&x, bytes, hipHostMallocDefault));
  y = (float*)malloc(bytes);  // pageable: staged by the runtime
  out = (float*)malloc(bytes);
  for (int i = 0; i < n; i++) {
    x[i] = (float)i;
    y[i] = (float)(2 * i);
    out[i] = -1.0f;
  }
  float *dx, *dy;
  CHECK(hipMalloc((void**)&dx, bytes));
  CHECK(hipMalloc((void**)&dy, bytes));
  hipStream_t copy, compute;
  CHECK(hipStreamCreate(&copy));
  CHECK(hipStreamCreate(&compute));
  hipEvent_t copied, done;
  CHECK(hipEventCreate(&copied));
  CHECK(hipEventCreate(&done));
  CHECK(hipMemcpyAsync(dx, x, bytes, hipMemcpyHostToDevice, copy));
  CHECK(hipMemcpy(dy, y, bytes, hipMemcpyHostToDevice));
  CHECK(hipEventRecord(copied, copy));
  CHECK(hipStreamWaitEvent(compute, copied, 0));
  hipLaunchKernelGGL(axpy, dim3((n + 255) / 256), dim3(256), 0, compute, 3.0f, dx, dy, n);
  CHECK(hipGetLastError());
  CHECK(hipEventRecord(done, compute));
  CHECK(hipEventSynchronize(done));
  CHECK(hipMemcpyAsync(out, dy, bytes, hipMemcpyDeviceToHost, compute));
  CHECK(hipStreamSynchronize(compute));
  // A device-to-device copy and a memset, back through the host.
  CHECK(hipMemcpy(dx, dy, bytes, hipMemcpyDeviceToDevice));
  CHECK(hipMemset(dy, 0, bytes));
  float* back = (float*)malloc(bytes);
  CHECK(hipMemcpy(back, dx, bytes, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(y, dy, bytes, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i++) {
    float want = 3.0f * (float)i + (float)(2 * i);
    if (out[i] != want || back[i] != want || y[i] != 0.0f) {
      if (bad < 5)
        fprintf(stderr, "element %d: %f %f %f, want %f\n", i, out[i], back[i], y[i], want);
      bad++;
    }
  }
  CHECK(hipEventDestroy(copied));
  CHECK(hipEventDestroy(done));
  CHECK(hipStreamDestroy(copy));
  CHECK(hipStreamDestroy(compute));
  CHECK(hipFree(dx));
  CHECK(hipFree(dy));
  CHECK(hipHostFree(x));
  free(y);
  free(out);
  free(back);
  if (bad) {
    fprintf(stderr, "hip_streams: %d wrong elements\n", bad);
    return 1;
  }
  printf("hip_streams: ok %d\n", n);
  return 0;
}
