#!/usr/bin/env bash
# src/blit/kernels/build.sh -- rebuild blit.hipfb, the driver's copy and fill
# kernels (blit.cl) for every target it ships code for, in one offload bundle.
#
#   build.sh           rebuild in place
#   build.sh --check   rebuild into a temporary directory; exit 1 if the
#                      committed blit.hipfb differs
#
# Needs clang-22, lld-22 and clang-tools-22 (clang-offload-bundler-22), Debian
# packages. Code object V6 for every target: the generic targets exist only in
# V6, and gfx950 needs clang >= 20. The concrete targets are the ones the
# simulator and the test corpus cover; the generic ones cover the other members
# of their families (the loader prefers a concrete match). Flags as
# tests/kernels/build.sh: no debug info, no ident, relative paths, so the
# output depends only on the source and the compiler build.
set -euo pipefail
export LC_ALL=C TZ=UTC
umask 022
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$HERE"
TARGETS="gfx90a gfx942 gfx950 gfx1100 gfx1201 gfx9-generic gfx9-4-generic gfx11-generic gfx12-generic"
out="$HERE"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ "${1:-}" = "--check" ] && out="$work"
ids="host-x86_64-unknown-linux-gnu"
inputs=(-input=/dev/null)
for target in $TARGETS; do
    clang-22 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu="$target" \
        -mcode-object-version=6 -nogpulib -O2 -fno-ident -ffile-prefix-map="$HERE"=. \
        -Wall -Werror -c -o "$work/$target.o" blit.cl
    ld.lld-22 -shared -o "$work/$target.co" "$work/$target.o"
    ids="$ids,hipv4-amdgcn-amd-amdhsa--$target"
    inputs+=(-input="$work/$target.co")
done
clang-offload-bundler-22 -type=o -bundle-align=4096 -targets="$ids" "${inputs[@]}" \
    -output="$out/blit.hipfb.new"
mv "$out/blit.hipfb.new" "$out/blit.hipfb"
if [ "$out" != "$HERE" ]; then
    cmp -s "$out/blit.hipfb" "$HERE/blit.hipfb" || {
        echo "differs: src/blit/kernels/blit.hipfb (rerun src/blit/kernels/build.sh)" >&2
        exit 1
    }
fi
