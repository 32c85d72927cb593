"""Sweep every opcode value of one GFX11 encoding through `llvm-mc --disassemble` for gfx1100
and print `opcode<TAB>text` (text `-` where LLVM rejects every operand variant tried).

usage: sweep.py <family> <llvm-mc> [<true16 llvm-mc>]

The second llvm-mc (llvm-mc-22) is asked only about bit 7 of the 32-bit encodings' 8-bit VGPR
fields (see TRUE16_BITS): the first one's "fake16" model refuses what the hardware reads as
the high half of a 16-bit register. Accepted opcodes print as
`opcode<TAB>text<TAB>zero<TAB>traits<TAB>true16`, `true16` the bits of `zero` that the true16
llvm-mc accepts (emit.py clears those of 16-bit operands).

Each opcode is tried with a base operand pattern first, then with simpler variants (no
literal, null/off operands, zero fields) until LLVM accepts one: the text only names the
mnemonic and the operand widths that emit.py reads, so any accepted variant serves.
"""
import re, subprocess, sys

FAM, MC = sys.argv[1], sys.argv[2]
MC_TRUE16 = sys.argv[3] if len(sys.argv) > 3 else None


MARK = (0x17f << 23) | 0x1234   # s_nop 0x1234 between candidates


def hexline(ws):
    return " ".join("0x%02x" % ((w >> (8 * i)) & 0xff) for w in ws for i in range(4))


def dis_batch(candidates, mc=MC):
    """Disassemble each candidate (a list of dwords) in one llvm-mc run: candidate i sits on
    line 2i+1, a marker s_nop on line 2i+2. A candidate is accepted when llvm-mc warns about
    none of its line and prints exactly one instruction before its marker."""
    inp = "\n".join(hexline(ws) + "\n" + hexline([MARK]) for ws in candidates) + "\n"
    r = subprocess.run([mc, "-arch=amdgcn", "-mcpu=gfx1100", "--disassemble"],
                       input=inp, capture_output=True, text=True)
    bad = set()
    for m in re.finditer(r"^<stdin>:(\d+):\d+: warning", r.stderr, re.M):
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
    if len(texts) != len(candidates) and len(candidates) > 1:
        # A candidate swallowed its marker (it needed more dwords than it had): go one by one.
        return [dis_batch([ws], mc)[0] for ws in candidates]
    out = []
    for i in range(len(candidates)):
        t = texts[i] if i < len(texts) else []
        out.append(t[0] if i not in bad and len(t) == 1 else None)
    return out


VSRC = (0x103 << 18) | (0x102 << 9) | 0x101   # v3, v2, v1 in a VOP3 second dword
cases = []
if FAM == "sop2":
    for op in range(0x60):  # 0x60 and above are the SOPK, SOP1, SOPC and SOPP prefixes
        w = (2 << 30) | (op << 23) | (4 << 16) | (2 << 8) | 6
        cases.append((op, [[w], [(2 << 30) | (op << 23) | (4 << 16) | (6 << 8) | 2]]))
elif FAM == "sopk":
    for op in range(32):
        w = (0xb << 28) | (op << 23) | (5 << 16) | 0x10
        cases.append((op, [[w], [w, 0x12345678], [w & ~0x7f0000], [w & ~0xffff]]))
elif FAM == "sop1":
    for op in range(256):
        w = (0x17d << 23) | (4 << 16) | (op << 8) | 2
        cases.append((op, [[w], [w & ~(0x7f << 16)], [w & ~0x7f], [(w & ~0xff) | 0x7c],
                           [(w & ~(0x7f << 16)) | (0x7c << 16)]]))
elif FAM == "sopc":
    for op in range(128):
        cases.append((op, [[(0x17e << 23) | (op << 16) | (4 << 8) | 2]]))
elif FAM == "sopp":
    for op in range(128):
        w = (0x17f << 23) | (op << 16)
        cases.append((op, [[w | 3], [w]]))
elif FAM == "smem":
    for op in range(256):
        w = (0x3d << 26) | (op << 18) | (4 << 6) | 1
        cases.append((op, [[w, (0x7c << 25) | 0x10], [w & ~0x3f, (0x7c << 25)],
                           [w & ~(0x7f << 6), (0x7c << 25) | 0x10],
                           [(0x3d << 26) | (op << 18), (0x7c << 25)]]))
elif FAM == "vop1":
    for op in range(256):
        w = (0x3f << 25) | (4 << 17) | (op << 9) | 0x102
        cases.append((op, [[w], [w & ~(0xff << 17)], [(0x3f << 25) | (op << 9)],
                           [(w & ~0x1ff) | 2]]))
elif FAM == "vop2":
    for op in range(62):  # 62 and 63 are the VOPC and VOP1 prefixes
        w = (op << 25) | (4 << 17) | (2 << 9) | 0x101
        cases.append((op, [[w], [w, 0x41200000]]))
