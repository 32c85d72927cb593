#!/usr/bin/env bash
# sim/tests/shader_data/build-mfma.sh -- rebuild mfma/<target>/mfma.co from mfma.cl
# (the matrix-instruction kernels of sim/tests/shader_kernels_mfma.rs) and its
# llvm-objdump-19 disassembly mfma.co.dis (the decoder oracle's golden,
# sim/tests/shader_decoder_oracle.rs).
#
#   build-mfma.sh           rebuild in place
#   build-mfma.sh --check   rebuild into a temporary directory; exit 1 if a
#                           committed code object differs
#
# Needs clang-19, lld-19 and llvm-19 (Debian packages). Flags as tests/kernels/build.sh:
# no debug info, no ident, relative paths, so the output depends only on the
# source and the compiler build.
set -euo pipefail
export LC_ALL=C TZ=UTC
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$HERE"
out="$HERE"
if [ "${1:-}" = "--check" ]; then
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
for target in gfx90a gfx942; do
    mkdir -p "$out/mfma/$target"
    clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu="$target" -nogpulib -O2 \
        -ffp-contract=off -fno-ident -ffile-prefix-map="$HERE"=. -Wall -Werror \
        -c -o "$out/mfma/$target/mfma.o" mfma.cl
    ld.lld-19 -shared -o "$out/mfma/$target/mfma.co" "$out/mfma/$target/mfma.o"
    rm "$out/mfma/$target/mfma.o"
    (cd "$out/mfma/$target" && llvm-objdump-19 -d --mcpu="$target" mfma.co) >"$out/mfma/$target/mfma.co.dis"
done
if [ "$out" != "$HERE" ]; then
    status=0
    for target in gfx90a gfx942; do
        for f in mfma.co mfma.co.dis; do
            cmp -s "$out/mfma/$target/$f" "$HERE/mfma/$target/$f" || {
                echo "differs: mfma/$target/$f" >&2
                status=1
            }
        done
    done
    exit $status
fi
