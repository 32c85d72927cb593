// The code object hip_module loads with hipModuleLoadData (built with hipcc --genco): a
// kernel and a device global it reads.
#include <hip/hip_runtime.h>

extern "C" __device__ int bias;

__device__ int bias = 7;

extern "C" __global__ void add_bias(int* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = v[i] * 3 + bias;
}
