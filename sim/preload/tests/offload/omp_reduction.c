// OpenMP target offload client for the simulator: a target data region that keeps arrays on
// the GPU while the host changes its copy and sends it with `target update to`, a kernel
// writing a device-only array fetched with `target update from`, and a sum reduction on the
// GPU; ROCr's default copy engines. Prints "omp_reduction: ok <n>" and exits 0 when every
// value is right.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  if (omp_get_num_devices() < 1) {
    fprintf(stderr, "omp_reduction: no offload device\n");
    return 2;
  }
  long* a = malloc(sizeof(long) * n);
  long* b = malloc(sizeof(long) * n);
  for (int i = 0; i < n; i++) {
    a[i] = i;
    b[i] = -1;
  }
  long sum = 0, sum_before = 0;
  int on_host = 1;
#pragma omp target data map(to : a[0:n]) map(alloc : b[0:n])
  {
    // The device sees the mapped a (0..n-1) until the host sends its change.
#pragma omp target teams distribute parallel for reduction(+ : sum_before) map(tofrom : on_host)
    for (int i = 0; i < n; i++) {
      if (i == 0) on_host = omp_is_initial_device();
      sum_before += a[i];
    }
    for (int i = 0; i < n; i++) a[i] = 2 * (long)i + 1;  // host only, until the update
#pragma omp target update to(a[0:n])
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) b[i] = 3 * a[i];
    // b was only allocated on the device: the host sees it after `update from`.
#pragma omp target update from(b[0:n])
#pragma omp target teams distribute parallel for reduction(+ : sum)
    for (int i = 0; i < n; i++) sum += b[i] - a[i];
  }
  int bad = 0;
  for (int i = 0; i < n; i++) {
    long want = 3 * (2 * (long)i + 1);
    if (b[i] != want) {
      if (bad < 5) fprintf(stderr, "b[%d] = %ld, want %ld\n", i, b[i], want);
      bad++;
    }
  }
  long n_ = n;
  long want_before = n_ * (n_ - 1) / 2;
  long want_sum = 2 * n_ * n_;  // sum of 2 * (2i + 1)
  free(a);
  free(b);
  if (on_host) {
    fprintf(stderr, "omp_reduction: the target region ran on the host\n");
    return 1;
  }
  if (bad || sum != want_sum || sum_before != want_before) {
    fprintf(stderr, "omp_reduction: %d wrong elements, sums %ld %ld, want %ld %ld\n", bad,
            sum_before, sum, want_before, want_sum);
    return 1;
  }
  printf("omp_reduction: ok %d\n", n);
  return 0;
}
