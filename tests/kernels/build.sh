#!/usr/bin/env bash
# tests/kernels/build.sh -- rebuild every test code object from src/ into bin/.
#
#   tests/kernels/build.sh            rebuild bin/ in place (bin/ is replaced)
#   tests/kernels/build.sh --check    rebuild into a temporary directory and
#                                     compare with the committed bin/; exit 1
#                                     and list the files that differ
#   tests/kernels/build.sh --jobs N   parallelism (default: nproc)
#
# Needs only Debian bookworm packages (no network): clang-19 lld-19 llvm-19
# clang-22 lld-22 llvm-22, plus coreutils/sed/find/xargs. Every tool is called
# by its versioned name. See README.md for the layout and the matrix.
#
# Reproducibility: no -g, -fno-ident, -ffile-prefix-map, relative paths only,
# a fixed locale, and ld.lld's defaults (no build-id, no timestamps). The
# outputs depend only on the sources and on the exact compiler builds; the
# tool versions are recorded in bin/MANIFEST, so a compiler upgrade shows up
# as drift in --check.
set -euo pipefail
export LC_ALL=C
export TZ=UTC
umask 022

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SELF="$HERE/build.sh"

# ---------------------------------------------------------------- matrix ----
# Targets that get every kernel.
CORE_TARGETS="gfx90a gfx942"
# Loader-test targets: every kernel that compiles for them.
EXTRA_V5_TARGETS="gfx1100 gfx1201"        # clang-19 knows these
EXTRA_V6_TARGETS="gfx950 gfx1100 gfx1201" # gfx950 needs clang >= 20
# Generic targets (code object V6 only; clang-19 lacks gfx9-4-generic).
GENERIC_TARGETS="gfx9-generic gfx9-4-generic gfx11-generic gfx12-generic"
GENERIC_KERNELS="empty vector_add saxpy reduce_lds global_ptr multi_kernel"
# A few code object V4 objects (clang-19, gfx90a).
V4_KERNELS="empty vector_add saxpy reduce_lds global_ptr dispatch_ptr multi_kernel bss"
# Assembly kernels and where they are built.
ASM_KERNELS="tiny illegal_insn"
# Wave64 builds of a wave32-default target (clang -mwavefrontsize64, llvm-mc
# -mattr=+wavefrontsize64): every kernel built for it, V5 and V6, named <name>.w64.co<V>
# beside the wave32 <name>.co<V>.
WAVE64_TARGETS="gfx1100"
# Kernels with their own target list (see kernel_targets).
PRELOAD_V5_TARGETS="gfx90a gfx942"
PRELOAD_V6_TARGETS="gfx90a gfx942 gfx950"

CL_FLAGS_COMMON=(-x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -nogpulib -O2
    -ffp-contract=off -cl-fp32-correctly-rounded-divide-sqrt
    -fno-ident -ffile-prefix-map="$HERE"=. -Isrc -Wall)
# clang-22 emits, next to each OpenCL kernel, a callable copy named
# __clang_ocl_kern_imp_<kernel>; the backend then warns "local memory global
# used by non-kernel function" for kernels with __local variables. That
# warning has no -W group, so clang-22 runs without -Werror and only that
# warning is filtered; clang-19 runs with -Werror.
KNOWN_CLANG22_WARNING='local memory global used by non-kernel function'

# Extra compiler flags for one kernel file.
extra_flags() {
    case "$1" in
    atomic_fadd) echo "-munsafe-fp-atomics" ;;
    preload) echo "-mllvm -amdgpu-kernarg-preload-count=3" ;;
    *) echo "" ;;
    esac
}

# Does this assembler target need .amdhsa_accum_offset (gfx90a-class)?
accum_prefix() {
    case "$1" in
    gfx90a | gfx942 | gfx950 | gfx9-4-generic) echo "" ;;
    *) echo "//" ;;
    esac
}

wave_size() {
    case "$1" in
    gfx9*) echo 64 ;;
    *) echo 32 ;;
    esac
}

