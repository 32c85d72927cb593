#!/usr/bin/env python3
"""Random instruction words for every GFX9 encoding family, disassembled by llvm-mc-19.

usage: fuzz.py <tables.rs> <mcpu> <count-per-family> <seed> > golden.txt

Each candidate is a valid opcode of its family (from decode/tables.rs) with every other bit
random, biased toward the interesting operand values (literals, inline constants, DPP, SDWA,
special registers) and followed by random dwords that may serve as a literal or DPP/SDWA
word. llvm-mc-19 --disassemble decodes the candidates; the ones it accepts are written as
"<hex words of the instruction>\t<llvm's text>", one per line. Some of the candidates it
rejects as invalid encodings are written too, as "<hex words of the candidate>\t<invalid>"
(at most a quarter of <count> per family). The test sim/tests/shader_decoder_fuzz.rs checks
that the simulator's decoder and disassembler read every accepted line exactly like LLVM and
reject every rejected one. Deterministic for a given seed (and LLVM version).
"""
import random
import re
import subprocess
import sys

tables_path, mcpu, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(f"{mcpu}:{seed}")
target_flag = {"gfx90a": "GFX90A", "gfx942": "GFX942"}[mcpu]

# Valid opcode numbers per family and target, from the generated decode tables.
ops = {}
names = {}
no_e64 = set()
family = None
for line in open(tables_path):
    m = re.match(r"pub\(crate\) const (\w+): &\[(\w+)\]", line)
    if m:
        family = m.group(1)
        ops[family] = []
        names[family] = []
        continue
    m = re.match(r"\s*\((\d+), Op::(\w+), (\w+)\),", line)
    if m and family:
        if m.group(3) in ("ALL", target_flag):
            ops[family].append(int(m.group(1)))
            names[family].append(m.group(2))
        continue
    m = re.match(r"\s*Op::(\w+),", line)
    if m and family == "NO_E64":
        no_e64.add(m.group(1))
# VOP3 also encodes the VOPC, VOP2 and VOP1 opcodes, at 0, 256 and 320, except the ones
# without an e64 form (the decoder's PROMOTED_TO_VOP3).
for fam, base in (("VOPC", 0), ("VOP2", 256), ("VOP1", 320)):
    ops["VOP3"] += [base + c for c, n in zip(ops[fam], names[fam]) if n not in no_e64]
ops["VOP3"].sort()

INTERESTING_LITERALS = [
    0x3F800000, 0xBF000000, 0x40490FDB, 0x3E22F983, 0x00000001, 0xFFFFFFFF, 0x12345678,
    0x80000000, 0x7FC00000, 0x00003C00, 0x3C00BC00, 0x0000FFFF, 0x00000040,
]


def rbits(n):
    return rng.getrandbits(n)


def scalar_src():
    """An 8-bit SSRC value."""
    r = rng.random()
    if r < 0.15:
        return 255  # literal
    if r < 0.35:
        return rng.randrange(128, 209)  # integer inline constants
    if r < 0.45:
        return rng.randrange(240, 249)  # float inline constants
    if r < 0.6:
        return rng.choice([102, 103, 104, 105, 106, 107, 124, 126, 127, 235, 236, 237, 238, 239, 251, 252, 253, 254])
    return rng.randrange(0, 102)


def vector_src(allow_special=True):
    """A 9-bit SRC value."""
    r = rng.random()
    if r < 0.45:
        return 256 + rbits(8)
    if allow_special and r < 0.55:
        return 255
    s = scalar_src()
    return 128 if s == 255 and not allow_special else s


def extra():
    """Two trailing dwords: a literal (or DPP/SDWA word) and padding."""
    if rng.random() < 0.5:
        lit = rng.choice(INTERESTING_LITERALS)
    else:
        lit = rbits(32)
    return [lit, rbits(32)]


def dpp_word(src0):
    ctrl = rng.choice(
        [rbits(8), 0x100 + rng.randrange(1, 16), 0x110 + rng.randrange(1, 16), 0x120 + rng.randrange(1, 16),
         0x130, 0x134, 0x138, 0x13C, 0x140, 0x141, 0x142, 0x143, rbits(9)]
    )
    w = src0 | (ctrl << 8) | (rbits(1) << 19) | (rbits(4) << 20) | (rbits(4) << 24) | (rbits(4) << 28)
    if rng.random() < 0.5:
        w |= 0xFF << 24  # full masks, the common case
    return w


def sdwa_word(src0):
    w = rbits(32) & ~0xFF
    return w | src0


