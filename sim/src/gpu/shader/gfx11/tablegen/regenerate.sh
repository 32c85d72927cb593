#!/usr/bin/env bash
# Regenerate gfx11/opcode.rs and gfx11/tables.rs from a sweep of every opcode value of every
# GFX11 encoding through llvm-mc-19 --disassemble for gfx1100 (llvm-mc-22, true16, only for
# the high-half bits of 16-bit e32 VGPR fields: sweep.py TRUE16_BITS), and the random-encoding
# golden sim/tests/shader_data/gfx11_fuzz.txt (fuzz.py). Needs llvm-19, llvm-22 and python3;
# takes a few minutes. The outputs are committed: nothing here runs at build time.
#
#   regenerate.sh          rewrite the tables
#   regenerate.sh --check  regenerate into a temporary directory; exit 1 on any drift
set -euo pipefail
export LC_ALL=C
check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*) echo "regenerate.sh: unknown argument $1" >&2; exit 2 ;;
esac
for v in 19 22; do
    if ! command -v "llvm-mc-$v" >/dev/null 2>&1; then
        echo "regenerate.sh: llvm-mc-$v missing (apt-get install -y llvm-$v)" >&2
        exit 2
    fi
done
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GFX11=$(cd "$HERE/.." && pwd)
TESTDATA=$(cd "$GFX11/../../../../tests/shader_data" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAMILIES="sop2 sopk sop1 sopc sopp smem vop1 vop2 vopc vop3 vop3p vopdx vopdy vinterp ds flat mubuf mtbuf mimg ufmt hwreg sendmsg sendmsg_rtn"
for fam in $FAMILIES; do echo "$fam"; done |
    xargs -P 2 -I{} sh -c "python3 '$HERE/sweep.py' {} llvm-mc-19 llvm-mc-22 >'$WORK/{}.txt'"
OUT="$GFX11"
[ "$check" = 1 ] && OUT="$WORK/out"
python3 "$HERE/emit.py" "$WORK" "$OUT"
FUZZ="$TESTDATA/gfx11_fuzz.txt"
[ "$check" = 1 ] && FUZZ="$OUT/gfx11_fuzz.txt"
python3 "$HERE/fuzz.py" 400 1 >"$FUZZ"
if [ "$check" = 0 ]; then
    echo "regenerated $GFX11/opcode.rs, $GFX11/tables.rs and $TESTDATA/gfx11_fuzz.txt" >&2
    exit 0
fi
drift=0
for pair in "$GFX11/opcode.rs:opcode.rs" "$GFX11/tables.rs:tables.rs" \
            "$TESTDATA/gfx11_fuzz.txt:gfx11_fuzz.txt"; do
    if ! diff -u "${pair%%:*}" "$OUT/${pair#*:}" >"$WORK/diff"; then
        echo "regenerate.sh --check: ${pair%%:*} drifted from llvm-mc-19:" >&2
        head -40 "$WORK/diff" >&2
        drift=1
    fi
done
[ "$drift" = 1 ] && exit 1
echo "regenerate.sh --check: gfx11 decode tables and fuzz golden match llvm-mc-19 (and -22 for the true16 bits)" >&2
