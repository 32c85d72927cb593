// HIP 5.2 kernels on one device: device query, vector add, a block reduction in shared memory
// with __syncthreads, atomics into a histogram, __constant__ memory written by
// hipMemcpyToSymbol, a __device__ global read back by hipMemcpyFromSymbol, device function
// pointers, hipMemset. Prints one "name: ok ..." line per part and "hip_kernels: ok" last;
// exits 1 at the first wrong answer.
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 100000
#define BLOCK 256
#define BINS 16

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void block_sum(const int* in, int* out, int n) {
  __shared__ int partial[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

__global__ void histogram(const int* in, unsigned* bins, unsigned long long* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicAdd(&bins[in[i] % BINS], 1u);
    atomicAdd(total, (unsigned long long)in[i]);
  }
}

__constant__ int coefficients[4];
__device__ int calls;

__global__ void polynomial(const int* x, int* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int v = x[i];
    y[i] = coefficients[0] + v * (coefficients[1] + v * (coefficients[2] + v * coefficients[3]));
    if (i == 0) atomicAdd(&calls, 1);
  }
}

typedef int (*op_t)(int, int);
__device__ int op_add(int a, int b) { return a + b; }
__device__ int op_mul(int a, int b) { return a * b; }
__device__ int op_sub(int a, int b) { return a - b; }
__device__ op_t ops[3] = {op_add, op_mul, op_sub};

__global__ void apply(const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = ops[i % 3](a[i], b[i]);
}