elif FAM == "vopc":
    for op in range(256):
        cases.append((op, [[(0x3e << 25) | (op << 17) | (2 << 9) | 0x101]]))
elif FAM == "vop3":
    for op in range(1024):
        w = (0x35 << 26) | (op << 16) | 4
        cases.append((op, [[w, VSRC], [w, VSRC & ~(0x1ff << 18)], [w, 0x101],
                           [w | (0x7c << 8), VSRC], [w | (0x7c << 8), VSRC & ~(0x1ff << 18)],
                           [w & ~0xff, VSRC], [w, (0x7c << 18) | (0x7c << 9) | 0x7c],
                           [w, 0]]))
elif FAM == "vop3p":
    for op in range(128):
        w = (0xcc << 24) | (op << 16) | (1 << 14) | 4
        cases.append((op, [[w, (3 << 27) | VSRC], [w, (3 << 27) | (VSRC & ~(0x1ff << 18))],
                           [w & ~(1 << 14), VSRC], [w & ~(1 << 14), 0x101]]))
elif FAM == "vopdx":
    # X varies, Y is v_dual_add_f32 (opcode 4): vdstX v4, vdstY v7.
    for op in range(16):
        w0 = (0x32 << 26) | (op << 22) | (4 << 17) | (2 << 9) | 0x101
        w1 = (4 << 24) | (3 << 17) | (5 << 9) | 0x106
        cases.append((op, [[w0, w1], [w0, w1, 0x41200000], [w0 & ~(0xff << 9), w1],
                           [w0, w1 & ~(0xff << 9)]]))
elif FAM == "vopdy":
    for op in range(32):
        w0 = (0x32 << 26) | (4 << 22) | (op << 17) | (2 << 9) | 0x101
        w1 = (4 << 24) | (3 << 17) | (5 << 9) | 0x106
        cases.append((op, [[w0, w1], [w0, w1, 0x41200000], [w0 & ~(0xff << 9), w1],
                           [w0, w1 & ~(0xff << 9)]]))
elif FAM == "vinterp":
    for op in range(128):
        cases.append((op, [[(0xcd << 24) | (op << 16) | 1, (0x104 << 18) | (0x103 << 9) | 0x102]]))
elif FAM == "ds":
    for op in range(256):
        w = (0x36 << 26) | (op << 18)
        variants = []
        for m in range(8):
            w1 = (5 << 24) | (3 << 16) | (2 << 8) | 1
            for bit, sh in zip((1, 2, 4), (24, 16, 8)):
                if m & bit:
                    w1 &= ~(0xff << sh)
            variants.append([w, w1])
        variants.append([w, 0])
        cases.append((op, variants))
elif FAM == "flat":
    for seg in range(3):
        for op in range(128):
            w = (0x37 << 26) | (op << 18) | (seg << 16)
            variants = []
            for m in range(8):
                w1 = (5 << 24) | (0x7c << 16) | (2 << 8) | 2
                for bit, sh in zip((1, 2, 4), (24, 16, 8)):
                    if m & bit:
                        w1 &= ~(0xff << sh)
                        if sh == 16:
                            w1 |= 0x7c << 16
                variants.append([w, w1])
            cases.append((seg * 1000 + op, variants))
elif FAM in ("mubuf", "mtbuf"):
    for op in range(256 if FAM == "mubuf" else 16):
        w = (0x38 << 26) | (op << 18) if FAM == "mubuf" else (0x3a << 26) | (22 << 19) | (op << 15)
        w1 = (0x80 << 24) | (1 << 22) | (1 << 16) | (2 << 8) | 1
        cases.append((op, [[w, w1], [w, w1 & ~(1 << 22)], [w, w1 & ~(0xff << 8)],
                           [w, (w1 & ~(1 << 22)) & ~(0xff << 8)]]))
elif FAM == "mimg":
    # Keyed op * 16 + dim * 2 + a16: the address count LLVM reads depends on all three.
    for op in range(256):
        for dim in range(8):
            for a16 in range(2):
                w = (0x3c << 26) | (op << 18) | (a16 << 16) | (dim << 2)
                w1 = (2 << 16) | (1 << 8) | 20
                cases.append((op * 16 + dim * 2 + a16,
                              [[w | (0xf << 8), w1 | (4 << 26)], [w | (0xf << 8), w1],
                               [w | (1 << 8), w1 | (4 << 26)], [w | (1 << 8), w1],
                               [w | (3 << 8), w1]]))
elif FAM == "hwreg":
    # s_getreg_b32's register ids: LLVM names some (`hwreg(HW_REG_MODE)`).
    for reg in range(64):
        cases.append((reg, [[(0xb << 28) | (17 << 23) | (4 << 16) | reg]]))
