#!/usr/bin/env bash
# Regenerate isa/opcode.rs and decode/tables.rs from a sweep of every opcode value of every
# GFX9 encoding through llvm-mc-19 --disassemble, for gfx90a and gfx942, and from those tables
# the decoder's random-word golden files (sim/tests/shader_data/isa_fuzz.*.txt, for
# sim/tests/shader_decoder_fuzz.rs). Needs llvm-19 and python3; takes a few minutes. The
# outputs are committed: nothing here runs at build time.
#
#   regenerate.sh          rewrite the tables and the goldens
#   regenerate.sh --check  regenerate into a temporary directory; exit 1 on any drift
set -euo pipefail
export LC_ALL=C
check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*) echo "regenerate.sh: unknown argument $1" >&2; exit 2 ;;
esac
if ! command -v llvm-mc-19 >/dev/null 2>&1; then
    echo "regenerate.sh: llvm-mc-19 missing (apt-get install -y llvm-19)" >&2
    exit 2
fi
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SHADER=$(cd "$HERE/../.." && pwd)
TESTDATA=$(cd "$SHADER/../../../tests/shader_data" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
for fam in sop2 sopk sop1 sopc sopp smem vop2 vop1 vopc vop3 vop3p ds flat mubuf; do
    for t in gfx90a gfx942; do
        python3 "$HERE/sweep.py" "$fam" "$t" >"$fam.$t.txt" &
    done
    wait
done
if [ "$check" = 1 ]; then
    OUT="$WORK/out"
    mkdir -p "$OUT/isa" "$OUT/decode" "$OUT/shader_data"
    FUZZ_OUT="$OUT/shader_data"
else
    OUT="$SHADER"
    FUZZ_OUT="$TESTDATA"
fi
python3 "$HERE/emit.py" "$WORK" "$OUT"
for t in gfx90a gfx942; do
    python3 "$HERE/fuzz.py" "$OUT/decode/tables.rs" "$t" 400 1 >"$FUZZ_OUT/isa_fuzz.$t.txt"
done
if [ "$check" = 0 ]; then
    echo "regenerated $SHADER/isa/opcode.rs, $SHADER/decode/tables.rs and $TESTDATA/isa_fuzz.*.txt" >&2
    exit 0
fi
drift=0
for pair in "isa/opcode.rs:$SHADER/isa/opcode.rs" "decode/tables.rs:$SHADER/decode/tables.rs" \
            "shader_data/isa_fuzz.gfx90a.txt:$TESTDATA/isa_fuzz.gfx90a.txt" \
            "shader_data/isa_fuzz.gfx942.txt:$TESTDATA/isa_fuzz.gfx942.txt"; do
    if ! diff -u "${pair#*:}" "$OUT/${pair%%:*}" >"$WORK/diff"; then
        echo "regenerate.sh --check: ${pair#*:} drifted from llvm-mc-19:" >&2
        head -40 "$WORK/diff" >&2
        drift=1
    fi
done
if [ "$drift" = 1 ]; then
    exit 1
fi
echo "regenerate.sh --check: decode tables and fuzz goldens match llvm-mc-19" >&2
