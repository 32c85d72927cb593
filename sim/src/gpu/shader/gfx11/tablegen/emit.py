"""Write gfx11/opcode.rs and gfx11/tables.rs from the llvm-mc-19 gfx1100 opcode sweep (see
regenerate.sh).

usage: emit.py <sweep dir> <gfx11 dir>

Every accepted opcode of every encoding becomes a row: the opcode number, its `Op` (the
mnemonic without _e32/_e64), and the type of each operand slot in the order dst, src0, src1,
src2. Slots are told apart by the register numbers sweep.py put in them; types follow LLVM's
register widths and the mnemonic's type suffixes.
"""
import os, re, sys
from collections import Counter

SWEEP, OUT = sys.argv[1], sys.argv[2]
FAMS = ["sop2", "sopk", "sop1", "sopc", "sopp", "smem", "vop1", "vop2", "vopc", "vop3",
        "vop3p", "vopdx", "vopdy", "vinterp", "ds", "flat", "mubuf", "mtbuf", "mimg"]
# Which operand slot each register the sweep planted lands in.
ROLES = {
    "sop2": {"s4": 0, "s6": 1, "s2": 2},
    "sop1": {"s4": 0, "s2": 1},
    "sopc": {"s2": 1, "s4": 2},
    "vop1": {"v4": 0, "s4": 0, "v2": 1, "s2": 1},
    "vop2": {"v4": 0, "s4": 0, "v1": 1, "v2": 2},
    "vopc": {"v1": 1, "v2": 2},
    "vop3": {"v4": 0, "s4": 0, "v1": 1, "v2": 2, "v3": 3},
    "vop3p": {"v4": 0, "v1": 1, "v2": 2, "v3": 3},
    "vopdx": {"v4": 0, "v1": 1, "v2": 2},
    "vopdy": {"v7": 0, "v6": 1, "v5": 2},
    "vinterp": {"v1": 0, "v2": 1, "v3": 2, "v4": 3},
    "ds": {"v5": 0, "v1": 1, "v2": 2, "v3": 3},
}
TYPES = ("f16", "f32", "f64", "bf16", "i16", "u16", "b16", "i32", "u32", "b32", "i64", "u64",
         "b64", "i24", "u24", "i8", "u8", "i4", "u4", "iu8", "iu4")


def load(fam):
    rows = {}
    for line in open(os.path.join(SWEEP, fam + ".txt")):
        fields = line.rstrip("\n").split("\t")
        if fields[1] != "-":
            rows[int(fields[0])] = (fields[1], int(fields[2], 16) if len(fields) > 2 else 0,
                                    fields[3] if len(fields) > 3 else "",
                                    int(fields[4], 16) if len(fields) > 4 else 0)
    return rows


def split(text):
    """Mnemonic and operand tokens (commas inside parentheses kept; LLVM's comments dropped)."""
    parts = re.sub(r"/\*.*?\*/", "", text).split(None, 1)
    ops, depth, cur = [], 0, ""
    for ch in parts[1] if len(parts) > 1 else "":
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        ops.append(cur.strip())
    return parts[0], [o.split()[0] for o in ops]


def width(tok):
    tok = re.sub(r"\.[lh]$", "", tok)   # a true16 half: one register
    m = re.match(r"^[vs]\[(\d+):(\d+)\]$", tok)
    if m:
        return int(m.group(2)) - int(m.group(1)) + 1, tok[0] + m.group(1)
    if re.match(r"^[vs]\d+$", tok):
        return 1, tok
    return 0, tok


