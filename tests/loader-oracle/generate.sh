#!/usr/bin/env bash
# tests/loader-oracle/generate.sh -- record what the LLVM oracles say about the committed test
# kernels, so that the loader's conformance tests (loader/tests/conformance.rs) compare against
# them without LLVM at run time.
#
#   tests/loader-oracle/generate.sh          rewrite golden/ from tests/kernels/bin
#   tests/loader-oracle/generate.sh --check  regenerate into a temp dir; exit 1 on any drift
#
# Per code object tests/kernels/bin/<target>/<name>.co<V> it writes golden/<target>/<name>.co<V>:
#   *.readelf  llvm-readelf-19 -h -d -s -r --dyn-syms --notes   (symbols, relocations, metadata)
#   *.kd       llvm-objdump -D -j .rodata --mcpu=<target>       (kernel descriptors as .amdhsa_*)
# llvm-objdump-19 for the targets LLVM 19 knows, llvm-objdump-22 for gfx950 and gfx9-4-generic
# (as tests/kernels/verify.sh does). Per fixture (bundles, host ELF): *.bundle, the entry ids
# clang-offload-bundler-22 --list prints. Paths in the outputs are relative. built/ holds objects
# made here for cases the corpus lacks (see below), with their readelf output.
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN=$(cd "$HERE/../kernels/bin" && pwd)

check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*) echo "generate.sh: unknown argument $1" >&2; exit 2 ;;
esac

# A missing oracle must stop the script, never end up as text in a golden file.
missing=""
for t in llvm-readelf-19 llvm-objdump-19 llvm-objdump-22 llvm-objcopy-19 clang-offload-bundler-22 \
         clang-19 ld.lld-19; do
    command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
done
if [ -n "$missing" ]; then
    echo "generate.sh: missing tools:$missing" >&2
    echo "  apt-get install -y clang-19 lld-19 llvm-19 llvm-22 clang-tools-22" >&2
    exit 2
fi

# Everything is written to a temporary directory first: --check compares it with golden/,
# a plain run replaces golden/ only once every oracle has succeeded.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="$work/golden"
tmp="$work/scratch"
mkdir -p "$out" "$tmp"

llvm19_knows() {
    case "$1" in gfx950 | gfx9-4-generic) return 1 ;; *) return 0 ;; esac
}

for f in "$BIN"/*/*.co[0-9]; do
    rel=${f#"$BIN"/}
    target=${rel%%/*}
    mkdir -p "$out/$target"
    (cd "$BIN" && llvm-readelf-19 -h -d -s -r --dyn-syms --notes "$rel") >"$out/$rel.readelf"
    if llvm19_knows "$target"; then od=llvm-objdump-19; else od=llvm-objdump-22; fi
    # The first lines name the file; keep only the disassembly.
    (cd "$BIN" && "$od" -D -j .rodata --mcpu="$target" "$rel") \
        | grep -v "file format" >"$out/$rel.kd"
done
for f in "$BIN"/fixtures/*; do
    rel=${f#"$BIN"/}
    mkdir -p "$out/fixtures"
    input=$f
    # A host ELF: the bundler lists what its .hip_fatbin section holds.
    if llvm-objcopy-19 --dump-section=.hip_fatbin="$tmp/fatbin" "$f" "$tmp/stripped" 2>/dev/null; then
        input=$tmp/fatbin
    fi
    clang-offload-bundler-22 --list --type=o --input="$input" >"$out/$rel.bundle"
done

# Objects the kernel corpus lacks, built here from its sources:
#   built/global_ptr.emit-relocs.co5  ld.lld --emit-relocs: static .rela.* sections (sh_info != 0)
#                                     next to .rela.dyn, which a loader must ignore.
mkdir -p "$out/built"
(cd "$HERE/../kernels" && clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -nogpulib -O2 \
    -ffp-contract=off -cl-fp32-correctly-rounded-divide-sqrt -fno-ident \
    -ffile-prefix-map="$(pwd)"=. -Isrc -mcpu=gfx90a -c src/global_ptr.cl -o "$out/built/global_ptr.o")
ld.lld-19 -shared --emit-relocs "$out/built/global_ptr.o" -o "$out/built/global_ptr.emit-relocs.co5"
rm "$out/built/global_ptr.o"
(cd "$out/built" && llvm-readelf-19 -h -d -s -r --dyn-syms --notes global_ptr.emit-relocs.co5) \
    >"$out/built/global_ptr.emit-relocs.co5.readelf"

# Objects made by the loader's own ELF writer (loader/tests/synthetic.rs keeps them in synth/,
# byte for byte): what llvm-readelf reads in them, so no object in the tests is checked by our
# own reader alone.
mkdir -p "$out/synth"
for f in "$HERE"/synth/*.co; do
    name=$(basename "$f")
    (cd "$HERE/synth" && llvm-readelf-19 -h -l -S -d -s -r --dyn-syms --notes "$name") \
        >"$out/synth/$name.readelf"
done

if [ $check = 1 ]; then
    if ! diff -r -q "$HERE/golden" "$out" >/dev/null; then
        echo "DRIFT: tests/loader-oracle/golden differs from what the oracles say now:"
        diff -r -q "$HERE/golden" "$out" | sed 's/^/  /' | head -20
        echo "rerun tests/loader-oracle/generate.sh and commit golden/"
        exit 1
    fi
    echo "tests/loader-oracle: golden files match"
else
    rm -rf "$HERE/golden"
    mv "$out" "$HERE/golden"
    echo "tests/loader-oracle: wrote $(find "$HERE/golden" -type f | wc -l) files to golden/"
fi
