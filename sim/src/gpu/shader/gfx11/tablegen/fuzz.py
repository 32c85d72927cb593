"""Random GFX11 encodings and what llvm-mc-19 makes of them, for the decoder's random-word
test (sim/tests/gfx11_decoder_fuzz.rs).

usage: fuzz.py <count per prefix> <seed>

For every encoding prefix, `count` random first dwords with that prefix, each followed by two
random dwords (room for a second dword and a literal or DPP word), go through one llvm-mc-19
--disassemble --show-encoding run with an `s_nop 0x1234` marker line between candidates.
Output lines: `w0 w1 w2<TAB>length<TAB>text`, or `w0 w1 w2<TAB>-` where LLVM rejects the
first dword.
"""
import random, re, subprocess, sys

COUNT, SEED = int(sys.argv[1]), int(sys.argv[2])
MARK = (0x17f << 23) | 0x1234
# (fixed bits, mask of the fixed bits) of each encoding's first dword.
PREFIXES = [
    (2 << 30, 3 << 30), (0xb << 28, 0xf << 28), (0x17d << 23, 0x1ff << 23),
    (0x17e << 23, 0x1ff << 23), (0x17f << 23, 0x1ff << 23), (0x3d << 26, 0x3f << 26),
    (0, 1 << 31), (0x3f << 25, 0x7f << 25), (0x3e << 25, 0x7f << 25), (0x35 << 26, 0x3f << 26),
    (0xcc << 24, 0xff << 24), (0x32 << 26, 0x3f << 26), (0xcd << 24, 0xff << 24),
    (0x36 << 26, 0x3f << 26), (0x37 << 26, 0x3f << 26), (0x38 << 26, 0x3f << 26),
    (0x3a << 26, 0x3f << 26), (0x3c << 26, 0x3f << 26),
]


def hexline(ws):
    return " ".join("0x%02x" % ((w >> (8 * i)) & 0xff) for w in ws for i in range(4))


rng = random.Random(SEED)
cands = []
for fixed, mask in PREFIXES:
    for _ in range(COUNT):
        w0 = fixed | (rng.getrandbits(32) & ~mask & 0xffffffff)
        cands.append([w0, rng.getrandbits(32), rng.getrandbits(32)])
# Two s_nop 0 after each candidate: whatever its trailing dwords decode as cannot reach the
# marker (an image instruction's NSA address dwords may take them: the test decodes the
# candidate followed by them too).
PAD = [0xbf800000, 0xbf800000]
inp = "\n".join(hexline(ws + PAD) + "\n" + hexline([MARK]) for ws in cands) + "\n"
r = subprocess.run(["llvm-mc-19", "-arch=amdgcn", "-mcpu=gfx1100", "--disassemble",
                    "--show-encoding"], input=inp, capture_output=True, text=True)
bad = set()
for m in re.finditer(r"^<stdin>:(\d+):(\d+): warning", r.stderr, re.M):
    if int(m.group(2)) == 1:   # the candidate's first dword itself was rejected
        bad.add((int(m.group(1)) - 1) // 2)
groups, cur = [], []
for line in r.stdout.splitlines():
    line = line.strip()
    if not line or line.startswith(".text"):
        continue
    if line.startswith("s_nop 0x1234"):
        groups.append(cur)
        cur = []
    else:
        cur.append(line)
assert len(groups) == len(cands), "a candidate swallowed its marker"
for i, ws in enumerate(cands):
    key = " ".join("%08x" % w for w in ws)
    if i in bad or not groups[i]:
        print("%s\t-" % key)
        continue
    text, enc = groups[i][0].split("; encoding:")
    print("%s\t%d\t%s" % (key, enc.count(",") // 4 + 1, " ".join(text.split())))
