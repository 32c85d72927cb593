// OpenMP target offload client for the simulator: map data to the GPU (host -> device
// copies), run a target region, map results back (device -> host), with ROCr's default copy
// engines. Prints "omp_offload: ok <n>" and exits 0 when every element is right.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100000;
  if (omp_get_num_devices() < 1) {
    fprintf(stderr, "omp_offload: no offload device\n");
    return 2;
  }
  double* x = malloc(sizeof(double) * n);
  double* y = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) {
    x[i] = i;
    y[i] = 2.0 * i;
  }
  int on_host = 1;
#pragma omp target data map(to : x[0:n]) map(tofrom : y[0:n])
  {
#pragma omp target teams distribute parallel for map(tofrom : on_host)
    for (int i = 0; i < n; i++) {
      if (i == 0) on_host = omp_is_initial_device();
      y[i] = 3.0 * x[i] + y[i];
    }
#pragma omp target update from(y[0:n])
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++) y[i] += 1.0;
  }
  int bad = 0;
  for (int i = 0; i < n; i++) {
    double want = 5.0 * i + 1.0;
    if (y[i] != want) {
      if (bad < 5) fprintf(stderr, "element %d: %f, want %f\n", i, y[i], want);
      bad++;
    }
  }
  free(x);
  free(y);
  if (on_host) {
    fprintf(stderr, "omp_offload: the target region ran on the host\n");
    return 1;
  }
  if (bad) {
    fprintf(stderr, "omp_offload: %d wrong elements\n", bad);
    return 1;
  }
  printf("omp_offload: ok %d\n", n);
  return 0;
}
