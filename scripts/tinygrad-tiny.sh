#!/usr/bin/env bash
# Issue 25: tinygrad's own bring-up suite (`test/test_tiny.py` from its source distribution)
# with DEV=AMD under the interposer on the simulated MI300X (gfx942), on tinygrad's AQL path
# (AMD_AQL=1) and its PM4 path (AMD_AQL=0), and on the simulated RX 7900 XTX (gfx1100, RDNA3:
# PM4 queues, wave32). tinygrad is pinned and installed from the
# Python package index into a virtual environment under target/ (made once, then reused).
# The simulated MI210 is not run: tinygrad refuses gfx90a itself ("Unsupported arch").
#
#   scripts/tinygrad-tiny.sh
#
# Then a matmul and one MNIST-sized training step (scripts/tinygrad_vs_cpu.py) on each queue
# kind must give tinygrad's CPU backend's numbers within float tolerance.
#
# Prints one line per queue kind and check (tests run, failures, errors, skips) and exits 1
# on any failure or error. Where the package index cannot be reached it says so loudly and exits 0:
# that is this machine's network, not the driver; every other step failing fails the run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

tinygrad=0.14.0
numpy=2.4.6
work="$root/target/tinygrad"
venv="$work/venv"
mkdir -p "$work"

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import tinygrad, numpy" 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    if ! "$venv/bin/pip" install -q "tinygrad==$tinygrad" "numpy==$numpy" >"$work/pip.log" 2>&1; then
        echo "tinygrad-tiny: NOT RUN: pip could not install tinygrad $tinygrad and numpy $numpy" \
             "(no route to the package index?):" >&2
        tail -n 3 "$work/pip.log" >&2
        rm -rf "$venv"
        exit 0
    fi
fi
if [ ! -f "$work/test/test_tiny.py" ]; then
    rm -rf "$work/sdist"
    if ! "$venv/bin/pip" download -q --no-deps --no-binary :all: -d "$work/sdist" \
        "tinygrad==$tinygrad" >"$work/pip.log" 2>&1; then
        echo "tinygrad-tiny: NOT RUN: pip could not download tinygrad $tinygrad's source" \
             "distribution:" >&2
        tail -n 3 "$work/pip.log" >&2
        exit 0
    fi
    mkdir -p "$work/test"
    tar -xzf "$work/sdist/tinygrad-$tinygrad.tar.gz" -C "$work/test" --strip-components=2 \
        "tinygrad-$tinygrad/test/test_tiny.py"
fi

# tinygrad's CPU side compiles with `clang`; Debian ships it as clang-19.
mkdir -p "$work/bin"
ln -sf "$(command -v clang-19)" "$work/bin/clang"

# Built without LD_PRELOAD: cargo must never run under the interposer.
cargo build -q -p amdgpu-sim-preload
preload="$root/target/debug/libamdgpu_sim_preload.so"

failed=0
simulated() {
    # tinygrad reaches libc's mmap through dlsym, which LD_PRELOAD does not cover: LIBC_PATH
    # points its ctypes at the interposer instead. Its compiler is Debian's LLVM 19.
    PATH="$work/bin:$PATH" AQUEDUCT_SIM_MACHINE=$machine AMDGPU_SIM_CONFIG=cus=8 DEV=AMD:LLVM \
        LLVM_PATH=/lib/x86_64-linux-gnu/libLLVM.so.19.1 LIBC_PATH="$preload" \
        LD_PRELOAD="$preload" timeout -s KILL 900 "$@"
}
(cd "$work" && PATH="$work/bin:$PATH" DEV=CPU timeout -s KILL 300 "$venv/bin/python" \
    "$root/scripts/tinygrad_vs_cpu.py" run cpu.npz >/dev/null)
# The MI300X on both queue kinds; the RX 7900 XTX (gfx1100) on PM4, the only kind tinygrad
# uses on RDNA3.
for run in "mi300x 1 MI300X" "mi300x 0 MI300X" "rx7900xtx 0 RX 7900 XTX"; do
    read -r machine aql name <<< "$run"
    kind=$([ "$aql" = 1 ] && echo "AQL" || echo "PM4")
    log="$work/test_tiny.$machine.aql$aql.log"
    status=0
    (cd "$work/test" && AMD_AQL=$aql simulated "$venv/bin/python" -m unittest -v test_tiny \
        >"$log" 2>&1) || status=$?
    ran=$(sed -n 's/^Ran \([0-9]*\) tests\? .*/\1/p' "$log")
    skipped=$(grep -c '\.\.\. skipped' "$log" || true)
    bad=$(grep -cE '\.\.\. (FAIL|ERROR)$' "$log" || true)
    echo "tinygrad $tinygrad test_tiny.py, simulated $name, $kind queues: ran ${ran:-0}," \
         "failed or errors $bad, skipped $skipped (exit $status)"
    if [ "$status" -ne 0 ] || [ "$bad" -ne 0 ] || [ -z "$ran" ]; then
        failed=1
        grep -E '\.\.\. (FAIL|ERROR)$' "$log" >&2 || true
        tail -n 30 "$log" >&2
    fi
    if (cd "$work" && AMD_AQL=$aql simulated "$venv/bin/python" "$root/scripts/tinygrad_vs_cpu.py" \
        run "$machine.aql$aql.npz" >/dev/null 2>"$work/vs_cpu.$machine.aql$aql.log") &&
        compared=$("$venv/bin/python" "$root/scripts/tinygrad_vs_cpu.py" compare \
            "$work/cpu.npz" "$work/$machine.aql$aql.npz"); then
        echo "tinygrad $tinygrad against its CPU backend, simulated $name, $kind queues: $compared"
    else
        failed=1
        echo "tinygrad $tinygrad against its CPU backend, $name, $kind queues: FAILED ${compared:-}" >&2
        tail -n 20 "$work/vs_cpu.$machine.aql$aql.log" >&2
    fi
done
exit "$failed"
