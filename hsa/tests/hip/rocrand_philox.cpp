// Debian's rocRAND (AMD's own kernels) over HIP: a Philox-4x32-10 generator makes 2^20
// uniform floats twice with the same seed (the same numbers both times), once with another
// seed (different numbers); the mean and variance are within tolerance of 1/2 and 1/12.
// Prints "rocrand_philox: ok <mean> <variance> <first values>" (the test compares that line
// across runtimes: same seed, same numbers).
#include <math.h>
#include <rocrand/rocrand.h>
#include <stdlib.h>
#include <vector>

#include "check.h"

#define RAND(call)                                                                   \
  do {                                                                               \
    rocrand_status s_ = (call);                                                      \
    if (s_ != ROCRAND_STATUS_SUCCESS) {                                              \
      fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #call, (int)s_); \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

static int generate(unsigned long long seed, float* device, size_t n, std::vector<float>& out) {
  rocrand_generator generator;
  RAND(rocrand_create_generator(&generator, ROCRAND_RNG_PSEUDO_PHILOX4_32_10));
  RAND(rocrand_set_seed(generator, seed));
  RAND(rocrand_generate_uniform(generator, device, n));
  CHECK(hipDeviceSynchronize());
  RAND(rocrand_destroy_generator(generator));
  out.resize(n);
  CHECK(hipMemcpy(out.data(), device, n * sizeof(float), hipMemcpyDeviceToHost));
  return 0;
}

int main() {
  const size_t n = 1 << 20;
  float* device;
  CHECK(hipMalloc((void**)&device, n * sizeof(float)));
  std::vector<float> first, again, other;
  if (generate(20261128, device, n, first) || generate(20261128, device, n, again) ||
      generate(7, device, n, other)) {
    return 1;
  }
  double sum = 0, squares = 0;
  size_t same_as_other = 0;
  for (size_t i = 0; i < n; i++) {
    if (first[i] != again[i]) {
      fprintf(stderr, "element %zu: %.9g then %.9g with the same seed\n", i, first[i], again[i]);
      return 1;
    }
    if (!(first[i] > 0.0f && first[i] <= 1.0f)) {
      fprintf(stderr, "element %zu: %.9g is outside (0, 1]\n", i, first[i]);
      return 1;
    }
    same_as_other += first[i] == other[i];
    sum += first[i];
    squares += (double)first[i] * first[i];
  }
  double mean = sum / n, variance = squares / n - mean * mean;
  if (fabs(mean - 0.5) > 0.002 || fabs(variance - 1.0 / 12) > 0.002 || same_as_other > n / 1000) {
    fprintf(stderr, "mean %f variance %f, %zu equal to another seed's\n", mean, variance,
            same_as_other);
    return 1;
  }
  CHECK(hipFree(device));
  print_mapped_runtime();
  printf("rocrand_philox: ok %.6f %.6f %.9g %.9g %.9g %.9g\n", mean, variance, first[0], first[1],
         first[n / 2], first[n - 1]);
  return 0;
}