# ------------------------------------------------------------ one job ----
# build.sh --job <out_root> <work_root> <kind> <name> <target> <version>
#   kind: cl | asm, or cl-w64 | asm-w64 (wave64 on a wave32-default target)
# Writes <out_root>/<target>/<name>.co<version> (-w64: <name>.w64.co<version>) and a
# one-line manifest fragment <work_root>/meta/<target>__<name>.co<version>.
run_job() {
    local out_root=$1 work=$2 kind=$3 name=$4 target=$5 ver=$6
    local cc ld mc wave=""
    if [[ $ver == 6 ]]; then
        cc=clang-22 ld=ld.lld-22 mc=llvm-mc-22
    else
        cc=clang-19 ld=ld.lld-19 mc=llvm-mc-19
    fi
    if [[ $kind == *-w64 ]]; then
        kind=${kind%-w64} wave=-mwavefrontsize64
    fi
    local rel="$target/$name${wave:+.w64}.co$ver"
    local out="$out_root/$rel"
    local obj="$work/obj/$rel.o"
    mkdir -p "$(dirname "$out")" "$(dirname "$obj")" "$work/meta"
    local desc
    cd "$HERE"
    if [[ $kind == cl ]]; then
        local flags=("${CL_FLAGS_COMMON[@]}" -mcpu="$target" -mcode-object-version="$ver")
        local extra werror=""
        [[ $cc == clang-19 ]] && werror=" -Werror"
        extra=$(extra_flags "$name")${wave:+ $wave}
        extra=${extra# }
        # shellcheck disable=SC2206
        flags+=($extra)
        if [[ $cc == clang-19 ]]; then
            "$cc" "${flags[@]}" -Werror -c "src/$name.cl" -o "$obj"
        else
            local log="$obj.log"
            "$cc" "${flags[@]}" -c "src/$name.cl" -o "$obj" 2>"$log" || { cat "$log" >&2; return 1; }
            # Print anything that is not the known warning block.
            if grep -vE "$KNOWN_CLANG22_WARNING|^ +[0-9]+ \| |^ +\| +\^|^[0-9]+ warnings? generated" "$log" >&2; then
                echo "build.sh: unexpected clang-22 diagnostics for $name ($target)" >&2
                return 1
            fi
        fi
        desc="$cc <cl> -mcpu=$target -mcode-object-version=$ver${extra:+ $extra}$werror -c src/$name.cl; $ld -shared"
    else
        local pre="$work/obj/$rel.s"
        sed -e "s/@TARGET@/$target/g" -e "s/@CO_VERSION@/$ver/g" \
            -e "s/@MD_MINOR@/$([[ $ver == 4 ]] && echo 1 || echo 2)/g" \
            -e "s/@WAVE@/$([[ -n $wave ]] && echo 64 || wave_size "$target")/g" \
            -e "s|@ACCUM@|$(accum_prefix "$target")|g" "src/$name.s" >"$pre"
        # llvm-mc defaults the kernel descriptor to wave64 even on gfx11/12;
        # ask for wave32 there so the KD matches the metadata (and clang).
        local mattr=""
        [[ $(wave_size "$target") == 32 ]] && mattr="-mattr=+wavefrontsize32"
        [[ -n $wave ]] && mattr="-mattr=+wavefrontsize64"
        "$mc" -triple=amdgcn-amd-amdhsa -mcpu="$target" $mattr -filetype=obj "$pre" -o "$obj"
        desc="sed (@TARGET@=$target @CO_VERSION@=$ver${wave:+ @WAVE@=64}) src/$name.s | $mc -triple=amdgcn-amd-amdhsa -mcpu=$target${mattr:+ $mattr} -filetype=obj; $ld -shared"
    fi
    "$ld" -shared "$obj" -o "$out"
    printf '%s\t%s\n' "$rel" "$desc" >"$work/meta/${rel//\//__}"
}

if [[ ${1:-} == --job ]]; then
    shift
    trap 'echo "build.sh: FAILED: $3 $4 for $5 (code object V$6)" >&2' ERR
    run_job "$@"
    exit 0
fi

# ------------------------------------------------------------- driver ----
MODE=build
JOBS=$(nproc 2>/dev/null || echo 2)
while [[ $# -gt 0 ]]; do
    case "$1" in
    --check) MODE=check ;;
    --jobs) JOBS=$2; shift ;;
    -h | --help) sed -n '2,20p' "$SELF"; exit 0 ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