int main() {
  int count = 0;
  CHECK(hipGetDeviceCount(&count));
  hipDeviceProp_t prop;
  CHECK(hipGetDeviceProperties(&prop, 0));
  if (count < 1 || strncmp(prop.gcnArchName, "gfx90a", 6) != 0 || prop.multiProcessorCount <= 0) {
    fprintf(stderr, "device: count %d arch %s CUs %d\n", count, prop.gcnArchName,
            prop.multiProcessorCount);
    return 1;
  }
  printf("device: ok %d %s %d CUs %zu MiB\n", count, prop.gcnArchName, prop.multiProcessorCount,
         prop.totalGlobalMem >> 20);

  int blocks = (N + BLOCK - 1) / BLOCK;
  float *ha = (float*)malloc(N * sizeof(float)), *hb = (float*)malloc(N * sizeof(float)),
        *hc = (float*)malloc(N * sizeof(float));
  for (int i = 0; i < N; i++) {
    ha[i] = (float)i;
    hb[i] = 0.5f * (float)i + 1.0f;
  }
  float *da, *db, *dc;
  CHECK(hipMalloc((void**)&da, N * sizeof(float)));
  CHECK(hipMalloc((void**)&db, N * sizeof(float)));
  CHECK(hipMalloc((void**)&dc, N * sizeof(float)));
  CHECK(hipMemcpy(da, ha, N * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, hb, N * sizeof(float), hipMemcpyHostToDevice));
  CHECK(hipMemset(dc, 0xff, N * sizeof(float)));
  hipLaunchKernelGGL(vector_add, dim3(blocks), dim3(BLOCK), 0, 0, da, db, dc, N);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(hc, dc, N * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    if (hc[i] != ha[i] + hb[i]) {
      fprintf(stderr, "vector_add[%d] = %f, want %f\n", i, hc[i], ha[i] + hb[i]);
      return 1;
    }
  }
  printf("vector_add: ok %d\n", N);

  int* hi = (int*)malloc(N * sizeof(int));
  long long want_total = 0;
  for (int i = 0; i < N; i++) {
    hi[i] = (i * 37) % 1001;
    want_total += hi[i];
  }
  int *di, *dsums;
  CHECK(hipMalloc((void**)&di, N * sizeof(int)));
  CHECK(hipMalloc((void**)&dsums, blocks * sizeof(int)));
  CHECK(hipMemcpy(di, hi, N * sizeof(int), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(block_sum, dim3(blocks), dim3(BLOCK), 0, 0, di, dsums, N);
  CHECK(hipGetLastError());
  int* sums = (int*)malloc(blocks * sizeof(int));
  CHECK(hipMemcpy(sums, dsums, blocks * sizeof(int), hipMemcpyDeviceToHost));
  for (int b = 0; b < blocks; b++) {
    int want = 0;
    for (int i = b * BLOCK; i < (b + 1) * BLOCK && i < N; i++) want += hi[i];
    if (sums[b] != want) {
      fprintf(stderr, "block_sum[%d] = %d, want %d\n", b, sums[b], want);
      return 1;
    }
  }
  printf("block_sum: ok %d blocks\n", blocks);

  unsigned* dbins;
  unsigned long long* dtotal;
  CHECK(hipMalloc((void**)&dbins, BINS * sizeof(unsigned)));
  CHECK(hipMalloc((void**)&dtotal, sizeof(unsigned long long)));
  CHECK(hipMemset(dbins, 0, BINS * sizeof(unsigned)));
  CHECK(hipMemset(dtotal, 0, sizeof(unsigned long long)));
  hipLaunchKernelGGL(histogram, dim3(blocks), dim3(BLOCK), 0, 0, di, dbins, dtotal, N);
  CHECK(hipGetLastError());
  unsigned bins[BINS], want_bins[BINS] = {0};
  unsigned long long total = 0;
  CHECK(hipMemcpy(bins, dbins, sizeof(bins), hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&total, dtotal, sizeof(total), hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) want_bins[hi[i] % BINS]++;
  for (int b = 0; b < BINS; b++) {
    if (bins[b] != want_bins[b]) {
      fprintf(stderr, "histogram[%d] = %u, want %u\n", b, bins[b], want_bins[b]);
      return 1;
    }
  }
  if ((long long)total != want_total) {
    fprintf(stderr, "atomic total %llu, want %lld\n", total, want_total);
    return 1;
  }
  printf("atomics: ok total %llu\n", total);

  int coeffs[4] = {3, -2, 5, 1};
  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(coefficients), coeffs, sizeof(coeffs)));
  int zero = 0;
  CHECK(hipMemcpyToSymbol(HIP_SYMBOL(calls), &zero, sizeof(zero)));
  for (int i = 0; i < N; i++) hi[i] = i % 23 - 11;
  CHECK(hipMemcpy(di, hi, N * sizeof(int), hipMemcpyHostToDevice));
  int* dy;
  CHECK(hipMalloc((void**)&dy, N * sizeof(int)));
  hipLaunchKernelGGL(polynomial, dim3(blocks), dim3(BLOCK), 0, 0, di, dy, N);
  hipLaunchKernelGGL(polynomial, dim3(blocks), dim3(BLOCK), 0, 0, di, dy, N);
  CHECK(hipGetLastError());
  int* hy = (int*)malloc(N * sizeof(int));
  CHECK(hipMemcpy(hy, dy, N * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    int v = hi[i];
    int want = 3 + v * (-2 + v * (5 + v * 1));
    if (hy[i] != want) {
      fprintf(stderr, "polynomial[%d] = %d, want %d\n", i, hy[i], want);
      return 1;
    }
  }
  int launched = -1;
  CHECK(hipMemcpyFromSymbol(&launched, HIP_SYMBOL(calls), sizeof(launched)));
  if (launched != 2) {
    fprintf(stderr, "calls = %d, want 2\n", launched);
    return 1;
  }
  printf("constant: ok calls %d\n", launched);

  int *hb2 = (int*)malloc(N * sizeof(int)), *db2, *dout;
  for (int i = 0; i < N; i++) {
    hi[i] = i % 1000;
    hb2[i] = i % 7 + 1;
  }
  CHECK(hipMalloc((void**)&db2, N * sizeof(int)));
  CHECK(hipMalloc((void**)&dout, N * sizeof(int)));
  CHECK(hipMemcpy(di, hi, N * sizeof(int), hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db2, hb2, N * sizeof(int), hipMemcpyHostToDevice));
  hipLaunchKernelGGL(apply, dim3(blocks), dim3(BLOCK), 0, 0, di, db2, dout, N);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(hy, dout, N * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < N; i++) {
    int a = hi[i], b = hb2[i];
    int want = i % 3 == 0 ? a + b : i % 3 == 1 ? a * b : a - b;
    if (hy[i] != want) {
      fprintf(stderr, "apply[%d] = %d, want %d\n", i, hy[i], want);
      return 1;
    }
  }
  printf("function_pointers: ok\n");

  CHECK(hipFree(da));
  CHECK(hipFree(db));
  CHECK(hipFree(dc));
  CHECK(hipFree(di));
  CHECK(hipFree(dsums));
  CHECK(hipFree(dbins));
  CHECK(hipFree(dtotal));
  CHECK(hipFree(dy));
  CHECK(hipFree(db2));
  CHECK(hipFree(dout));
  printf("hip_kernels: ok\n");
  print_mapped_runtime();
  return 0;
}
