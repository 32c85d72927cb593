#!/usr/bin/env bash
# tests/kernels/verify.sh -- check the committed code objects with the LLVM
# oracles (llvm-readelf, llvm-objdump, clang-offload-bundler). Read-only.
#
#   tests/kernels/verify.sh        check everything under bin/, exit 1 on failure
#
# Per code object bin/<target>/<name>.co<V>:
#   * llvm-readelf-19 -h -s -r --notes succeeds;
#   * ELF64, OS/ABI AMDGPU_HSA, ET_DYN, EM_AMDGPU, ABI version 2/3/4 for V4/V5/V6;
#   * e_flags decode to <target> (llvm-readelf-19, or llvm-readelf-22 for the
#     targets LLVM 19 does not know: gfx950, gfx9-4-generic) and the metadata's
#     amdhsa.target names the same processor;
#   * kernel_code_properties.ENABLE_WAVEFRONT_SIZE32 matches .wavefront_size,
#     and llvm-objdump-22 decodes every kernel descriptor (see the LLVM 19
#     gfx10+ SGPR-granule exception below);
#   * llvm-objdump -d --mcpu=<target> disassembles every byte of .text
#     (no "<unknown>"); LLVM 19 for the targets it knows, LLVM 22 otherwise.
# Then: instruction classes per kernel in the gfx90a (and gfx942) corpus,
# relocation / symbol facts the loader tests rely on, and the fixtures.
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BIN="$HERE/bin"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

llvm19_knows() {
    case "$1" in gfx950 | gfx9-4-generic) return 1 ;; *) return 0 ;; esac
}

# Number of kernel descriptors in $1 with ENABLE_WAVEFRONT_SIZE32 set. The
# .kd symbols live in .rodata; their file offset is derived from the section
# header, then kernel_code_properties (u16 at KD offset 56) is read with od.
kd_wave32_count() {
    local f=$1 addr off v props n=0
    read -r addr off < <(llvm-readobj-19 --sections "$f" |
        awk '/Name: \.rodata /{s=1} s && /Address:/{a=$2} s && /Offset:/{print a, $2; exit}')
    while read -r v; do
        props=$(od -An -tu2 -j $((0x$v - addr + off + 56)) -N2 "$f" | tr -d ' ')
        (((props >> 10) & 1)) && n=$((n + 1))
    done < <(llvm-readelf-19 -s "$f" | awk '$8 ~ /\.kd$/ {print $2}' | sort -u)
    echo "$n"
}

