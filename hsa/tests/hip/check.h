// What every HIP test program shares: CHECK(call) prints the failing call with HIP's error
// string and returns 1 from main.
#pragma once
#include <hip/hip_runtime.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                                  \
  do {                                                                               \
    hipError_t e_ = (call);                                                          \
    if (e_ != hipSuccess) {                                                          \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
              hipGetErrorString(e_));                                                \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

// Print the HSA runtime and thunk libraries mapped into this process ("mapped: <path>" per
// library, from /proc/self/maps), so the test can see which runtime HIP ran on.
static inline void print_mapped_runtime(void) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (!maps) return;
  char line[4096], last[4096] = "";
  while (fgets(line, sizeof line, maps)) {
    char* path = strchr(line, '/');
    if (!path || (!strstr(path, "libhsa-runtime64") && !strstr(path, "libhsakmt"))) continue;
    path[strcspn(path, "\n")] = 0;
    if (strcmp(path, last) == 0) continue;
    strcpy(last, path);
    printf("mapped: %s\n", path);
  }
  fclose(maps);
}