TOOLS="clang-19 ld.lld-19 llvm-mc-19 llvm-objdump-19 clang-22 ld.lld-22 llvm-mc-22
       clang-offload-bundler-19 clang-offload-bundler-22 sha256sum xargs"
missing=""
for t in $TOOLS; do command -v "$t" >/dev/null 2>&1 || missing="$missing $t"; done
if [[ -n $missing ]]; then
    echo "build.sh: missing tools:$missing" >&2
    echo "  apt-get install -y clang-19 lld-19 llvm-19 clang-22 lld-22 llvm-22" >&2
    exit 2
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/aq-kernels.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
OUT="$WORK/bin"
mkdir -p "$OUT" "$WORK/obj" "$WORK/meta"

cd "$HERE"
CL_KERNELS=$(cd src && ls -1 ./*.cl | sed 's|^\./||; s|\.cl$||' | sort)

# Which (target, version) pairs does a .cl kernel get?
kernel_targets() {
    local k=$1 t
    case "$k" in
    implicit_args_v4) echo "gfx90a 4"; return ;;
    preload)
        for t in $PRELOAD_V5_TARGETS; do echo "$t 5"; done
        for t in $PRELOAD_V6_TARGETS; do echo "$t 6"; done
        return ;;
    esac
    for t in $CORE_TARGETS $EXTRA_V5_TARGETS; do echo "$t 5"; done
    for t in $CORE_TARGETS $EXTRA_V6_TARGETS; do echo "$t 6"; done
    case " $V4_KERNELS " in *" $k "*) echo "gfx90a 4" ;; esac
    case " $GENERIC_KERNELS " in *" $k "*) for t in $GENERIC_TARGETS; do echo "$t 6"; done ;; esac
}

# Which (target, version) pairs get a wave64 build of a .cl kernel: the wave32-default
# targets of WAVE64_TARGETS it is built for.
kernel_targets_w64() {
    kernel_targets "$1" | while read -r t v; do
        case " $WAVE64_TARGETS " in *" $t "*) echo "$t $v" ;; esac
    done
}

{
    for k in $CL_KERNELS; do
        kernel_targets "$k" | while read -r t v; do echo "$OUT $WORK cl $k $t $v"; done
        kernel_targets_w64 "$k" | while read -r t v; do echo "$OUT $WORK cl-w64 $k $t $v"; done
    done
    for k in $ASM_KERNELS; do
        for t in $CORE_TARGETS $EXTRA_V5_TARGETS; do echo "$OUT $WORK asm $k $t 5"; done
        for t in $CORE_TARGETS $EXTRA_V6_TARGETS; do echo "$OUT $WORK asm $k $t 6"; done
        for t in $WAVE64_TARGETS; do
            for v in 5 6; do echo "$OUT $WORK asm-w64 $k $t $v"; done
        done
    done
} >"$WORK/jobs"

echo "build.sh: $(wc -l <"$WORK/jobs") code objects, $JOBS jobs in parallel" >&2
if ! xargs -P "$JOBS" -L 1 "$SELF" --job <"$WORK/jobs"; then
    echo "build.sh: a compile or link step failed (see above)" >&2
    exit 1
fi

# ----------------------------------------------------------- fixtures ----
# Clang offload bundles (the HIP "fat binary" format) and a host ELF holding
# one. Inputs are the gfx90a and gfx942 V5 builds of vector_add.
FIX="$OUT/fixtures"
mkdir -p "$FIX"
# The host entry is given without a trailing "-": clang-offload-bundler-19
# turns "host-x86_64-unknown-linux-gnu-" into the doubled ID
# "host-x86_64-unknown-linux-gnu-host-x86_64-unknown-linux-gnu-"; without it
# both bundler versions write the canonical "host-x86_64-unknown-linux-gnu-".
BUNDLE_TARGETS="host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a,hipv4-amdgcn-amd-amdhsa--gfx942"
BUNDLE_INPUTS=(-input=/dev/null -input="$OUT/gfx90a/vector_add.co5" -input="$OUT/gfx942/vector_add.co5")
fixture_meta() { printf '%s\t%s\n' "fixtures/$1" "$2" >"$WORK/meta/fixtures__$1"; }

clang-offload-bundler-19 -type=o -bundle-align=4096 -targets="$BUNDLE_TARGETS" \
    "${BUNDLE_INPUTS[@]}" -output="$FIX/vector_add.hipfb"
fixture_meta vector_add.hipfb "clang-offload-bundler-19 -type=o -bundle-align=4096 -targets=$BUNDLE_TARGETS -input=/dev/null -input=gfx90a/vector_add.co5 -input=gfx942/vector_add.co5"

clang-offload-bundler-19 -type=o -bundle-align=4096 -compress -compression-level=9 -targets="$BUNDLE_TARGETS" \
    "${BUNDLE_INPUTS[@]}" -output="$FIX/vector_add.ccob2.hipfb" 2>/dev/null
fixture_meta vector_add.ccob2.hipfb "clang-offload-bundler-19 -type=o -bundle-align=4096 -compress -compression-level=9 -targets=$BUNDLE_TARGETS (same inputs)"

clang-offload-bundler-22 -type=o -bundle-align=4096 -compress -compression-level=9 -targets="$BUNDLE_TARGETS" \
    "${BUNDLE_INPUTS[@]}" -output="$FIX/vector_add.ccob3.hipfb" 2>/dev/null
fixture_meta vector_add.ccob3.hipfb "clang-offload-bundler-22 -type=o -bundle-align=4096 -compress -compression-level=9 -targets=$BUNDLE_TARGETS (same inputs)"

# Host x86-64 object with the bundle in .hip_fatbin and a HIP-style
# __hip_fatbin_wrapper in .hipFatBinSegment; also linked into a shared object.
HOSTW="$WORK/host"
mkdir -p "$HOSTW"
cp "$FIX/vector_add.hipfb" "$HOSTW/vector_add.hipfb"
cp src/host/hip_fatbin_host.c "$HOSTW/hip_fatbin_host.c"
HOST_FLAGS=(-target x86_64-unknown-linux-gnu -O2 -fPIC -fno-ident -fno-asynchronous-unwind-tables -Wall -Werror)
(cd "$HOSTW" && clang-19 "${HOST_FLAGS[@]}" -c hip_fatbin_host.c -o hip_fatbin_host.o &&
    ld.lld-19 -shared hip_fatbin_host.o -o hip_fatbin_host.so)
cp "$HOSTW/hip_fatbin_host.o" "$HOSTW/hip_fatbin_host.so" "$FIX/"
fixture_meta hip_fatbin_host.o "clang-19 ${HOST_FLAGS[*]} -c src/host/hip_fatbin_host.c (.incbin of vector_add.hipfb)"
fixture_meta hip_fatbin_host.so "ld.lld-19 -shared hip_fatbin_host.o"

# ------------------------------------------------------- GPU programs ----
# Whole GPU programs for aqueduct::program (tests/programs.rs, `aqueduct exec`): C with
# their own start code and RPC client (src/programs/*.h), written from LLVM libc's
# protocol. One image per target, bin/programs/<target>/<name> (no extension, like a host
# executable; outside bin/<target>/ so the kernel corpus and the decoder oracle skip them).
PROGRAM_TARGETS="gfx90a gfx942"
PROGRAM_FLAGS=(-x c -std=c11 -target amdgcn-amd-amdhsa -nogpulib -ffreestanding -O2
    -fno-ident -ffile-prefix-map="$HERE"=. -Isrc/programs -Wall -Werror)
for t in $PROGRAM_TARGETS; do
    mkdir -p "$OUT/programs/$t" "$WORK/obj/programs/$t"
    for src in src/programs/*.c; do
        name=$(basename "$src" .c)
        obj="$WORK/obj/programs/$t/$name.o"
        clang-19 "${PROGRAM_FLAGS[@]}" -mcpu="$t" -c "$src" -o "$obj"
        ld.lld-19 -shared "$obj" -o "$OUT/programs/$t/$name"
        printf '%s\t%s\n' "programs/$t/$name" \
            "clang-19 -x c -std=c11 -ffreestanding -Isrc/programs -mcpu=$t (code object V5) -c $src; ld.lld-19 -shared" \
            >"$WORK/meta/programs__${t}__$name"
    done
done

# -------------------------------------------------------- disassembly ----
# The shader-core simulator's decoder oracle: llvm-objdump-19's disassembly of every code
# object of the simulated targets, committed next to it as <object>.dis and read by
# sim/tests/shader_decoder_oracle.rs and sim/tests/gfx11_decoder_oracle.rs (so those tests
# need no LLVM). Wave64 builds of gfx11 are disassembled as wave64 (`vcc`, not `vcc_lo`).
for t in $CORE_TARGETS gfx1100; do
    for co in "$OUT/$t"/*.co[0-9]; do
        rel="$t/$(basename "$co")"
        mattr=""
        [[ $rel == *.w64.co[0-9] ]] && mattr="--mattr=+wavefrontsize64"
        (cd "$OUT" && llvm-objdump-19 -d --mcpu="$t" ${mattr:+"$mattr"} "$rel") >"$co.dis"
        printf '%s\t%s\n' "$rel.dis" "llvm-objdump-19 -d --mcpu=$t${mattr:+ $mattr} $rel" >"$WORK/meta/${rel//\//__}.dis"
    done
done

# ----------------------------------------------------------- manifest ----
{
    echo "# tests/kernels/bin/MANIFEST -- generated by build.sh; do not edit."
    echo "# Tools:"
    for t in clang-19 clang-22; do echo "#   $t: $("$t" --version | head -n1)"; done
    for t in ld.lld-19 ld.lld-22; do echo "#   $t: $("$t" --version | head -n1)"; done
    for t in llvm-mc-19 llvm-mc-22 clang-offload-bundler-19 clang-offload-bundler-22; do
        echo "#   $t: $("$t" --version | grep -m1 -i 'version' | sed 's/^ *//')"
    done
    echo "# <cl> = ${CL_FLAGS_COMMON[*]/#-ffile-prefix-map=*/-ffile-prefix-map=<dir>=.}"
    echo "# Columns: sha256, path relative to bin/, how it was built."
    (cd "$OUT" && find . -type f ! -name MANIFEST | sed 's|^\./||' | sort) | while read -r f; do
        sum=$(sha256sum "$OUT/$f" | cut -d' ' -f1)
        how=$(cut -f2- "$WORK/meta/${f//\//__}")
        printf '%s  %s\t%s\n' "$sum" "$f" "$how"
    done
} >"$OUT/MANIFEST"