def vop_extra(src0_field):
    """Trailing dwords for a VOP1/VOP2/VOPC whose src0 is `src0_field`."""
    if src0_field == 250:
        return [dpp_word(rbits(8)), rbits(32)]
    if src0_field == 249:
        return [sdwa_word(rbits(8)), rbits(32)]
    return extra()


def vop_src0():
    r = rng.random()
    if r < 0.2:
        return 250
    if r < 0.4:
        return 249
    return vector_src()


def gen(fam):
    op = rng.choice(ops[fam.upper()])
    if fam == "sop2":
        w = (2 << 30) | (op << 23) | (rbits(7) << 16) | (scalar_src() << 8) | scalar_src()
        return [w] + extra()
    if fam == "sopk":
        return [(0xB << 28) | (op << 23) | (rbits(7) << 16) | rbits(16)] + extra()
    if fam == "sop1":
        return [(0x17D << 23) | (rbits(7) << 16) | (op << 8) | scalar_src()] + extra()
    if fam == "sopc":
        return [(0x17E << 23) | (op << 16) | (scalar_src() << 8) | scalar_src()] + extra()
    if fam == "sopp":
        imm = rbits(16) if rng.random() < 0.7 else rbits(4)
        return [(0x17F << 23) | (op << 16) | imm] + extra()
    if fam == "smem":
        w0 = (0x30 << 26) | (op << 18) | (rbits(5) << 13) | (rbits(7) << 6) | rbits(6)
        w1 = rbits(21) if rng.random() < 0.5 else rbits(8)
        w1 |= rng.choice([0, rbits(7)]) << 25
        return [w0, w1, rbits(32)]
    if fam == "vop2":
        s0 = vop_src0()
        return [(op << 25) | (rbits(8) << 17) | (rbits(8) << 9) | s0] + vop_extra(s0)
    if fam == "vop1":
        s0 = vop_src0()
        return [(0x3F << 25) | (rbits(8) << 17) | (op << 9) | s0] + vop_extra(s0)
    if fam == "vopc":
        s0 = vop_src0()
        return [(0x3E << 25) | (op << 17) | (rbits(8) << 9) | s0] + vop_extra(s0)
    if fam == "vop3":
        w0 = (0x34 << 26) | (op << 16) | (rbits(8) if rng.random() < 0.3 else 0) << 8 | rbits(8)
        if rng.random() < 0.3:
            w0 |= 1 << 15
        w1 = (vector_src(False) | (vector_src(False) << 9) | (vector_src(False) << 18))
        if rng.random() < 0.3:
            w1 |= rbits(5) << 27
        return [w0, w1, rbits(32)]
    if fam == "vop3p":
        w0 = (0x1A7 << 23) | (op << 16) | (rbits(8) << 8) | rbits(8)
        w1 = vector_src(False) | (vector_src(False) << 9) | (vector_src(False) << 18) | (rbits(5) << 27)
        return [w0, w1, rbits(32)]
    if fam == "ds":
        w0 = (0x36 << 26) | (op << 17) | (rbits(1) << 25) | (rbits(16) if rng.random() < 0.7 else 0)
        w1 = rbits(32)
        return [w0, w1, rbits(32)]
    if fam == "flat":
        seg, o = op >> 7, op & 0x7F
        w0 = (0x37 << 26) | (o << 18) | (seg << 14) | (rbits(2) << 16) | (rbits(13) if rng.random() < 0.7 else 0)
        if rng.random() < 0.3:
            w0 |= 1 << 25  # sc1 / nv on gfx940
        saddr = rng.choice([0x7F, rbits(7), rng.randrange(0, 104, 2)])
        w1 = (rbits(8) << 24) | (rbits(1) << 23) | (saddr << 16) | rbits(16)
        return [w0, w1, rbits(32)]
    if fam == "mubuf":
        w0 = (0x38 << 26) | (op << 18) | (rbits(6) << 12) | (rbits(12) if rng.random() < 0.7 else 0)
        w1 = (scalar_src() & 0xFF) << 24 | (rbits(1) << 23) | (rbits(5) << 16) | rbits(16)
        return [w0, w1, rbits(32)]
    raise ValueError(fam)


FAMILIES = ["sop2", "sopk", "sop1", "sopc", "sopp", "smem", "vop2", "vop1", "vopc", "vop3", "vop3p", "ds", "flat",
            "mubuf"]
candidates = []
for fam in FAMILIES:
    weight = 3 if fam in ("vop1", "vop2", "vopc", "vop3", "vop3p", "flat") else 1
    for _ in range(count * weight):
        candidates.append(([w & 0xFFFFFFFF for w in gen(fam)], fam))


