#!/usr/bin/env bash
# Build the offload clients of aqueduct's HSA runtime into OUT_DIR:
# - omp_suite: OpenMP target offload by clang-19 (-fopenmp --offload-arch=gfx90a, ROCm device
#   libraries), run by libomptarget 19;
# - ol_kernels.so (a gfx90a code object by clang-22 and ld.lld-22) and liboffload_client (a C
#   program that dlopen's Debian's liboffload 22 and runs those kernels).
# Prints nothing on success; a missing tool is an error naming the Debian package.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: build.sh OUT_DIR}"
mkdir -p "$out"
need() { command -v "$1" > /dev/null || { echo "build.sh: no $1: install $2" >&2; exit 1; }; }
need_file() { [ -e "$1" ] || { echo "build.sh: no $1: install $2" >&2; exit 1; }; }
need cc gcc
need clang-19 clang-19
need clang-22 clang-22
need ld.lld-22 lld-22
bitcode=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode
need_file "$bitcode/ocml.bc" rocm-device-libs
need_file /usr/lib/llvm-19/lib/libomptarget.so libomp-19-dev
need_file /usr/lib/llvm-22/include/offload/OffloadAPI.h liboffload-22-dev
need_file /usr/lib/llvm-22/lib/libLLVMOffload.so.22.1 liboffload-22

clang-19 -O2 -Wall -Wextra -Werror -fopenmp --offload-arch=gfx90a --rocm-device-lib-path="$bitcode" \
    -o "$out/omp_suite" "$here/omp_suite.c" -lm
clang-22 --target=amdgcn-amd-amdhsa -mcpu=gfx90a -nogpulib -ffreestanding -O2 -Wall -Wextra \
    -Werror -c "$here/ol_kernels.c" -o "$out/ol_kernels.o"
ld.lld-22 -shared "$out/ol_kernels.o" -o "$out/ol_kernels.so"
cc -std=gnu11 -O1 -g -Wall -Wextra -Werror -I/usr/lib/llvm-22/include \
    -o "$out/liboffload_client" "$here/liboffload_client.c" -ldl -lm
