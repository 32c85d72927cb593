#!/usr/bin/env bash
# HIP's host costs over both HSA runtimes in one run, on the simulated MI210 under the
# interposer: hip_bench (built here by Debian's hipcc) once over ROCr and once over aqueduct's
# libhsa-runtime64.so.1 (LD_LIBRARY_PATH), printed side by side as a Markdown table.
#
#   hsa/tests/hip/bench.sh [--release] [hip_bench arguments: launches round-trips MiB copies]
#
# Builds the interposer and the HSA library with cargo (debug unless --release), each run
# bounded by `timeout` (600 s).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
profile=debug cargo_flag=()
if [ "${1:-}" = --release ]; then profile=release cargo_flag=(--release); shift; fi
out="$root/target/$profile/hip-bench"
mkdir -p "$out/lib"
command -v hipcc > /dev/null || { echo "bench.sh: no hipcc: install hipcc" >&2; exit 1; }
hipcc --offload-arch=gfx90a -O2 -o "$out/hip_bench" "$here/hip_bench.hip"
(cd "$root" && cargo build -q "${cargo_flag[@]}" -p amdgpu-sim-preload -p aqueduct-hsa)
cp "$root/target/$profile/libhsa_runtime64.so" "$out/lib/libhsa-runtime64.so.1"
ln -sf libhsa-runtime64.so.1 "$out/lib/libhsa-runtime64.so"
preload="$root/target/$profile/libamdgpu_sim_preload.so"
run() {
    env -u LD_LIBRARY_PATH LD_PRELOAD="$preload" AQUEDUCT_BACKEND=hw "$@" \
        timeout 600 "$out/hip_bench" "${args[@]}"
}
args=("$@")
rocr="$(run)"
ours="$(run LD_LIBRARY_PATH="$out/lib")"
grep -q "mapped: .*libhsa-runtime64.so.1.5.0" <<< "$rocr" || { echo "ROCr was not mapped" >&2; exit 1; }
grep -q "mapped: $out/lib/libhsa-runtime64.so.1" <<< "$ours" || { echo "ours was not mapped" >&2; exit 1; }
if grep -q "libhsakmt" <<< "$ours"; then echo "libhsakmt mapped over ours" >&2; exit 1; fi
echo "| measure ($profile) | ROCr 5.2 | aqueduct |"
echo "|---|---|---|"
paste <(grep -v -e "^mapped:" -e "hip_bench: ok" <<< "$rocr") \
      <(grep -v -e "^mapped:" -e "hip_bench: ok" <<< "$ours") |
    awk -F'\t' '{ split($1, a, " "); split($2, b, " "); printf "| %s (%s) | %s | %s |\n", a[1], a[3], a[2], b[2] }'
