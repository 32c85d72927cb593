#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] -- build the loader's fuzz target with libFuzzer on the stable toolchain
# and run it for SECONDS (default 60), seeded with the committed test kernels and fixtures.
#
# cargo-fuzz needs nightly (it passes -Zsanitizer); this script passes only the stable
# coverage flags cargo-fuzz uses with `--sanitizer none` (SanitizerCoverage via
# -Cpasses=sancov-module), so it works on stable. Overflow checks and debug assertions stay on
# (fuzz/Cargo.toml), so arithmetic overflow is a crash. A crash leaves its input in
# fuzz/artifacts/load/ and fails the script. Needs a C++ compiler (libfuzzer-sys builds
# libFuzzer). With a nightly toolchain, `cargo +nightly fuzz run load` works as well and adds
# AddressSanitizer.
set -euo pipefail
seconds=${1:-60}
cd "$(dirname "${BASH_SOURCE[0]}")"
target=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares"
cargo build --release --target "$target" --bin load
corpus=corpus/load
mkdir -p "$corpus" artifacts/load
# Every seed must exist (a pattern that matches nothing stays literal and fails here too): a
# renamed kernel must not quietly shrink the corpus.
seeds=(../tests/kernels/bin/gfx90a/*.co[456] ../tests/kernels/bin/gfx942/preload.co5
       ../tests/kernels/bin/gfx1100/indirect_call.co6 ../tests/kernels/bin/gfx11-generic/saxpy.co6
       ../tests/kernels/bin/fixtures/*)
for f in "${seeds[@]}"; do
    if [ ! -f "$f" ]; then
        echo "fuzz/run.sh: seed $f is missing" >&2
        exit 1
    fi
    cp "$f" "$corpus/$(echo "$f" | tr / _)"
done
"target/$target/release/load" "$corpus" -artifact_prefix=artifacts/load/ \
    -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=262144 -print_final_stats=1
