"""Sweep every opcode value of one GFX9 encoding through `llvm-mc-19 --disassemble` for one
target and print `opcode<TAB>text` (text `-` where LLVM rejects every operand variant tried).

usage: sweep.py <family> <mcpu>

Each opcode is tried with a base operand pattern first, then with simpler variants until LLVM
accepts one (`attempts` below: the order of the variants is the order they are tried in). All
opcodes' current candidates go to llvm-mc in one run per round, each followed by a marker
`s_nop 0x1234`, instead of one run per candidate: the same answers, a hundredth of the runs.
"""
import re, subprocess, sys

MARK = (0x17f << 23) | 0x1234   # s_nop 0x1234 between candidates


def hexline(ws):
    return " ".join("0x%02x" % ((w >> (8 * i)) & 0xff) for w in ws for i in range(4))


def dis_batch(candidates, mcpu):
    """The text of each candidate (a list of dwords) as llvm-mc reads it alone: its first
    instruction, or None where llvm-mc calls any of its line an invalid encoding. Candidate
    i sits on line 2i+1 and a marker on line 2i+2. llvm-mc reads its input as one byte
    stream, so a candidate that needs more dwords than it has swallows its marker; then the
    batch is split in two and each half tried again (down to single candidates, where a
    swallowed marker is an invalid encoding, as it is alone)."""
    inp = "\n".join(hexline(ws) + "\n" + hexline([MARK]) for ws in candidates) + "\n"
    r = subprocess.run(["llvm-mc-19", "-arch=amdgcn", "-mcpu=" + mcpu, "--disassemble"],
                       input=inp, capture_output=True, text=True)
    bad = set()
    for m in re.finditer(r"^<stdin>:(\d+):\d+: (?:warning|error): (.*)$", r.stderr, re.M):
        if "invalid" in m.group(2):
            bad.add((int(m.group(1)) - 1) // 2)
    texts, cur = [], []
    for line in r.stdout.splitlines():
        line = line.strip()
        if not line or line.startswith(".text"):
            continue
        if line == "s_nop 0x1234":
            texts.append(cur)
            cur = []
        else:
            cur.append(line)
    if len(texts) != len(candidates):
        if len(candidates) == 1:
            return [None]
        half = len(candidates) // 2
        return dis_batch(candidates[:half], mcpu) + dis_batch(candidates[half:], mcpu)
    return [texts[i][0] if i not in bad and texts[i] else None for i in range(len(candidates))]


fam = sys.argv[1]; mcpu=sys.argv[2]
cases=[]
if fam=='sop2':
    for op in range(0,0x80):
        w = (2<<30)|(op<<23)|(5<<16)|(2<<8)|1
        cases.append((op,[w]))
elif fam=='sopk':
    for op in range(0,32): cases.append((op,[(0xb<<28)|(op<<23)|(5<<16)|0x10, 0x12345678]))
elif fam=='sop1':
    for op in range(0,256): cases.append((op,[(0x17d<<23)|(4<<16)|(op<<8)|2]))
elif fam=='sopc':
    for op in range(0,128): cases.append((op,[(0x17e<<23)|(op<<16)|(3<<8)|2]))
elif fam=='sopp':
    for op in range(0,128): cases.append((op,[(0x17f<<23)|(op<<16)|3]))
elif fam=='smem':
    for op in range(0,256): cases.append((op,[(0x30<<26)|(op<<18)|(1<<17)|(4<<6)|1, 0x10]))
elif fam=='vop2':
    for op in range(0,63): cases.append((op,[(op<<25)|(3<<17)|(2<<9)|0x101, 0x41200000]))
elif fam=='vop1':
    for op in range(0,256): cases.append((op,[(0x3f<<25)|(3<<17)|(op<<9)|0x101]))
elif fam=='vopc':
    for op in range(0,256): cases.append((op,[(0x3e<<25)|(op<<17)|(2<<9)|0x101]))
elif fam=='vop3':
    for op in range(0,1024): cases.append((op,[(0x34<<26)|(op<<16)|4, (0x103<<18)|(0x102<<9)|0x101]))
elif fam=='vop3p':
    for op in range(0,128): cases.append((op,[(0x1a7<<23)|(op<<16)|(1<<14)|4, (3<<27)|(0x103<<18)|(0x102<<9)|0x101]))
elif fam=='ds':
    for op in range(0,256): cases.append((op,[(0x36<<26)|(op<<17)|4, (5<<24)|(3<<16)|(2<<8)|1]))
elif fam=='flat':
    for seg in range(0,3):
      for op in range(0,128): cases.append((seg*1000+op,[(0x37<<26)|(op<<18)|(seg<<14), (5<<24)|(0x7f<<16)|(2<<8)|2]))
elif fam=='mubuf':
    for op in range(0,128): cases.append((op,[(0x38<<26)|(op<<18)|(1<<12), (0x80<<24)|(1<<16)|(2<<8)|1]))


def attempts(op, ws):
    """The candidates tried for one opcode, in order: each `yield` gives llvm-mc's text of
    one candidate (None where it is invalid); the return value is the opcode's text."""
    t=(yield ws)
    if t is None and len(ws)==2 and fam in ('vop3','vop3p'):
        t=(yield [ws[0], ws[1] & ~(0x1ff<<18)])
        if t is None: t=(yield [ws[0], ws[1] & ~(0x3ffff<<9)])
        if t is None: t=(yield [ws[0]|(1<<14)|(3<<11), ws[1] & ~(0x1ff<<18)|(3<<27)])
    if t is None and fam=='vop1':
        t=(yield [(0x3f<<25)|(op<<9)])
    if t is None and fam=='sopp':
        t=(yield [ws[0]&~0xffff])
    if t is None and fam=='smem':
        base0=(0x30<<26)|(op<<18)
        for w0 in (ws[0]&~((0x7f<<6)|0x3f), ws[0]&~(0x3f), ws[0]&~(0x7f<<6), base0, base0|(2<<6)):
            t=(yield [w0, 0]) or (yield [w0,ws[1]])
            if t: break
    if t is None and fam in ('ds','flat','mubuf'):
        import itertools
        for m in itertools.product([0,1],repeat=3):
            w1 = ws[1]
            for bit,(sh) in zip(m,(24,16,8)):
                if bit: w1 &= ~(0xff<<sh)
            if fam=='flat' and ((ws[0]>>14)&3)==0: w1 = w1 & ~(0x7f<<16)
            if fam=='mubuf' and m[1]: w1 = ws[1]   # keep srsrc
            t=(yield [ws[0],w1])
            if t: break
        if t is None: t=(yield [ws[0]&~0xffff if fam=='ds' else ws[0]&~0x3fff, 0])
    return t


# Run every opcode's attempts side by side, one llvm-mc run per round.
running = []
for op, ws in cases:
    g = attempts(op, ws)
    running.append([op, g, next(g), None])
while True:
    live = [r for r in running if r[1] is not None]
    if not live:
        break
    texts = dis_batch([r[2] for r in live], mcpu)
    for r, t in zip(live, texts):
        try:
            r[2] = r[1].send(t)
        except StopIteration as done:
            r[1], r[3] = None, done.value
for op, _, _, t in running:
    print("%d\t%s" % (op, t if t else "-"))
