#!/usr/bin/env bash
# Issue 27's soak: run the interposer's ROCr comparison N times, each with a 60 s limit, beside
# six CPU hogs (busy loops), and say how many finished:
#
#   scripts/hang-soak.sh N          (default 100)
#
#   LD_PRELOAD=target/release/libamdgpu_sim_preload.so AQUEDUCT_BACKEND=hw \
#       aqueduct bench --iterations 10 --json --rocr --comparison-only
#
# on a release build. A run that does not finish in 60 s is killed (its stderr is kept under
# target/hang-soak/); a run that finishes but had to restart a stalled ROCr child (ROCr 5.2's
# own lost wake-up in hsa_queue_destroy, see tools/src/bench/rocr.rs) is counted apart. Prints
# "K of N finished" last; exits 1 unless every run finished.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

runs="${1:-100}"
limit=60
hogs=6

cargo build -q --release -p amdgpu-sim-preload -p aqueduct-tools
library="$root/target/release/libamdgpu_sim_preload.so"
aqueduct="$root/target/release/aqueduct"
logs="$root/target/hang-soak"
rm -rf "$logs"
mkdir -p "$logs"

hog_pids=()
stop_hogs() {
    # Only the loops this script started, by their ids.
    [ ${#hog_pids[@]} -eq 0 ] || kill "${hog_pids[@]}" 2>/dev/null || true
}
trap stop_hogs EXIT
for _ in $(seq "$hogs"); do
    bash -c 'while :; do :; done' &
    hog_pids+=($!)
done

finished=0
restarted=0
for run in $(seq "$runs"); do
    out="$logs/$run.json"
    err="$logs/$run.stderr"
    started=$SECONDS
    if (LD_PRELOAD="$library" AQUEDUCT_BACKEND=hw exec timeout -s KILL "$limit" \
        "$aqueduct" bench --iterations 10 --json --rocr --comparison-only >"$out" 2>"$err"); then
        finished=$((finished + 1))
        if grep -q "starting it again" "$err"; then
            restarted=$((restarted + 1))
            echo "run $run: finished in $((SECONDS - started))s, a stalled ROCr child restarted"
        else
            echo "run $run: finished in $((SECONDS - started))s"
            rm -f "$out" "$err"
        fi
    else
        stalled=""
        grep -q "starting it again" "$err" && stalled=" (a stalled ROCr child was restarted)"
        echo "run $run: did not finish within ${limit}s$stalled; its last words: $(tail -n 1 "$err")"
    fi
done
echo "($restarted of the finished runs restarted a stalled ROCr child)"
echo "$finished of $runs finished"
[ "$finished" -eq "$runs" ]
