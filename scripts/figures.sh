#!/usr/bin/env bash
# scripts/figures.sh -- the README's figure table for the whole paths, from `aqueduct bench`.
#
#   scripts/figures.sh [ITERATIONS]     (default 100)
#
# Builds the `aqueduct` tool in release, runs `aqueduct bench --iterations N --markdown` on the
# current device (the GPU when /dev/kfd exists, else the simulator; AQUEDUCT_BACKEND and
# AQUEDUCT_SIM_MACHINE are passed through) and prints markdown: a line naming the machine (CPU
# model, cores, kernel, simulated or real GPU) and the command, then one table row per path
# with its median, 10th-90th percentiles, the goal from issue 12 and how it was measured.
# Paste the output under "Figures from `aqueduct bench`" in README.md. The same figures as
# JSON: target/release/aqueduct bench --json. Progress goes to stderr.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
iterations=${1:-100}
case "$iterations" in
'' | *[!0-9]*) echo "figures.sh: ITERATIONS must be a number, not '$iterations'" >&2; exit 2 ;;
esac
cd "$root"
cargo build --release --quiet -p aqueduct-tools
echo "<!-- scripts/figures.sh $iterations, $(date -u +%Y-%m-%dT%H:%MZ) -->"
target/release/aqueduct bench --iterations "$iterations" --markdown
