// HIP 5.2: a kernel whose assert fails. On ROCr the device reports the failed assertion
// through HIP's hostcall buffer and the program aborts with the message on stderr; "before"
// is printed first so the test knows the program got as far as the launch.
#include <assert.h>

#include "check.h"

__global__ void must_be_small(const int* v) {
  int i = threadIdx.x;
  assert(v[i] < 100 && "element too large");
}

int main() {
  int host[4] = {1, 2, 300, 4};
  int* dev;
  CHECK(hipMalloc((void**)&dev, sizeof host));
  CHECK(hipMemcpy(dev, host, sizeof host, hipMemcpyHostToDevice));
  print_mapped_runtime();
  printf("before\n");
  fflush(stdout);
  hipLaunchKernelGGL(must_be_small, dim3(1), dim3(4), 0, 0, dev);
  hipError_t e = hipDeviceSynchronize();
  printf("after: %s\n", hipGetErrorString(e));
  return 0;
}
