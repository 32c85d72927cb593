// HIP 5.2 device printf: every work-item of two workgroups prints a line (through the
// hostcall buffer the HIP runtime services on the host), then the host prints its own.
// The test counts the device lines and checks their text.
#include "check.h"

__global__ void hello(int tag) {
  printf("device: tag %d block %d thread %d value %.2f\n", tag, (int)blockIdx.x,
         (int)threadIdx.x, 0.5f * (float)threadIdx.x);
}

int main() {
  hipLaunchKernelGGL(hello, dim3(2), dim3(8), 0, 0, 42);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  printf("hip_printf: ok\n");
  print_mapped_runtime();
  return 0;
}
