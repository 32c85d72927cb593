#!/usr/bin/env bash
# Regenerate gfx11/opcode.rs and gfx11/tables.rs from a sweep of every opcode value of every
# GFX11 encoding through llvm-mc-19 --disassemble for gfx1100. Needs llvm-19 and python3;
# takes several minutes. The outputs are committed: nothing here runs at build time.
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
if ! command -v llvm-mc-19 >/dev/null 2>&1; then
    echo "regenerate.sh: llvm-mc-19 missing (apt-get install -y llvm-19)" >&2
    exit 2
fi
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
GFX11=$(cd "$HERE/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
FAMILIES="sop2 sopk sop1 sopc sopp smem vop1 vop2 vopc vop3 vop3p vopdx vopdy vinterp ds flat mubuf mtbuf"
for fam in $FAMILIES; do echo "$fam"; done |
    xargs -P 2 -I{} sh -c "python3 '$HERE/sweep.py' {} llvm-mc-19 >'$WORK/{}.txt'"
OUT="$GFX11"
[ "$check" = 1 ] && OUT="$WORK/out"
python3 "$HERE/emit.py" "$WORK" "$OUT"
if [ "$check" = 0 ]; then
    echo "regenerated $GFX11/opcode.rs and $GFX11/tables.rs" >&2
    exit 0
fi
drift=0
for f in opcode.rs tables.rs; do
    if ! diff -u "$GFX11/$f" "$OUT/$f" >"$WORK/diff"; then
        echo "regenerate.sh --check: $GFX11/$f drifted from llvm-mc-19:" >&2
        head -40 "$WORK/diff" >&2
        drift=1
    fi
done
[ "$drift" = 1 ] && exit 1
echo "regenerate.sh --check: gfx11 decode tables match llvm-mc-19" >&2
