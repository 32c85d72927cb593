#!/usr/bin/env bash
# Regenerate isa/opcode.rs and decode/tables.rs from a sweep of every opcode value of every
# GFX9 encoding through llvm-mc-19 --disassemble, for gfx90a and gfx942 (needs llvm-19 and
# python3; takes a few minutes). The outputs are committed: nothing here runs at build time.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SHADER=$(cd "$HERE/../.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
for fam in sop2 sopk sop1 sopc sopp smem vop2 vop1 vopc vop3 vop3p ds flat mubuf; do
    for t in gfx90a gfx942; do
        python3 "$HERE/sweep.py" "$fam" "$t" >"$fam.$t.txt" &
    done
    wait
done
python3 "$HERE/emit.py" "$WORK" "$SHADER"
echo "regenerated $SHADER/isa/opcode.rs and $SHADER/decode/tables.rs" >&2
# The decoder's random-word golden files (sim/tests/shader_decoder_fuzz.rs), from the new tables.
TESTDATA=$(cd "$SHADER/../../../tests/shader_data" && pwd)
for t in gfx90a gfx942; do
    python3 "$HERE/fuzz.py" "$SHADER/decode/tables.rs" "$t" 400 1 >"$TESTDATA/isa_fuzz.$t.txt"
done
echo "regenerated $TESTDATA/isa_fuzz.*.txt" >&2