elif FAM == "sendmsg":
    # s_sendmsg's every immediate: LLVM prints some as `sendmsg(...)`, the rest as a number.
    for imm in range(1 << 16):
        cases.append((imm, [[(0x17f << 23) | (54 << 16) | imm]]))
elif FAM == "sendmsg_rtn":
    # s_sendmsg_rtn_b32's message field (SOP1 ssrc0).
    for msg in range(256):
        cases.append((msg, [[(0x17d << 23) | (4 << 16) | (0x4c << 8) | msg]]))
elif FAM == "ufmt":
    # MTBUF's 7-bit format field: LLVM prints a named one as `format:[BUF_FMT_...]`.
    for fmt in range(128):
        cases.append((fmt, [[(0x3a << 26) | (fmt << 19), (0x80 << 24) | (1 << 16) | (2 << 8)]]))
else:
    sys.exit("sweep.py: unknown family " + FAM)


def bits(*ranges):
    m = 0
    for lo, hi in ranges:
        m |= ((1 << (hi - lo + 1)) - 1) << lo
    return m


# The bits of each encoding's first two dwords (bit 32 is bit 0 of the second) that probe()
# sets one at a time in an accepted encoding: control bits and register fields, never the
# prefix, the opcode, an MTBUF format or a field whose neighbouring values are not all
# operands of the same class (FLAT saddr, SMEM soffset).
PROBE = {
    "sop2": bits((0, 22)), "sopk": bits((0, 22)), "sop1": bits((0, 7), (16, 22)),
    "sopc": bits((0, 15)), "sopp": bits((0, 15)), "smem": bits((6, 17), (32, 56)),
    "vop1": bits((0, 8), (17, 24)), "vop2": bits((0, 24)), "vopc": bits((0, 16)),
    "vop3": bits((0, 15), (32, 63)), "vop3p": bits((0, 15), (23, 23), (32, 63)),
    "vinterp": bits((0, 15), (23, 23), (32, 63)), "ds": bits((0, 17), (32, 63)),
    "flat": bits((0, 15), (25, 25), (32, 47), (55, 63)),
    "mubuf": bits((0, 17), (32, 63)), "mtbuf": bits((0, 14), (32, 63)),
    "mimg": bits((1, 1), (5, 7), (12, 15), (17, 17), (32, 63)),
}


# Bit 7 of the 32-bit VALU encodings' 8-bit VGPR fields (vdst at 24:17, VOP2/VOPC vsrc1 at
# 16:9). For a 16-bit operand the hardware reads it as the high half (`v4.h`), as LLVM 22
# (true16) does and clang-22 emits for gfx1100; LLVM 19's fake16 model allows only v0-v127
# there and refuses it. Where LLVM 19 refuses such a bit, the true16 llvm-mc is asked too.
TRUE16_BITS = {"vop1": 1 << 24, "vop2": (1 << 24) | (1 << 16), "vopc": 1 << 16}


