import subprocess, sys, re
def dis(words_list, mcpu):
    # words_list: list of lists of u32; returns list of text lines (one per instruction) -- disassemble separately separated
    out=[]
    inp = "\n".join(" ".join("0x%02x"%((w>>(8*i))&0xff) for w in ws for i in range(4)) for ws in words_list)
    r = subprocess.run(["llvm-mc-19","-arch=amdgcn","-mcpu="+mcpu,"--disassemble"],input=inp,capture_output=True,text=True)
    lines=[l.strip() for l in r.stdout.splitlines() if l.strip() and not l.strip().startswith('.text')]
    return r.stdout, r.stderr
fam = sys.argv[1]; mcpu=sys.argv[2]
res={}
def one(ws):
    so,se = dis([ws],mcpu)
    if 'invalid' in se: return None
    lines=[l.strip() for l in so.splitlines() if l.strip() and not l.strip().startswith('.text')]
    return lines[0] if lines else None
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
inp="\n".join(" ".join("0x%02x"%((w>>(8*i))&0xff) for w in ws for i in range(4)) for _,ws in cases)
for op,ws in cases:
    t=one(ws)
    if t is None and len(ws)==2 and fam in ('vop3','vop3p'):
        t=one([ws[0], ws[1] & ~(0x1ff<<18)])
        if t is None: t=one([ws[0], ws[1] & ~(0x3ffff<<9)])
        if t is None: t=one([ws[0]|(1<<14)|(3<<11), ws[1] & ~(0x1ff<<18)|(3<<27)])
    if t is None and fam=='vop1':
        t=one([(0x3f<<25)|(op<<9)])
    if t is None and fam=='sopp':
        t=one([ws[0]&~0xffff])
    if t is None and fam=='smem':
        base0=(0x30<<26)|(op<<18)
        for w0 in (ws[0]&~((0x7f<<6)|0x3f), ws[0]&~(0x3f), ws[0]&~(0x7f<<6), base0, base0|(2<<6)):
            t=one([w0, 0]) or one([w0,ws[1]])
            if t: break
    if t is None and fam in ('ds','flat','mubuf'):
        import itertools
        for m in itertools.product([0,1],repeat=3):
            w1 = ws[1]
            for bit,(sh) in zip(m,(24,16,8)):
                if bit: w1 &= ~(0xff<<sh)
            if fam=='flat' and ((ws[0]>>14)&3)==0: w1 = w1 & ~(0x7f<<16)
            if fam=='mubuf' and m[1]: w1 = ws[1]   # keep srsrc
            t=one([ws[0],w1])
            if t: break
        if t is None: t=one([ws[0]&~0xffff if fam=='ds' else ws[0]&~0x3fff, 0])
    print("%d\t%s"%(op,t if t else "-"))
