#!/usr/bin/env bash
# sim/tests/shader_data/build-gfx11-ops.sh -- rebuild gfx11_ops/gfx1100/gfx11_ops.co from
# gfx11_ops.cl (the compiled WMMA and DPP8 kernels of sim/tests/shader_gfx11_ops.rs).
#
#   build-gfx11-ops.sh           rebuild in place
#   build-gfx11-ops.sh --check   rebuild into a temporary directory; exit 1 if the
#                                committed code object differs
#
# Needs clang-19 and lld-19 (Debian packages). Flags as tests/kernels/build.sh: no debug
# info, no ident, relative paths, so the output depends only on the source and the
# compiler build.
set -euo pipefail
export LC_ALL=C TZ=UTC
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$HERE"
out="$HERE"
if [ "${1:-}" = "--check" ]; then
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out/gfx11_ops/gfx1100"
clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx1100 -nogpulib -O2 \
    -ffp-contract=off -fno-ident -ffile-prefix-map="$HERE"=. -Wall -Werror \
    -c -o "$out/gfx11_ops/gfx1100/gfx11_ops.o" gfx11_ops.cl
ld.lld-19 -shared -o "$out/gfx11_ops/gfx1100/gfx11_ops.co" "$out/gfx11_ops/gfx1100/gfx11_ops.o"
rm "$out/gfx11_ops/gfx1100/gfx11_ops.o"
if [ "$out" != "$HERE" ]; then
    cmp -s "$out/gfx11_ops/gfx1100/gfx11_ops.co" "$HERE/gfx11_ops/gfx1100/gfx11_ops.co" || {
        echo "differs: gfx11_ops/gfx1100/gfx11_ops.co" >&2
        exit 1
    }
fi