def probe(accepted):
    """For each opcode's accepted encoding, the bits of PROBE[FAM] that are clear there and
    that LLVM refuses to see set: fields the instruction does not have, which LLVM's encoding
    fixes at zero (a DS store's vdst, an integer VOP3's abs bits, ...). The decoder rejects
    what LLVM rejects by these masks. Also, per opcode, the TRUE16_BITS of its mask that the
    true16 llvm-mc accepts."""
    mask = PROBE.get(FAM, 0)
    jobs = []
    for op, ws in accepted.items():
        for b in range(64):
            if mask >> b & 1 and b // 32 < len(ws) and not ws[b // 32] >> (b % 32) & 1:
                flipped = list(ws)
                flipped[b // 32] |= 1 << (b % 32)
                jobs.append((op, b, flipped))
    zero = {op: 0 for op in accepted}
    step = 4000
    for i in range(0, len(jobs), step):
        chunk = jobs[i:i + step]
        for (op, b, _), t in zip(chunk, dis_batch([ws for _, _, ws in chunk])):
            if t is None:
                zero[op] |= 1 << b
    true16 = {op: 0 for op in accepted}
    asks = [(op, b, ws) for op, b, ws in jobs if TRUE16_BITS.get(FAM, 0) >> b & 1
            and zero[op] >> b & 1]
    if asks:
        if MC_TRUE16 is None:
            sys.exit("sweep.py: %s needs the true16 llvm-mc (third argument)" % FAM)
        for (op, b, _), t in zip(asks, dis_batch([ws for _, _, ws in asks], MC_TRUE16)):
            if t is not None:
                true16[op] |= 1 << b
    return zero, true16


result = {op: None for op, _ in cases}
chosen = {}
pending = list(cases)
while pending:
    texts = dis_batch([variants[0] for _, variants in pending])
    nxt = []
    for (op, variants), t in zip(pending, texts):
        if t:
            result[op] = t
            chosen[op] = variants[0]
        elif len(variants) > 1:
            nxt.append((op, variants[1:]))
    pending = nxt
zero, true16 = probe(chosen)

# How LLVM prints (or refuses) a few operand forms of each opcode, found by trying each on
# the accepted encoding; `traits[op]` lists the letters of the probes that hit:
#   0, 1  source 0 / 1 at v200 carries a Lo128 note (LLVM 19's "fake16" 32-bit encodings)
#   v     source 0 as s2 carries a `VGPR_32` note (a VGPR-only source: v_swap_b32, ...)
#   P, 8  the DPP16 / DPP8 form is rejected
#   o, a, n  a VOP3 op_sel / abs / neg bit is accepted but not printed
#   h     a VOP3P op_sel_hi bit is accepted but not printed (the integer WMMAs)


def set_field(w, lo, width, val):
    return w & ~(((1 << width) - 1) << lo) | val << lo


DPP16_WORD = (0xf << 28) | (0xf << 24) | (0xe4 << 8) | 1   # quad_perm:[0,1,2,3], v1
DPP8_WORD = (0xfac688 << 8) | 1                           # dpp8:[0,1,2,3,4,5,6,7], v1
E32 = FAM in ("vop1", "vop2", "vopc")
TRAITS = []
if E32:
    TRAITS = [("0", lambda ws: [set_field(ws[0], 0, 9, 0x1c8)],
               lambda t: t is not None and "v200/*Invalid register" in t),
              ("v", lambda ws: [set_field(ws[0], 0, 9, 2)],
               lambda t: t is not None and "s2/*Invalid register" in t),
              ("P", lambda ws: [set_field(ws[0], 0, 9, 0xfa), DPP16_WORD], lambda t: t is None),
              ("8", lambda ws: [set_field(ws[0], 0, 9, 0xe9), DPP8_WORD], lambda t: t is None)]
    if FAM != "vop1":
        TRAITS.append(("1", lambda ws: [set_field(ws[0], 9, 8, 200)],
                       lambda t: t is not None and "v200/*Invalid register" in t))
elif FAM == "vop3":
    TRAITS = [("o", lambda ws: [ws[0] | 1 << 11] + ws[1:],
               lambda t: t is not None and "op_sel" not in t),
              ("a", lambda ws: [ws[0] | 1 << 8] + ws[1:], lambda t: t is not None and "|" not in t),
              ("n", lambda ws: ws[:1] + [ws[1] | 1 << 29] + ws[2:],
               lambda t: t is not None and "-" not in t and "neg(" not in t)]
elif FAM == "vop3p":
    TRAITS = [("h", lambda ws: ws[:1] + [ws[1] & ~(1 << 27)] + ws[2:],
               lambda t: t is not None and "op_sel_hi" not in t)]
traits = {op: "" for op in chosen}
jobs = []
for op, ws in chosen.items():
    for letter, make, hit in TRAITS:
        jobs.append((op, letter, hit, make(ws)))
for (op, letter, hit, _), t in zip(jobs, dis_batch([ws for _, _, _, ws in jobs])):
    if hit(t):
        traits[op] += letter

# MIMG: the data and address registers LLVM prints for each dmask (1, 3, 7, 15), d16 and tfe
# (`vdata:vaddr` dwords, `-` where rejected), sequential then NSA; emit.py derives the rule
# and its exceptions.
shapes = {op: "" for op in chosen}
if FAM == "mimg":
    jobs = []
    # Then the same with the NSA form (bit 0 and a dword of four more address VGPRs).
    for nsa in (0, 1):
        for op, ws in chosen.items():
            for dmask in (1, 3, 7, 15):
                for d16 in range(2):
                    for tfe in range(2):
                        w0 = ws[0] & ~((0xf << 8) | (1 << 17)) | dmask << 8 | d16 << 17 | nsa
                        jobs.append((op, [w0, ws[1] | tfe << 21] + [0x18171615] * nsa))

    def width(t):
        regs = re.findall(r"v(?:\[(\d+):(\d+)\]|(\d+))", t)
        return sum(int(b) - int(a) + 1 if a else 1 for a, b, _ in regs)

    for (op, _), t in zip(jobs, dis_batch([ws for _, ws in jobs])):
        m = t and re.match(r"\S+\s+(\S+), (\[(?:[^][]|\[[^]]*\])*\]|\S+),", t)
        shapes[op] += " %d:%d" % (width(m.group(1)), width(m.group(2))) if m else " -"
for op, _ in cases:
    if result[op]:
        print("%d\t%s\t%x\t%s\t%x" % (op, result[op], zero[op], traits[op] or shapes[op].strip(),
                                       true16[op]))
    else:
        print("%d\t-" % op)
