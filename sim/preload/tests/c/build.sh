#!/usr/bin/env bash
# Build the C clients into OUT_DIR (default: target/preload-clients) with the system C
# compiler: kfd_client (the kernel uapi header only), hsa_vector_add (Debian's ROCr,
# libhsa-runtime-dev) and hsa_reload (ROCr loaded and unloaded with dlopen). Prints nothing on
# success; a missing compiler or header is an error naming the Debian package. (ROCr's figures
# come from `aqueduct bench --rocr`.)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../../../../target/preload-clients}"
mkdir -p "$out/include"
cc="${CC:-cc}"
command -v "$cc" > /dev/null || { echo "build.sh: no C compiler ($cc): install gcc" >&2; exit 1; }
# Debian's <linux/kfd_ioctl.h> includes <drm/drm.h>, which Debian ships in libdrm-dev as
# /usr/include/libdrm/drm.h.
[ -f /usr/include/libdrm/drm.h ] || { echo "build.sh: no libdrm headers: install libdrm-dev" >&2; exit 1; }
ln -sfn /usr/include/libdrm "$out/include/drm"
flags=(-std=gnu11 -O1 -g -Wall -Wextra -Werror -I"$out/include" -I/usr/include/libdrm)
"$cc" "${flags[@]}" -o "$out/kfd_client" "$here/kfd_client.c"
[ -f /usr/include/hsa/hsa.h ] || { echo "build.sh: no ROCr headers: install libhsa-runtime-dev" >&2; exit 1; }
"$cc" "${flags[@]}" -o "$out/hsa_vector_add" "$here/hsa_vector_add.c" -lhsa-runtime64
"$cc" "${flags[@]}" -o "$out/hsa_reload" "$here/hsa_reload.c" -ldl