# ------------------------------------------------------- every object ----
# One object's checks: prints a FAIL line per problem, and QUIRK for the known LLVM 19
# descriptor quirk below. Objects are checked two at a time (each check is a few LLVM
# processes; the 2-core CI machine spent over two minutes here one object at a time).
check_object() {
    local f=$1 rel target ver out want_abi flags rd od nk nw kd32 want32 kderr dis
    echo CHECKED
    rel=${f#"$BIN"/}
    target=${rel%%/*}
    ver=${rel##*.co}
    if ! out=$(llvm-readelf-19 -h -s -r --notes "$f" 2>&1); then
        fail "$rel: llvm-readelf-19 failed"
        return
    fi
    want_abi=$((ver - 2))
    grep -q 'Class: *ELF64' <<<"$out" || fail "$rel: not ELF64"
    grep -q 'OS/ABI: *AMDGPU - HSA' <<<"$out" || fail "$rel: OS/ABI is not AMDGPU_HSA"
    grep -q 'Type: *DYN' <<<"$out" || fail "$rel: not ET_DYN"
    grep -q 'Machine: *EM_AMDGPU' <<<"$out" || fail "$rel: not EM_AMDGPU"
    grep -q "ABI Version: *$want_abi\$" <<<"$out" || fail "$rel: ABI version is not $want_abi"
    if llvm19_knows "$target"; then
        flags=$(grep 'Flags:' <<<"$out")
        rd=llvm-readelf-19 od=llvm-objdump-19
    else
        flags=$(llvm-readelf-22 -h "$f" | grep 'Flags:')
        rd=llvm-readelf-22 od=llvm-objdump-22
    fi
    grep -q ", $target\\(,\\|\$\\)" <<<"$flags" || fail "$rel: e_flags '$flags' do not decode to $target ($rd)"
    case "$target" in
    *-generic) grep -q 'generic_v1' <<<"$flags" || fail "$rel: generic object without generic_v1" ;;
    esac
    grep -q "amdhsa.target: *amdgcn-amd-amdhsa--$target\$" <<<"$out" ||
        fail "$rel: metadata amdhsa.target is not amdgcn-amd-amdhsa--$target"
    # Wave size: kernel_code_properties bit 10 (ENABLE_WAVEFRONT_SIZE32, KD
    # byte 56) must agree with the metadata's .wavefront_size.
    nk=$(grep -c '^  - \.' <<<"$out" || true)
    nw=$(grep -c '\.wavefront_size: *32' <<<"$out" || true)
    kd32=$(kd_wave32_count "$f")
    case "$target/$rel" in
    gfx9*) want32=0 ;;
    *.w64.co[0-9]) want32=0 ;; # built with -mwavefrontsize64
    *) want32=$nk ;;
    esac
    [[ $nw == "$want32" && $kd32 == "$want32" ]] ||
        fail "$rel: wave32 kernels: metadata $nw, descriptors $kd32, expected $want32 of $nk"
    # Kernel descriptors decode with llvm-objdump-22. Known exception: LLVM 19
    # fills COMPUTE_PGM_RSRC1.GRANULATED_WAVEFRONT_SGPR_COUNT on gfx10+, where
    # the field is reserved, and the decoder rejects that.
    kderr=$(llvm-objdump-22 -D -j .rodata --mcpu="$target" "$f" 2>&1 | grep 'error decoding' || true)
    if [[ -n $kderr ]]; then
        if [[ $ver == 6 || $target == gfx9* ]] || grep -qv 'GRANULATED_WAVEFRONT_SGPR_COUNT reserved bits' <<<"$kderr"; then
            fail "$rel: kernel descriptor does not decode: $kderr"
        else
            echo QUIRK
        fi
    fi
    if ! dis=$("$od" -d --mcpu="$target" "$f" 2>&1); then
        fail "$rel: $od -d failed"
    elif grep -q '<unknown>' <<<"$dis"; then
        fail "$rel: $od found undecodable bytes"
    fi
}
export BIN
export -f check_object fail llvm19_knows kd_wave32_count
results=$(find "$BIN" -name '*.co[456]' | sort |
    xargs -P "$(nproc)" -n 8 bash -c 'set -uo pipefail; fails=0
        for f; do check_object "$f" || echo "FAIL: $f: its checks stopped early"; done' _ ||
    true)
count=$(find "$BIN" -name '*.co[456]' | wc -l)
# Every object must have been reached: a worker that died would otherwise pass unseen.
checked=$(grep -c '^CHECKED$' <<<"$results" || true)
[[ $checked == "$count" ]] || fail "only $checked of $count code objects were checked"
kd_sgpr_quirk=$(grep -c '^QUIRK$' <<<"$results" || true)
while IFS= read -r line; do
    [[ $line == FAIL:* ]] || continue
    echo "$line"
    fails=$((fails + 1))
done <<<"$results"
echo "verify.sh: checked headers, notes, kernel descriptors and disassembly of $count code objects"
echo "verify.sh: ($kd_sgpr_quirk clang-19 gfx11/12 objects carry the reserved SGPR-granule bits)"

# ------------------------------------------------- instruction classes ----
# kernel : extended regex that must match its gfx90a V5 disassembly
# (a "|" inside the regex separates alternatives; every ';'-separated item
# must match).
CLASSES_GFX90A='
f16_packed:v_pk_fma_f16;v_pk_add_f16;v_pk_mul_f16;v_pk_min_f16;v_pk_max_f16;v_pk_add_u16;v_pk_mul_lo_u16;v_pk_lshlrev_b16
cross_lane:row_shr:1;row_shl:1;quad_perm:\[3,2,1,0\];row_ror:4;row_mirror;ds_bpermute_b32;ds_swizzle_b32;v_readlane_b32;v_readfirstlane_b32;v_mbcnt_lo_u32_b32;v_mbcnt_hi_u32_b32
f64_ops:v_add_f64;v_mul_f64;v_fma_f64;v_div_scale_f64;v_div_fmas_f64;v_div_fixup_f64;v_rsq_f64;v_floor_f64|v_fract_f64;v_trunc_f64;v_rndne_f64;v_cvt_f64_i32;v_cvt_i32_f64;v_cvt_f32_f64;v_cvt_f64_f32;v_min_f64;v_max_f64
f32_ops:v_div_scale_f32;v_div_fmas_f32;v_div_fixup_f32;v_fma_f32|v_fmac_f32;v_sqrt_f32;v_min_f32;v_max_f32;v_floor_f32;v_ceil_f32;v_trunc_f32;v_rndne_f32;v_cvt_i32_f32;v_cvt_u32_f32;v_cvt_f32_i32;v_cvt_f32_u32;v_cvt_f16_f32;v_cvt_f32_f16;v_cmp_.*_f32;v_bfi_b32
f32_math:v_rcp_f32;v_rsq_f32;v_sqrt_f32;v_exp_f32;v_log_f32;v_sin_f32;v_cos_f32;v_fract_f32;v_ldexp_f32;v_frexp_mant_f32;v_frexp_exp_i32_f32
int32_ops:v_mul_lo_u32;v_mul_hi_i32;v_mul_hi_u32;v_rcp_iflag_f32;v_bcnt_u32_b32;v_ffbh_u32;v_ffbl_b32;v_bfe_u32;v_bfe_i32;v_alignbit_b32;v_bfrev_b32;v_perm_b32;v_min_i32;v_max_i32;v_min_u32;v_max_u32;v_ashrrev_i32;v_lshrrev_b32;v_lshlrev_b32
int64_ops:v_mad_u64_u32;v_mad_i64_i32;v_add_co_u32;v_addc_co_u32;v_sub_co_u32;v_subb_co_u32;v_lshlrev_b64;v_ashrrev_i64;v_lshrrev_b64;v_bcnt_u32_b32;v_ffbh_u32;v_perm_b32;v_cmp_.*_i64;v_cmp_.*_u64
atomics_global:global_atomic_add ;global_atomic_sub;global_atomic_smin ;global_atomic_smax ;global_atomic_umin;global_atomic_umax ;global_atomic_and;global_atomic_or ;global_atomic_xor;global_atomic_swap ;global_atomic_cmpswap ;global_atomic_inc;global_atomic_add_x2;global_atomic_smin_x2;global_atomic_smax_x2;global_atomic_umax_x2;global_atomic_swap_x2;global_atomic_cmpswap_x2;global_atomic_or_x2
atomic_counter:global_atomic_add;v_mbcnt_lo_u32_b32
atomics_lds:ds_add_u32|ds_add_rtn_u32;ds_min_u32|ds_min_rtn_u32;ds_max_u32|ds_max_rtn_u32;ds_and_b32;ds_or_b32;ds_xor_b32;ds_cmpst_rtn_b32;s_barrier
atomic_fadd:global_atomic_add_f32;global_atomic_add_f64;ds_add_f32|ds_add_rtn_f32
reduce_lds:ds_write|ds_read;s_barrier
lds_scan:ds_write|ds_read;s_barrier
lds_transpose:ds_write|ds_read;s_barrier;s_load
dynamic_lds:ds_write|ds_read;s_barrier
private_array:buffer_store_dword.*offen|scratch_store;buffer_load_dword.*offen|scratch_load
spill:buffer_store_dword|scratch_store;buffer_load_dword|scratch_load
stack_string:v_add_u32_e32 v[0-9]+, -1,;buffer_load_ubyte.*offen offset:1;buffer_store_byte.*offen;flat_load_ubyte
device_call:s_swappc_b64;s_setpc_b64;s_getpc_b64;flat_load_dwordx4;buffer_load_dword.*offen;buffer_store_dword
indirect_call:s_swappc_b64;v_readfirstlane_b32;s_setpc_b64
divergence:s_and_saveexec_b64;s_cbranch_execz;s_cbranch_scc[01]|s_cselect
loops:s_cbranch_execnz|s_cbranch_vccnz|s_andn2_b64 exec;s_or_b64 exec
linked_list:global_load_dwordx2;s_cbranch_execnz|s_cbranch_vccnz|s_andn2_b64 exec
timing:s_memtime;s_memrealtime;s_sleep
preload:s_trap 2
illegal_insn:\.long 0xbe80ff00
'
check_classes() {
    local target=$1 file_ver=$2 spec=$3 line k pats p dis
    while IFS= read -r line; do
        [[ -z $line ]] && continue
        k=${line%%:*}
        pats=${line#*:}
        dis=$(llvm-objdump-19 -d --mcpu="$target" "$BIN/$target/$k.co$file_ver")
        IFS=';' read -r -a arr <<<"$pats"
        for p in "${arr[@]}"; do
            grep -qE -- "$p" <<<"$dis" || fail "$target/$k.co$file_ver: no instruction matching /$p/"
        done
    done <<<"$spec"
}
check_classes gfx90a 5 "$CLASSES_GFX90A"
# gfx942: architected flat scratch instead of MUBUF scratch, and 64-bit VALU helpers.
check_classes gfx942 5 '
private_array:scratch_store;scratch_load
spill:scratch_store;scratch_load
stack_string:scratch_load_ubyte;scratch_store_byte;flat_load_ubyte
vector_add:v_lshl_add_u64
'
echo "verify.sh: instruction classes checked"

# ------------------------------------------------ loader-facing facts ----
need() { # file, description, command... (command output must be non-empty)
    local f=$1 d=$2
    shift 2
    [[ -n $("$@" 2>/dev/null) ]] || fail "$f: $d"
}
for v in 5 6; do
    g=$BIN/gfx90a
    need "global_ptr.co$v" "8 R_AMDGPU_RELATIVE64" \
        bash -c "llvm-readelf-19 -r '$g/global_ptr.co$v' | grep -c R_AMDGPU_RELATIVE64 | grep -x 8"
    need "indirect_call.co$v" "4 R_AMDGPU_RELATIVE64 for the function table" \
        bash -c "llvm-readelf-19 -r '$g/indirect_call.co$v' | grep -c R_AMDGPU_RELATIVE64 | grep -x 4"
    need "indirect_call.co$v" "uses_dynamic_stack" \
        bash -c "llvm-readelf-19 --notes '$g/indirect_call.co$v' | grep 'uses_dynamic_stack: *true'"
    need "extern_sym.co$v" "ABS64 against undefined aq_external_var + 8" \
        bash -c "llvm-readelf-19 -r '$g/extern_sym.co$v' | grep -E 'R_AMDGPU_ABS64 .* aq_external_var \\+ 8'"
    need "extern_sym.co$v" "undefined aq_external_var in .dynsym" \
        bash -c "llvm-readelf-19 --dyn-syms '$g/extern_sym.co$v' | grep -E 'NOTYPE +GLOBAL +DEFAULT +UND aq_external_var'"
    need "bss.co$v" "a NOBITS .bss" \
        bash -c "llvm-readelf-19 -S '$g/bss.co$v' | grep -E '\\.bss +NOBITS'"
    need "bss.co$v" "exported bss_counters" \
        bash -c "llvm-readelf-19 --dyn-syms '$g/bss.co$v' | grep -E '4096 OBJECT +GLOBAL +PROTECTED .* bss_counters'"
    need "dynamic_lds.co$v" "dynamic_shared_pointer argument" \
        bash -c "llvm-readelf-19 --notes '$g/dynamic_lds.co$v' | grep dynamic_shared_pointer"
    need "multi_kernel.co$v" "4 kernel descriptors" \
        bash -c "llvm-readelf-19 --dyn-syms '$g/multi_kernel.co$v' | grep -c '\\.kd\$' | grep -x 4"
    need "preload.co$v" "kernarg preload length > 0" \
        bash -c "llvm-objdump-19 -D -j .rodata --mcpu=gfx90a '$g/preload.co$v' | grep -E 'kernarg_preload_length [1-9]'"
    need "spill.co$v" "vgpr_spill_count > 0" \
        bash -c "llvm-readelf-19 --notes '$g/spill.co$v' | grep -E 'vgpr_spill_count: *[1-9]'"
done
echo "verify.sh: relocation and symbol facts checked"

# ---------------------------------------------------------- fixtures ----
F=$BIN/fixtures
W=$(mktemp -d "${TMPDIR:-/tmp}/aq-verify.XXXXXX")
trap 'rm -rf "$W"' EXIT
[[ $(head -c 24 "$F/vector_add.hipfb") == __CLANG_OFFLOAD_BUNDLE__ ]] || fail "vector_add.hipfb: bad magic"
[[ $(head -c 4 "$F/vector_add.ccob2.hipfb") == CCOB ]] || fail "vector_add.ccob2.hipfb: bad magic"
[[ $(head -c 4 "$F/vector_add.ccob3.hipfb") == CCOB ]] || fail "vector_add.ccob3.hipfb: bad magic"
[[ $(od -An -tu2 -j4 -N2 "$F/vector_add.ccob2.hipfb" | tr -d ' ') == 2 ]] || fail "ccob2: CCOB version is not 2"
[[ $(od -An -tu2 -j4 -N2 "$F/vector_add.ccob3.hipfb" | tr -d ' ') == 3 ]] || fail "ccob3: CCOB version is not 3"
for fb in vector_add.hipfb vector_add.ccob2.hipfb vector_add.ccob3.hipfb; do
    bundler=clang-offload-bundler-22
    for t in gfx90a gfx942; do
        $bundler -type=o -unbundle -targets="hipv4-amdgcn-amd-amdhsa--$t" \
            -input="$F/$fb" -output="$W/$t.co" 2>/dev/null || fail "$fb: unbundle $t failed"
        cmp -s "$W/$t.co" "$BIN/$t/vector_add.co5" || fail "$fb: $t entry differs from $t/vector_add.co5"
    done
done
want_ids="hipv4-amdgcn-amd-amdhsa--gfx90a hipv4-amdgcn-amd-amdhsa--gfx942 host-x86_64-unknown-linux-gnu- "
for fb in vector_add.hipfb vector_add.ccob2.hipfb vector_add.ccob3.hipfb; do
    ids=$(clang-offload-bundler-22 -list -type=o -input="$F/$fb" | sort | tr '\n' ' ')
    [[ $ids == "$want_ids" ]] || fail "$fb: entry IDs are '$ids'"
done
# CCOB payload = the uncompressed bundle (header: 24 bytes in v2, 32 in v3).
if command -v zstd >/dev/null 2>&1; then
    tail -c +25 "$F/vector_add.ccob2.hipfb" | zstd -dcq | cmp -s - "$F/vector_add.hipfb" ||
        fail "vector_add.ccob2.hipfb: payload is not vector_add.hipfb"
    tail -c +33 "$F/vector_add.ccob3.hipfb" | zstd -dcq | cmp -s - "$F/vector_add.hipfb" ||
        fail "vector_add.ccob3.hipfb: payload is not vector_add.hipfb"
else
    fail "zstd is not installed: the CCOB payloads are unchecked (apt-get install zstd)"
fi
need hip_fatbin_host.o ".hip_fatbin section" \
    bash -c "llvm-readelf-19 -S '$F/hip_fatbin_host.o' | grep -E '\\.hip_fatbin +PROGBITS'"
need hip_fatbin_host.o ".hipFatBinSegment section" \
    bash -c "llvm-readelf-19 -S '$F/hip_fatbin_host.o' | grep -E '\\.hipFatBinSegment +PROGBITS'"
need hip_fatbin_host.so "ET_DYN x86-64" \
    bash -c "llvm-readelf-19 -h '$F/hip_fatbin_host.so' | grep -E 'Type: *DYN'"
llvm-objcopy-19 -O binary --only-section=.hip_fatbin "$F/hip_fatbin_host.o" "$W/sec.bin"
cmp -s "$W/sec.bin" "$F/vector_add.hipfb" || fail "hip_fatbin_host.o: .hip_fatbin is not vector_add.hipfb"
echo "verify.sh: fixtures checked"

if [[ $fails -ne 0 ]]; then
    echo "verify.sh: $fails failure(s)"
    exit 1
fi
echo "verify.sh: all checks passed"
