// HIP 5.2 client for the simulator: a two-stream pipeline over pinned host memory
// (hipHostMalloc). Stream "up" copies each chunk host -> device with hipMemcpyAsync and records
// an event; stream "work" waits for it, scales the chunk in a kernel and copies it back with
// hipMemcpyAsync into pinned memory, recording an event the next upload of that slot waits
// for. hipEventElapsedTime measures the whole pipeline between events on the two streams.
// ROCr's default copy engines (SDMA for host <-> device). Prints "hip_pinned_events: ok <n>"
// and exits 0 when every element is right and the elapsed time is positive and finite.
#include <hip/hip_runtime.h>
#include <math.h>
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

#define CHUNKS 4
#define SLOTS 2

__global__ void scale_add(int* v, int factor, int offset, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] * factor + offset;
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100000;  // elements per chunk
  size_t bytes = (size_t)n * sizeof(int);
  int *in, *out;
  CHECK(hipHostMalloc((void**)&in, bytes * CHUNKS, hipHostMallocDefault));
  CHECK(hipHostMalloc((void**)&out, bytes * CHUNKS, hipHostMallocDefault));
  for (long i = 0; i < (long)n * CHUNKS; i++) {
    in[i] = (int)(i * 7 + 1);
    out[i] = -1;
  }
  int* slot[SLOTS];
  for (int s = 0; s < SLOTS; s++) CHECK(hipMalloc((void**)&slot[s], bytes));
  hipStream_t up, work;
  CHECK(hipStreamCreate(&up));
  CHECK(hipStreamCreate(&work));
  hipEvent_t start, stop, uploaded[CHUNKS], freed[SLOTS];
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreate(&stop));
  for (int c = 0; c < CHUNKS; c++) CHECK(hipEventCreate(&uploaded[c]));
  for (int s = 0; s < SLOTS; s++) CHECK(hipEventCreate(&freed[s]));
  CHECK(hipEventRecord(start, up));
  for (int c = 0; c < CHUNKS; c++) {
    int s = c % SLOTS;
    // The slot's previous chunk must be downloaded before it is overwritten.
    if (c >= SLOTS) CHECK(hipStreamWaitEvent(up, freed[s], 0));
    CHECK(hipMemcpyAsync(slot[s], in + (size_t)c * n, bytes, hipMemcpyHostToDevice, up));
    CHECK(hipEventRecord(uploaded[c], up));
    CHECK(hipStreamWaitEvent(work, uploaded[c], 0));
    hipLaunchKernelGGL(scale_add, dim3((n + 255) / 256), dim3(256), 0, work, slot[s], 3, c, n);
    CHECK(hipGetLastError());
    CHECK(hipMemcpyAsync(out + (size_t)c * n, slot[s], bytes, hipMemcpyDeviceToHost, work));
    CHECK(hipEventRecord(freed[s], work));
  }
  CHECK(hipEventRecord(stop, work));
  CHECK(hipEventSynchronize(stop));
  float ms = -1.0f;
  CHECK(hipEventElapsedTime(&ms, start, stop));
  CHECK(hipStreamSynchronize(up));
  int bad = 0;
  for (int c = 0; c < CHUNKS; c++) {
    for (int i = 0; i < n; i++) {
      long k = (long)c * n + i;
      int want = (int)(k * 7 + 1) * 3 + c;
      if (out[k] != want) {
        if (bad < 5) fprintf(stderr, "chunk %d element %d: %d, want %d\n", c, i, out[k], want);
        bad++;
      }
    }
  }
  for (int c = 0; c < CHUNKS; c++) CHECK(hipEventDestroy(uploaded[c]));
  for (int s = 0; s < SLOTS; s++) {
    CHECK(hipEventDestroy(freed[s]));
    CHECK(hipFree(slot[s]));
  }
  CHECK(hipEventDestroy(start));
  CHECK(hipEventDestroy(stop));
  CHECK(hipStreamDestroy(up));
  CHECK(hipStreamDestroy(work));
  CHECK(hipHostFree(in));
  CHECK(hipHostFree(out));
  if (bad) {
    fprintf(stderr, "hip_pinned_events: %d wrong elements\n", bad);
    return 1;
  }
  if (!(ms > 0.0f) || !isfinite(ms)) {
    fprintf(stderr, "hip_pinned_events: elapsed time %f ms\n", ms);
    return 1;
  }
  printf("hip_pinned_events: ok %d elapsed_ms %f\n", n, ms);
  return 0;
}
