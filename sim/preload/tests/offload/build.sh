#!/usr/bin/env bash
# Build the GPU-offload clients into OUT_DIR: hip_streams and hip_pinned_events with Debian's
# hipcc (HIP 5.2), omp_offload and omp_reduction with clang-19's OpenMP offloading
# (libomptarget 19, ROCm device libraries), all for gfx90a. Prints nothing on success; a missing tool is an error naming the Debian package.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: build.sh OUT_DIR}"
mkdir -p "$out"
command -v hipcc > /dev/null || { echo "build.sh: no hipcc: install hipcc" >&2; exit 1; }
for client in hip_streams hip_pinned_events; do
    hipcc --offload-arch=gfx90a -O2 -o "$out/$client" "$here/$client.hip"
done
command -v clang-19 > /dev/null || { echo "build.sh: no clang-19: install clang-19" >&2; exit 1; }
bitcode=/usr/lib/x86_64-linux-gnu/amdgcn/bitcode
[ -f "$bitcode/ockl.bc" ] || { echo "build.sh: no ROCm device libraries: install rocm-device-libs" >&2; exit 1; }
[ -f /usr/lib/llvm-19/lib/libomptarget.so ] || { echo "build.sh: no libomptarget: install libomp-19-dev" >&2; exit 1; }
for client in omp_offload omp_reduction; do
    clang-19 -O2 -fopenmp --offload-arch=gfx90a --rocm-device-lib-path="$bitcode" \
        -o "$out/$client" "$here/$client.c"
done
