// HIP 5.2 module API: hipModuleLoadData of a code object (argv[1], built with --genco),
// hipModuleGetFunction, hipModuleGetGlobal (written with hipMemcpyHtoD), hipModuleLaunchKernel,
// hipModuleUnload; twice, with a different bias each round. Prints "hip_module: ok <rounds>".
#include <stdlib.h>

#include "check.h"

static char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long length = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* data = (char*)malloc(length);
  if (fread(data, 1, length, f) != (size_t)length) {
    fclose(f);
    return NULL;
  }
  fclose(f);
  *size = length;
  return data;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: hip_module CODE_OBJECT\n");
    return 2;
  }
  size_t size = 0;
  char* image = read_file(argv[1], &size);
  if (!image) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  const int n = 10000;
  int* host = (int*)malloc(n * sizeof(int));
  int* dev;
  CHECK(hipMalloc((void**)&dev, n * sizeof(int)));
  int rounds = 2;
  for (int round = 0; round < rounds; round++) {
    hipModule_t module;
    CHECK(hipModuleLoadData(&module, image));
    hipFunction_t function;
    CHECK(hipModuleGetFunction(&function, module, "add_bias"));
    hipDeviceptr_t global;
    size_t global_size = 0;
    CHECK(hipModuleGetGlobal(&global, &global_size, module, "bias"));
    if (global_size != sizeof(int)) {
      fprintf(stderr, "bias is %zu bytes\n", global_size);
      return 1;
    }
    int initial = 0;
    CHECK(hipMemcpyDtoH(&initial, global, sizeof(int)));
    if (initial != 7) {
      fprintf(stderr, "round %d: bias starts at %d, want 7\n", round, initial);
      return 1;
    }
    int bias = 100 * (round + 1);
    CHECK(hipMemcpyHtoD(global, &bias, sizeof(int)));
    for (int i = 0; i < n; i++) host[i] = i;
    CHECK(hipMemcpy(dev, host, n * sizeof(int), hipMemcpyHostToDevice));
    struct {
      int* v;
      int n;
    } args = {dev, n};
    size_t args_size = sizeof(args);
    void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                      &args_size, HIP_LAUNCH_PARAM_END};
    CHECK(hipModuleLaunchKernel(function, (n + 127) / 128, 1, 1, 128, 1, 1, 0, 0, NULL, config));
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(host, dev, n * sizeof(int), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
      if (host[i] != i * 3 + bias) {
        fprintf(stderr, "round %d element %d: %d, want %d\n", round, i, host[i], i * 3 + bias);
        return 1;
      }
    }
    CHECK(hipModuleUnload(module));
    printf("round %d: ok\n", round);
  }
  CHECK(hipFree(dev));
  printf("hip_module: ok %d\n", rounds);
  print_mapped_runtime();
  return 0;
}