def base(name):
    for suffix in ("_e32", "_e64"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def ty(dwords, t, packed):
    if dwords == 0:
        return "N"
    if dwords == 1:
        if packed:
            return "PkF16" if t in ("f16", "bf16") else "PkB16"
        if t in ("f16", "bf16"):
            return "F16"
        if t in ("i16", "u16", "b16"):
            return "B16"
        return "F32" if t == "f32" else "B32"
    if dwords == 2:
        return "F64" if t == "f64" else "B64"
    return {3: "B96", 4: "B128", 8: "B256", 16: "B512"}.get(dwords, "B%d" % (32 * dwords))


def signature(fam, name, ops):
    """[dst, src0, src1, src2] types and the flags of one row."""
    tys = [t for t in name.split("_")[1:] if t in TYPES]
    packed = name.startswith("v_pk_") or name.startswith("v_dot") or name.startswith("v_wmma")
    dst_t = tys[0] if tys else "b32"
    src_t = tys[1] if len(tys) > 1 else dst_t
    if "cmp" in name or name.startswith("v_dual_cmp"):
        src_t = dst_t
    widths = [0, 0, 0, 0]
    flags = []
    roles = ROLES.get(fam)
    if fam == "flat":
        # vdst (v5) if the instruction returns data, the address (a register or `off`), then
        # the data (v2 both).
        toks = list(ops)
        if toks and width(toks[0])[1] == "v5":
            widths[0] = width(toks.pop(0))[0]
        if len(toks) > 1 and width(toks[1])[0]:
            widths[2] = width(toks[1])[0]
    elif roles is None:
        # scalar-immediate, memory and buffer families: the first register is the data slot.
        for tok in ops:
            w, reg = width(tok)
            if w:
                widths[0] = w
                break
    else:
        for tok in ops:
            w, reg = width(tok)
            if re.search(r"^v\d+\.[lh]$", tok):
                flags.append("TRUE16")
            if tok == "vcc_lo":
                flags.append("VCC")
            elif tok == "null" or (fam == "vop3" and tok == "s0"):
                flags.append("SDST")
            elif tok.startswith("0x41200000"):
                flags.append("K")
            elif w and reg in roles:
                slot = roles[reg]
                if widths[slot]:
                    continue
                widths[slot] = w
                if slot == 0 and reg[0] == "s" and fam.startswith("v"):
                    flags.append("SGPR_DST")
    dst_packed = packed and not name.startswith("v_dot")
    types = [ty(widths[0], dst_t, dst_packed)] + [ty(w, src_t, packed) for w in widths[1:]]
    return types, flags


# The operand slot (0 dst, 2 src1) whose VGPR field's bit 7 sweep.py's TRUE16_BITS name.
HIGH_HALF_SLOTS = {"vop1": {24: 0}, "vop2": {24: 0, 16: 2}, "vopc": {16: 2}}


def high_halves(fam, types, true16):
    """The bits of a row's zero mask that pick the high half of a 16-bit operand: those the
    true16 llvm-mc accepts (`true16`, from sweep.py) where the row types the operand as 16-bit,
    so the decoder reads the half (`v4.h`). Where the row types it wider (v_sat_pk_u8_i16's
    destination: 16-bit to LLVM 22, a 32-bit register in LLVM 19's text the types come from)
    the decoder could not read it as a half, so the bit stays refused."""
    mask = 0
    for bit, slot in HIGH_HALF_SLOTS.get(fam, {}).items():
        if true16 >> bit & 1 and types[slot] in ("F16", "B16"):
            mask |= 1 << bit
    return mask


def ident(name):
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))


ops = {}
tables = {}
for fam in FAMS:
    rows = []
    for key, (text, zero, lo128, true16) in sorted(load(fam).items()):
        if fam in ("vopdx", "vopdy"):
            text = text.split(" :: ")[0 if fam == "vopdx" else 1]
        name, toks = split(text)
        types, flags = signature(fam, base(name), toks)
        if base(name) != name:
            flags.append("SUFFIX")
        if fam == "mimg":
            # Register counts come from MIMG_SHAPE, not from operand types.
            types = ["N"] * 4
            flags += ["SAMPLER"] if len(toks) == 4 else []
        else:
            names = {"0": "LO128_SRC0", "1": "LO128_SRC1", "v": "VGPR_SRC0", "P": "NO_DPP16",
                     "8": "NO_DPP8", "o": "HIDDEN_OPSEL", "a": "HIDDEN_ABS", "n": "HIDDEN_NEG",
                     "h": "HIDDEN_OPSEL_HI"}
            flags += [names[c] for c in lo128]
        zero &= ~high_halves(fam, types, true16)
        name = base(name)
        ops.setdefault(name, None)
        rows.append((key, name, types, flags, zero))
    tables[fam] = rows