# ------------------------------------------------------ install / check ----
if [[ $MODE == build ]]; then
    rm -rf "$HERE/bin.new"
    cp -a "$OUT" "$HERE/bin.new"
    rm -rf "$HERE/bin"
    mv "$HERE/bin.new" "$HERE/bin"
    echo "build.sh: wrote $(find "$HERE/bin" -type f | wc -l) files to tests/kernels/bin" >&2
    exit 0
fi

status=0
if [[ ! -d $HERE/bin ]]; then
    echo "build.sh --check: tests/kernels/bin does not exist" >&2
    exit 1
fi
(cd "$OUT" && find . -type f | sort) >"$WORK/new.list"
(cd "$HERE/bin" && find . -type f | sort) >"$WORK/old.list"
while read -r f; do
    echo "DRIFT missing from committed bin/: ${f#./}"
    status=1
done < <(comm -23 "$WORK/new.list" "$WORK/old.list")
while read -r f; do
    echo "DRIFT stale file in committed bin/ (no longer built): ${f#./}"
    status=1
done < <(comm -13 "$WORK/new.list" "$WORK/old.list")
while read -r f; do
    if ! cmp -s "$OUT/$f" "$HERE/bin/$f"; then
        echo "DRIFT differs: ${f#./}"
        status=1
    fi
done < <(comm -12 "$WORK/new.list" "$WORK/old.list")
if [[ $status == 0 ]]; then
    echo "build.sh --check: bin/ is up to date ($(wc -l <"$WORK/new.list") files)" >&2
else
    echo "build.sh --check: bin/ differs from a fresh build; run tests/kernels/build.sh and commit" >&2
fi
exit $status
