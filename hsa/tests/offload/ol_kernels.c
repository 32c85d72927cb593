// GPU kernels for liboffload_client.c, built by clang-22 for gfx90a as a plain AMDGPU code
// object (no device libraries): a scaled sum with a device-global counter bumped atomically, a
// reduction into one value with atomics, and math the compiler lowers to instructions.
#include <gpuintrin.h>
#include <stdint.h>

// A device global the host reads and writes through olGetSymbolInfo + olMemcpy.
__attribute__((visibility("protected"))) uint64_t launches = 0;
// Initialised data: the host checks the loader copied it.
__attribute__((visibility("protected"))) int32_t magic[4] = {0x41, 0x51, 0x55, 0x44};

// y[i] = a * x[i] + y[i] + magic[i % 4]; one thread counts the launch.
__gpu_kernel void axpy(double a, const double *x, double *y, uint32_t n) {
  uint32_t i = __gpu_block_id_x() * __gpu_num_threads_x() + __gpu_thread_id_x();
  if (i == 0)
    __atomic_fetch_add(&launches, 1, __ATOMIC_RELAXED);
  if (i < n)
    y[i] = a * x[i] + y[i] + magic[i % 4];
}

// *sum += x[i] for every i, *max = max(x[i]), with device-scope atomics.
__gpu_kernel void reduce(const int64_t *x, uint32_t n, int64_t *sum, int64_t *max) {
  uint32_t i = __gpu_block_id_x() * __gpu_num_threads_x() + __gpu_thread_id_x();
  if (i < n) {
    __scoped_atomic_fetch_add(sum, x[i], __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);
    __scoped_atomic_fetch_max(max, x[i], __ATOMIC_RELAXED, __MEMORY_SCOPE_DEVICE);
  }
}

// out[i] = (sqrt(x), fma(x, x, 1), fabs(-x), floor(x * 2.5)) for double x = i + 0.25.
__gpu_kernel void math(double *out, uint32_t n) {
  uint32_t i = __gpu_block_id_x() * __gpu_num_threads_x() + __gpu_thread_id_x();
  if (i < n) {
    double x = (double)i + 0.25;
    out[4 * i + 0] = __builtin_sqrt(x);
    out[4 * i + 1] = __builtin_fma(x, x, 1.0);
    out[4 * i + 2] = __builtin_fabs(-x);
    out[4 * i + 3] = __builtin_floor(x * 2.5);
  }
}
