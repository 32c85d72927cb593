// HIP 5.2: pitched and rectangular copies. hipMemcpy2D host -> device from
// pinned memory, device -> device, device -> pinned host, device -> pageable host (malloc, at
// an odd offset: HIP locks or stages the program's own memory), hipMemcpy2DAsync on a stream,
// hipMemcpy3D between pitched device memory and pinned host memory, and a sub-rectangle at an
// offset; a kernel reads the pitched rows in between. Every byte is checked on the host.
// Device memory is hipMalloc'd with a pitch of our choosing: HIP 5.2's hipMallocPitch and
// hipMalloc3D size rows by the image extension's pitch alignment, and aqueduct's HSA library,
// like ROCr without its image library, serves no images.
// Prints "hip_memcpy2d: ok <width> <height> <pitch>" and exits 0.
#include <stdlib.h>

#include "check.h"

__global__ void add_row_index(unsigned char* m, size_t pitch, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y;
  if (x < width && y < height) m[y * pitch + x] += (unsigned char)y;
}

static unsigned char pattern(int x, int y) { return (unsigned char)(x * 7 + y * 13 + 1); }

static int check_rows(const char* what, const unsigned char* got, size_t pitch, int width,
                      int height, int plus_row) {
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++) {
      unsigned char want = (unsigned char)(pattern(x, y) + (plus_row ? y : 0));
      if (got[y * pitch + x] != want) {
        fprintf(stderr, "%s: (%d, %d) = %d, want %d\n", what, x, y, got[y * pitch + x], want);
        return 1;
      }
    }
  return 0;
}

int main(int argc, char** argv) {
  int width = argc > 1 ? atoi(argv[1]) : 301;
  int height = argc > 2 ? atoi(argv[2]) : 67;
  size_t host_pitch = (size_t)width + 3;
  size_t bytes = host_pitch * height;
  unsigned char *pinned_in, *pinned_out, *dev, *dev2;
  size_t pitch = 0, pitch2 = 0;
  CHECK(hipHostMalloc((void**)&pinned_in, bytes, hipHostMallocDefault));
  CHECK(hipHostMalloc((void**)&pinned_out, bytes, hipHostMallocDefault));
  pitch = ((size_t)width + 255) / 256 * 256;
  pitch2 = pitch + 64;
  CHECK(hipMalloc((void**)&dev, pitch * height));
  CHECK(hipMalloc((void**)&dev2, pitch2 * height));
  for (int y = 0; y < height; y++)
    for (int x = 0; x < (int)host_pitch; x++) pinned_in[y * host_pitch + x] = pattern(x, y);

  // Host (pinned) -> device -> device -> host (pinned).
  CHECK(hipMemcpy2D(dev, pitch, pinned_in, host_pitch, width, height, hipMemcpyHostToDevice));
  CHECK(hipMemcpy2D(dev2, pitch2, dev, pitch, width, height, hipMemcpyDeviceToDevice));
  memset(pinned_out, 0, bytes);
  CHECK(hipMemcpy2D(pinned_out, host_pitch, dev2, pitch2, width, height, hipMemcpyDeviceToHost));
  if (check_rows("pinned round trip", pinned_out, host_pitch, width, height, 0)) return 1;

  // A kernel over the pitched rows, then device -> pageable host at an odd address.
  hipLaunchKernelGGL(add_row_index, dim3((width + 63) / 64, height), dim3(64), 0, 0, dev, pitch,
                     width, height);
  CHECK(hipGetLastError());
  unsigned char* pageable_block = (unsigned char*)malloc(bytes + 1);
  unsigned char* pageable = pageable_block + 1;
  memset(pageable, 0, bytes);
  CHECK(hipMemcpy2D(pageable, host_pitch, dev, pitch, width, height, hipMemcpyDeviceToHost));
  if (check_rows("device to pageable", pageable, host_pitch, width, height, 1)) return 1;

  // Pageable host -> device, then back through a stream into pinned memory.
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++) pageable[y * host_pitch + x] = pattern(x, y);
  CHECK(hipMemcpy2D(dev2, pitch2, pageable, host_pitch, width, height, hipMemcpyHostToDevice));
  hipStream_t stream;
  CHECK(hipStreamCreate(&stream));
  memset(pinned_out, 0, bytes);
  CHECK(hipMemcpy2DAsync(pinned_out, host_pitch, dev2, pitch2, width, height,
                         hipMemcpyDeviceToHost, stream));
  CHECK(hipStreamSynchronize(stream));
  if (check_rows("pageable upload, async download", pinned_out, host_pitch, width, height, 0))
    return 1;

  // A sub-rectangle: columns 5.., rows 3.. of dev2 into the corner of pinned_out.
  int sub_w = width - 5, sub_h = height - 3;
  memset(pinned_out, 0, bytes);
  CHECK(hipMemcpy2D(pinned_out, host_pitch, dev2 + 3 * pitch2 + 5, pitch2, sub_w, sub_h,
                    hipMemcpyDeviceToHost));
  for (int y = 0; y < sub_h; y++)
    for (int x = 0; x < sub_w; x++)
      if (pinned_out[y * host_pitch + x] != pattern(x + 5, y + 3)) {
        fprintf(stderr, "sub-rectangle: (%d, %d) = %d\n", x, y, pinned_out[y * host_pitch + x]);
        return 1;
      }

  // 3D: two slices of the pinned input into a pitched 3D allocation, and back.
  int depth = 2, rows = height / 2;
  hipPitchedPtr vol = make_hipPitchedPtr(NULL, pitch, width, rows);
  CHECK(hipMalloc(&vol.ptr, pitch * rows * depth));
  hipMemcpy3DParms up = {};
  up.srcPtr = make_hipPitchedPtr(pinned_in, host_pitch, width, rows);
  up.dstPtr = vol;
  up.extent = make_hipExtent(width, rows, depth);
  up.kind = hipMemcpyHostToDevice;
  CHECK(hipMemcpy3D(&up));
  memset(pinned_out, 0, bytes);
  hipMemcpy3DParms down = {};
  down.srcPtr = vol;
  down.dstPtr = make_hipPitchedPtr(pinned_out, host_pitch, width, rows);
  down.extent = make_hipExtent(width, rows, depth);
  down.kind = hipMemcpyDeviceToHost;
  CHECK(hipMemcpy3D(&down));
  if (check_rows("3D round trip", pinned_out, host_pitch, width, rows * depth, 0)) return 1;

  CHECK(hipFree(vol.ptr));
  CHECK(hipStreamDestroy(stream));
  free(pageable_block);
  CHECK(hipFree(dev));
  CHECK(hipFree(dev2));
  CHECK(hipHostFree(pinned_in));
  CHECK(hipHostFree(pinned_out));
  printf("hip_memcpy2d: ok %d %d %zu\n", width, height, pitch);
  print_mapped_runtime();
  return 0;
}