def mimg_forms(half):
    """Per MIMG row key, for the sequential (half 0) or the NSA (half 1) form: the address
    dwords, and for each data size n LLVM computes (from dmask, d16 and tfe) the data dwords it
    prints and whether with this row's address size or with another (when LLVM has no variant
    of that size it keeps the one its decoder table matched first). Derived from the sweep's
    dmask/d16/tfe observations and checked against every one of them."""
    rows = {k: (t, v.split()[16 * half:16 * half + 16]) for k, (t, _, v, _) in load("mimg").items()}
    combos = [(dm, d16, tfe) for dm in (1, 3, 7, 15) for d16 in (0, 1) for tfe in (0, 1)]

    def formula(name, dm, d16, tfe):
        n = 4 if "gather4" in name or "msaa_load" in name else bin(dm).count("1")
        return (n + 1) // 2 + tfe if d16 else n + tfe

    obs = {}
    for key, (text, pairs) in rows.items():
        name = text.split()[0]
        obs[key] = [(formula(name, *c), tuple(map(int, p.split(":"))) if p != "-" else None)
                    for c, p in zip(combos, pairs)]
    # A row whose address size LLVM has no variant for prints one shape whatever the dmask.
    fallback = {k for k, o in obs.items()
                if len({p for _, p in o if p}) == 1 and any(p and p[0] != n for n, p in o)}
    addr = {}
    for key, o in obs.items():
        sizes = Counter(p[1] for n, p in o if p and p[0] == n)
        addr[key] = sizes.most_common(1)[0][0] if sizes else 0
    data, other = {}, {}
    for key, o in obs.items():
        op = key // 16
        data.setdefault(op, {})
        other.setdefault(op, Counter())
        if key in fallback:
            continue
        for n, p in o:
            if p:
                keep = p[1] == addr[key]
                data[op].setdefault(n, Counter())[(p[0], keep)] += 1
                if not keep:
                    other[op][p[1]] += 1
    out, bad = {}, 0
    for key, o in sorted(obs.items()):
        op = key // 16
        if key in fallback:
            vd, va = next(p for _, p in o if p)
            entries, oth = [vd] * 6, va
        else:
            entries = [0] * 6
            for n, c in data[op].items():
                vd, keep = c.most_common(1)[0][0]
                entries[n] = vd | (0x80 if keep else 0)
            oth = other[op].most_common(1)[0][0] if other[op] else 0
        for n, p in o:
            e = entries[n]
            bad += p is not None and p != (e & 0x7f, addr[key] if e & 0x80 else oth)
        out[key] = (addr[key], entries, oth)
    if bad:
        print("emit.py: %d MIMG register counts the model does not predict" % bad, file=sys.stderr)
    return out


os.makedirs(OUT, exist_ok=True)
with open(os.path.join(OUT, "opcode.rs"), "w") as f:
    f.write("//! Every GFX11 opcode llvm-mc-19 decodes for gfx1100, by mnemonic (`define_ops!` is in\n"
            "//! `isa.rs`).\n//!\n//! Generated by `gfx11/tablegen/emit.py` from a sweep of every opcode value of every\n"
            "//! encoding through `llvm-mc-19 --disassemble`. Regenerate rather than edit by hand.\n\n"
            "define_ops! {\n")
    for name in sorted(ops):
        f.write("    %s = \"%s\";\n" % (ident(name), name))
    f.write("}\n")
