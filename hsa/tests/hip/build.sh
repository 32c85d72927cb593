#!/usr/bin/env bash
# Build the HIP test programs into OUT_DIR with Debian's hipcc (HIP 5.2) for gfx90a, and the
# code object hip_module loads (module_kernels.hsaco, hipcc --genco), and the programs calling
# Debian's rocSPARSE and rocRAND. Prints nothing on
# success; a missing tool is an error naming the Debian package.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: build.sh OUT_DIR}"
mkdir -p "$out"
command -v hipcc > /dev/null || { echo "build.sh: no hipcc: install hipcc" >&2; exit 1; }
[ -e /usr/lib/x86_64-linux-gnu/libamdhip64.so.5 ] || { echo "build.sh: no HIP runtime: install libamdhip64-5" >&2; exit 1; }
for program in hip_kernels hip_streams_events hip_module hip_printf hip_memcpy2d hip_assert; do
    hipcc --offload-arch=gfx90a -O2 -o "$out/$program" "$here/$program.hip"
done
hipcc --offload-arch=gfx90a -O2 --genco -o "$out/module_kernels.hsaco" "$here/module_kernels.hip"
[ -f /usr/include/rocsparse/rocsparse.h ] || { echo "build.sh: no rocSPARSE: install librocsparse-dev" >&2; exit 1; }
[ -f /usr/include/rocrand/rocrand.h ] || { echo "build.sh: no rocRAND: install librocrand-dev" >&2; exit 1; }
hipcc --offload-arch=gfx90a -O2 -o "$out/rocsparse_csrmv" "$here/rocsparse_csrmv.cpp" -lrocsparse
hipcc --offload-arch=gfx90a -O2 -o "$out/rocrand_philox" "$here/rocrand_philox.cpp" -lrocrand