def as_bytes(words):
    return [(w >> (8 * i)) & 0xFF for w in words for i in range(4)]


# llvm-mc --disassemble reads its input as one byte stream (a literal may come from the next
# line), so every candidate is tried truncated to 1, 2 and 3 dwords, each followed by three
# s_nop (any instruction that began in the candidate ends within them: none is longer than 12
# bytes) and a marker instruction that splits llvm's output into one group per try. Each
# truncation is tried twice, padded with two different s_nop words: the instruction's length
# is the shortest truncation whose two tries read alike and like the untruncated one.
NOPS = (0xBF800001, 0xBF800002)  # s_nop 1, s_nop 2
MARKER = [0xBA000001, 0x5EA1F00D]  # s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 1), 0x5ea1f00d
MARKER_TEXT = "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 1), 0x5ea1f00d"
lines = []
for c, _ in candidates:
    for k in (1, 2, 3):
        for nop in NOPS:
            lines.append(c[:k] + [nop, nop, nop] + MARKER)


def first_texts(block):
    """llvm's text of the instruction at the start of every line of `block`, None where it
    reports an invalid encoding. llvm-mc-19 crashes on a few encodings (some SDWA forms):
    a batch that crashes is split until the crashing candidate is found and dropped."""
    text = "\n".join(" ".join("0x%02x" % b for b in as_bytes(l)) for l in block) + "\n"
    run = subprocess.run(
        ["llvm-mc-19", "-arch=amdgcn", "-mcpu=" + mcpu, "--disassemble"],
        input=text, capture_output=True, text=True,
    )
    if run.returncode != 0:
        if len(block) <= 6:
            crashed.append(block[-1][:3])
            return [None] * len(block)
        half = len(block) // 12 * 6
        return first_texts(block[:half]) + first_texts(block[half:])
    groups = [[]]
    for line in run.stdout.splitlines():
        asm = " ".join(line.split())
        if not asm or asm.startswith("."):
            continue
        if asm == MARKER_TEXT:
            groups.append([])
        else:
            groups[-1].append(asm)
    if len(groups) != len(block) + 1:
        sys.exit("expected %d marker-separated groups, got %d" % (len(block) + 1, len(groups)))
    invalid_at_start = set()
    for line in run.stderr.splitlines():
        m = re.match(r"<stdin>:(\d+):1: warning: invalid instruction encoding", line)
        if m:
            invalid_at_start.add(int(m.group(1)) - 1)
    return [None if n in invalid_at_start else groups[n][0] for n in range(len(block))]


crashed = []
firsts = []
for start in range(0, len(lines), 6 * 500):
    firsts += first_texts(lines[start:start + 6 * 500])

out = []
seen = set()
# Candidates llvm rejects (both padded tries of the whole candidate invalid, and llvm did not
# crash on it), per family, up to a quarter of the per-family count.
REJECTED_TEXT = "<invalid>"
rejected_per_family = {}
crashed_words = {tuple(c) for c in crashed}
# Families whose encoding is 64 bits even when the second dword's fields are ignored.
WIDE = {"smem", "vop3", "vop3p", "ds", "flat", "mubuf"}
for i, (c, fam) in enumerate(candidates):
    tries = firsts[6 * i:6 * i + 6]
    full = tries[4]
    if full is None and tries[5] is None and tuple(c[:3]) not in crashed_words:
        words = tuple(c[:3])
        if rejected_per_family.get(fam, 0) < max(1, count // 4) and words not in seen:
            rejected_per_family[fam] = rejected_per_family.get(fam, 0) + 1
            seen.add(words)
            out.append("%s\t%s" % (" ".join("%08X" % w for w in words), REJECTED_TEXT))
        continue
    # llvm marks operands it considers malformed with a /* ... */ comment: not an oracle.
    if full is None or tries[5] != full or "/*" in full:
        continue
    length = next(k + 1 for k in range(3) if tries[2 * k] == tries[2 * k + 1] == full)
    length = max(length, 2 if fam in WIDE else 1)
    words = tuple(c[:length])
    if words not in seen:
        seen.add(words)
        out.append("%s\t%s" % (" ".join("%08X" % w for w in words), full))
print("# llvm-mc-19 --disassemble -mcpu=%s of random words (fuzz.py, seed %d); words<TAB>text" % (mcpu, seed))
print("\n".join(out))
sys.stderr.write("%s: %d lines from %d candidates (%d rejected kept), %d crashed llvm-mc\n" % (
    mcpu, len(out), len(candidates), sum(rejected_per_family.values()), len(crashed)))
