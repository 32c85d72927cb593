#!/usr/bin/env bash
# Build the HSA runtime's C clients into OUT_DIR with the system C compiler against ROCr's
# headers (libhsa-runtime-dev): they link to libhsa-runtime64.so.1 by name, and the tests
# point LD_LIBRARY_PATH at aqueduct's. Prints nothing on success.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: build.sh OUT_DIR}"
mkdir -p "$out"
cc="${CC:-cc}"
command -v "$cc" > /dev/null || { echo "build.sh: no C compiler ($cc): install gcc" >&2; exit 1; }
[ -f /usr/include/hsa/hsa.h ] || { echo "build.sh: no HSA headers: install libhsa-runtime-dev" >&2; exit 1; }
flags=(-std=gnu11 -O1 -g -Wall -Wextra -Werror)
"$cc" "${flags[@]}" -o "$out/loader_client" "$here/loader_client.c" -lhsa-runtime64
"$cc" "${flags[@]}" -o "$out/hsa_vector_add" "$here/../../../sim/preload/tests/c/hsa_vector_add.c" -lhsa-runtime64
"$cc" "${flags[@]}" -o "$out/reload_client" "$here/reload_client.c" -ldl
"$cc" "${flags[@]}" -o "$out/loader_extension" "$here/loader_extension.c" -lhsa-runtime64
