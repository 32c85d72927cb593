#!/usr/bin/env bash
# Run a program on the simulated GPU through the LD_PRELOAD interposer:
#
#   sim/preload/run-under.sh PROGRAM [ARGS...]    any program (rocminfo, a C client, ...)
#   sim/preload/run-under.sh --hardware-tests     aqueduct's hardware-gated tests, over the
#                                                 real Linux backend, required to run (no skips),
#                                                 the dlopen handoff test (tests/dlopen_adopt.rs),
#                                                 the fault sweep (tests/fault_sweep_hw.rs),
#                                                 then the C clients, rocminfo and ROCr
#                                                 (sim/preload/tests/clients.rs), and the
#                                                 HSA runtime's clients (hsa/tests)
#
# The interposer is built first, without LD_PRELOAD: cargo and rustc must never run under it.
# AQUEDUCT_SIM_MACHINE picks the simulated machine (mi210 by default).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"

cargo build -q -p amdgpu-sim-preload
library="$root/target/debug/libamdgpu_sim_preload.so"

if [ "${1:-}" != "--hardware-tests" ]; then
    [ $# -gt 0 ] || { echo "usage: $0 PROGRAM [ARGS...] | --hardware-tests" >&2; exit 2; }
    LD_PRELOAD="$library${LD_PRELOAD:+:$LD_PRELOAD}" exec "$@"
fi

# The test executables cargo builds (the "Executable ... (path)" lines of --no-run).
executables() {
    cargo test "$@" --no-run 2>&1 | sed -n 's/^ *Executable .*(\(.*\))$/\1/p'
}
kfd_hardware="$(executables -p kfd --test hardware)"
launches="$(executables -p aqueduct --test hardware_launches)"
adopt="$(executables -p aqueduct --test dlopen_adopt)"
fault_sweep="$(executables -p aqueduct --test fault_sweep_hw)"
# The plugin that test loads and unloads; built here, without the interposer (the test's own
# build of it is then a no-op, and runs with LD_PRELOAD removed anyway).
cargo build -q -p aqueduct-dlopen-fixture

run() {
    local machine="$1" test="$2"
    shift 2
    echo "== under the interposer ($machine): $(basename "$test") $*"
    env LD_PRELOAD="$library" AQUEDUCT_BACKEND=hw AQUEDUCT_REQUIRE_HW=1 \
        AQUEDUCT_SIM_MACHINE="$machine" "$test" --test-threads=1 -q "$@"
}
# Peer mappings need two GPUs (one GPU is a skip, which AQUEDUCT_REQUIRE_HW fails): the
# four-GPU hive runs every test.
run mi210 "$kfd_hardware" --skip hardware_peer_mappings
run mi210-hive "$kfd_hardware"
run mi210 "$launches"
# A plugin embedding aqueduct, loaded and unloaded again and again: each fresh copy takes over
# the binding the unloaded one left in the (simulated) kernel, on one GPU and on four.
run mi210 "$adopt"
run mi210-hive "$adopt"
# Every seam call of the quickstart path failing in turn, over the real system-call path.
run mi210 "$fault_sweep"

# The README's quickstart over the real path.
cargo build -q --example quickstart
echo "== under the interposer (mi210): examples/quickstart"
quickstart="$(env LD_PRELOAD="$library" AQUEDUCT_BACKEND=hw target/debug/examples/quickstart 65536)"
echo "$quickstart"
grep -q "^device: /dev/kfd" <<< "$quickstart"
grep -q "every element checked" <<< "$quickstart"

# C clients, rocminfo and a ROCr dispatch. The test preloads the interposer into the programs
# it starts, never into cargo; required here, so a missing tool fails instead of skipping.
echo "== C clients, rocminfo and ROCr under the interposer"
AQUEDUCT_REQUIRE_HW=1 cargo test -q -p amdgpu-sim-preload --test clients

# aqueduct's HSA runtime (hsa/, libhsa-runtime64.so.1) under unmodified HSA clients: rocminfo
# compared with ROCr's, and C clients of the HSA API. The tests preload the interposer into
# the programs they start; required here, so a missing tool fails instead of skipping.
echo "== HSA clients on aqueduct's libhsa-runtime64.so.1 under the interposer"
AQUEDUCT_REQUIRE_HW=1 cargo test -q -p aqueduct-hsa
