#!/usr/bin/env bash
# aqueduct's and ROCr's figures for the same paths on the same simulated GPU, one after the
# other: `aqueduct bench` over the real Linux backend and sim/preload/tests/c/hsa_bench (ROCr),
# both under the LD_PRELOAD interposer. Figures on a loaded 2-core machine are noisy: compare
# medians from runs made together, never against older runs.
#
#   sim/preload/compare-rocr.sh [ITERATIONS]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
iterations="${1:-100}"
cargo build -q -p amdgpu-sim-preload -p aqueduct-tools
clients="$root/target/debug/preload-clients"
sim/preload/tests/c/build.sh "$clients"
echo "== aqueduct (kfd::Linux through libc) under the interposer"
sim/preload/run-under.sh env AQUEDUCT_BACKEND=hw target/debug/aqueduct bench --iterations "$iterations"
echo
echo "== ROCr 5.2 (libhsa-runtime64, libhsakmt) under the interposer"
sim/preload/run-under.sh "$clients/hsa_bench" tests/kernels/bin/gfx90a/empty.co5 "$iterations"