with open(os.path.join(OUT, "tables.rs"), "w") as f:
    f.write("//! Opcode numbers of every GFX11 encoding for gfx1100, with operand types: dst, src0,\n"
            "//! src1, src2.\n//!\n//! Generated by `gfx11/tablegen/emit.py` from the same `llvm-mc-19 --disassemble` sweep as\n"
            "//! `opcode.rs`. FLAT opcodes are keyed by `segment * 1000 + opcode` (segment 0 flat,\n"
            "//! 1 scratch, 2 global), MIMG ones by `opcode * 16 + dim * 2 + a16`. VOP3 lists every opcode LLVM accepts there, VOPC, VOP2 and VOP1\n"
            "//! ones promoted to it included. Regenerate rather than edit by hand.\n\n"
            "use super::isa::{MimgForm, MimgShape, Op, Row, RowFlags};\nuse crate::gpu::shader::isa::Ty::{%s};\n\n"
            % ", ".join(sorted({t for rows in tables.values() for _, _, types, _, _ in rows for t in types})))
    f.write("/// MIMG register counts by row key (see [`super::isa::MimgShape`]).\n"
            "pub(crate) const MIMG_SHAPE: &[MimgShape] = &[\n")
    seq, nsa = mimg_forms(0), mimg_forms(1)
    form = lambda a, e, o: "MimgForm::new(%d, [%s], %d)" % (a, ", ".join("0x%x" % x for x in e), o)
    # The sequential variant LLVM's decoder table matches first for each opcode: what a row
    # whose address size has no variant prints (a fallback row: one shape for every n).
    first = {}
    for key, (a, e, o) in sorted(seq.items()):
        if len(set(e)) == 1 and not e[0] & 0x80:
            first.setdefault(key // 16, (e[0], o))
    for key in sorted(seq):
        fd, fa = first.get(key // 16, (0, 0))
        f.write("    MimgShape::new(%d, %s, %s, (%d, %d)),\n"
                % (key, form(*seq[key]), form(*nsa[key]), fd, fa))
    f.write("];\n\n")
    # s_sendmsg: which immediates print as `sendmsg(...)`, by their low ten bits; some print
    # alike whatever bits 10-15 hold, the others only with those bits clear.
    texts = {imm: re.search(r"sendmsg\(.*\)", t) for imm, (t, _, _, _) in load("sendmsg").items()}
    f.write("/// The `s_sendmsg` immediates llvm-mc-19 prints symbolically: (bits 9:0, whether bits\n"
            "/// 15:10 may hold anything rather than zero, the text).\n"
            "pub(crate) const SENDMSG: &[(u16, bool, &str)] = &[\n")
    for low in range(1024):
        sym = {imm >> 10: m.group(0) for imm, m in texts.items() if imm & 0x3ff == low and m}
        if sym:
            any_high = len(sym) == 64 and len(set(sym.values())) == 1
            assert any_high or list(sym) == [0], "sendmsg %d: unexpected pattern" % low
            f.write("    (%d, %s, \"%s\"),\n" % (low, "true" if any_high else "false", sym[0]))
    f.write("];\n\n")
    f.write("/// `s_sendmsg_rtn_*`'s message operand as llvm-mc-19 prints it, by the field's value.\n"
            "pub(crate) const SENDMSG_RTN: [&str; 256] = [\n")
    for msg, (text, _, _, _) in sorted(load("sendmsg_rtn").items()):
        f.write("    \"%s\",\n" % re.search(r"sendmsg\(.*\)", text).group(0))
    f.write("];\n\n")
    f.write("/// The names llvm-mc-19 gives hardware registers by id (empty: printed as a number).\n"
            "pub(crate) const HWREG_NAMES: [&str; 64] = [\n")
    for reg, (text, _, _, _) in sorted(load("hwreg").items()):
        m = re.search(r"hwreg\((HW_REG_\w+)", text)
        f.write("    \"%s\",\n" % (m.group(1) if m else ""))
    f.write("];\n\n")
    f.write("/// What llvm-mc-19 prints after an MTBUF's soffset for each value of its format field\n"
            "/// (nothing for the default, 1).\npub(crate) const MTBUF_FORMAT: [&str; 128] = [\n")
    for fmt, (text, _, _, _) in sorted(load("ufmt").items()):
        m = re.search(r" format:\S+", text)
        f.write("    \"%s\",\n" % (m.group(0) if m else ""))
    f.write("];\n\n")
    for fam in FAMS:
        f.write("/// %s opcodes.\npub(crate) const %s: &[Row] = &[\n" % (fam.upper(), fam.upper()))
        for key, name, types, flags, zero in tables[fam]:
            fl = "RowFlags::NONE"
            for x in sorted(set(flags), key=flags.index):
                fl = "RowFlags::" + x if fl == "RowFlags::NONE" else fl + ".with(RowFlags::%s)" % x
            z = ".zero(0x%x)" % zero if zero else ""
            f.write("    Row::new(%d, Op::%s, [%s], %s)%s,\n" % (key, ident(name), ", ".join(types), fl, z))
        f.write("];\n\n")
