"""Write isa/opcode.rs and decode/tables.rs from the llvm-mc-19 opcode sweep (see
regenerate.sh).

usage: emit.py <sweep dir> <shader dir>
"""
import re, sys, os, collections
SWEEP=sys.argv[1]
OUT=sys.argv[2]
FAMS=['sop2','sopk','sop1','sopc','sopp','smem','vop2','vop1','vopc','vop3','vop3p','ds','flat','mubuf']
TARGETS=['gfx90a','gfx942']
def load(fam,t):
    d={}
    for line in open(os.path.join(SWEEP, f'{fam}.{t}.txt')):
        k,txt=line.rstrip('\n').split('\t',1)
        if txt=='-': continue
        d[int(k)]=txt
    return d
data={f:{t:load(f,t) for t in TARGETS} for f in FAMS}
def split(txt):
    txt=re.sub(r'/\*.*?\*/','',txt)
    parts=txt.split(None,1)
    m=parts[0]; ops=[]
    if len(parts)>1:
        # split on ', ' but keep things like hwreg(...)
        depth=0; cur=''
        for ch in parts[1]:
            if ch=='(' : depth+=1
            if ch==')' : depth-=1
            if ch==',' and depth==0: ops.append(cur.strip()); cur=''; continue
            cur+=ch
        ops.append(cur.strip())
    return m,ops
def base(m):
    for suf in ('_e32','_e64','_sdwa','_dpp'):
        if m.endswith(suf): return m[:-len(suf)]
    return m
def width(tok):
    tok=tok.split()[0]
    m=re.match(r'^[vsa]\[(\d+):(\d+)\]$',tok)
    if m: return int(m.group(2))-int(m.group(1))+1
    if re.match(r'^[vsa]\d+$',tok): return 1
    if tok in ('vcc','exec'): return 2
    return None
def ident(name):
    return ''.join(p[:1].upper()+p[1:] for p in name.split('_'))
TYPE_RE=re.compile(r'^(f16|f32|f64|bf16|i16|u16|b16|i32|u32|b32|i64|u64|b64|i24|u24|i8|u8|i4|u4|fp8|bf8)$')
def types_of(name):
    toks=name.split('_')[1:]
    return [t for t in toks if TYPE_RE.match(t)]
def mkty(w, t, packed=False):
    if w==0: return 'N'
    if packed:
        if w==1: return 'PkF16' if t in ('f16','bf16') else 'PkB16'
        if w==2: return 'PkF32' if t=='f32' else 'B64'
    if w==1:
        if t in ('f16','bf16'): return 'F16'
        if t in ('i16','u16','b16'): return 'B16'
        if t=='f32': return 'F32'
        return 'B32'
    if w==2: return 'F64' if t=='f64' else 'B64'
    return 'B%d' % (32*w)
ops=collections.OrderedDict()   # name -> dict(family, sig)
enc={f:collections.OrderedDict() for f in FAMS}
def add_op(name,fam,sig):
    if name not in ops: ops[name]=dict(family=fam,sig=sig)
def vop_sig(name, fam, opnds):
    # opnds: printed operands of the sweep text
    tys=types_of(name)
    packed = name.startswith('v_pk_') or name.startswith('v_dot')
    dst_t = tys[0] if tys else 'b32'
    src_t = tys[1] if len(tys)>1 else dst_t
    if name.startswith('v_cmp'): src_t = tys[0] if tys else 'b32'
    # positions
    d=sd='N'; srcs=[]
    toks=list(opnds)
    if fam in ('vopc',):
        # e64 sweep: sdst, src0, src1
        sd='B64'; srcs=toks[1:]
    else:
        d_tok=toks[0] if toks else None
        rest=toks[1:]
        if rest and (rest[0].startswith('s[') or rest[0]=='vcc') and name in CARRY_OUT:
            sd='B64'; rest=rest[1:]
        d = mkty(width(d_tok) or 1, dst_t, packed and not name.startswith('v_dot')) if d_tok else 'N'
        srcs=rest
    st=[]
    for i,o in enumerate(srcs[:3]):
        w=width(o) or 1
        t=src_t
        if name.startswith('v_dot'):
            p = i<2
            st.append(mkty(w, 'f16' if ('f16' in name and p) else ('i16' if p and '16' in name else dst_t), packed=p and ('16' in name)))
            continue
        if name in ('v_mad_u32_u16','v_mad_i32_i16') and i==2: t=dst_t
        if name in ('v_mad_u64_u32','v_mad_i64_i32') and i==2: t='b64'
        if name.startswith('v_ldexp') and i==1: t='i32' if dst_t!='f16' else 'i16'
        if name.startswith('v_trig_preop') and i==1: t='i32'
        if re.match(r'v_cmpx?_class', name) and i==1: t='i32'
        if name.startswith('v_cndmask') and i==2: st.append('B64'); continue
        if name in CARRY_IN and i==2: st.append('B64'); continue
        if name.startswith('v_lshl_add_u64') and i==1: t='u32'
        if name in ('v_lshlrev_b64','v_lshrrev_b64','v_ashrrev_i64') and i==0: t='u32'
        if name.startswith('v_pk_') and name.endswith('f32') : t='f32'
        st.append(mkty(w,t,packed))
    while len(st)<3: st.append('N')
    return [d,sd]+st
CARRY_OUT={'v_add_co_u32','v_sub_co_u32','v_subrev_co_u32','v_addc_co_u32','v_subb_co_u32','v_subbrev_co_u32','v_div_scale_f32','v_div_scale_f64','v_mad_u64_u32','v_mad_i64_i32'}
CARRY_IN={'v_addc_co_u32','v_subb_co_u32','v_subbrev_co_u32'}
def tmask(code,fam):
    ins=[t for t in TARGETS if code in data[fam][t]]
    return 'ALL' if len(ins)==2 else ('GFX90A' if ins==['gfx90a'] else 'GFX942')
for fam in FAMS:
    codes=sorted(set(data[fam]['gfx90a'])|set(data[fam]['gfx942']))
    for code in codes:
        names=set()
        for t in TARGETS:
            if code in data[fam][t]: names.add(base(split(data[fam][t][code])[0]))
        # the VOP3 sweep overlaps VOP3P at 896+ ; skip
        if fam=='vop3' and code>=896: continue
        if fam=='sop2' and code>=53: continue   # collide with SOPK/SOP1/SOPC/SOPP
        if fam=='sopk' and code>=22: continue
        txt = data[fam]['gfx90a'].get(code) or data[fam]['gfx942'][code]
        if len(names)>1:
            # target-specific names: separate entries
            for t in TARGETS:
                if code in data[fam][t]:
                    m,o=split(data[fam][t][code]); n=base(m)
                    enc[fam].setdefault((code,n),('GFX90A' if t=='gfx90a' else 'GFX942'))
                    add_op(n,fam,(fam,o))
            continue
        m,o=split(txt); n=base(m)
        enc[fam][(code,n)]=tmask(code,fam)
        add_op(n,fam,(fam,o))
# prefer the VOP3 (e64) sweep text for signature of VOP ops, else the native one
vop3text={}
for (code,n),tm in enc['vop3'].items():
    t = data['vop3']['gfx90a'].get(code) or data['vop3']['gfx942'].get(code)
    vop3text[n]=split(t)[1]
for (code,n),tm in enc['vop3p'].items():
    t = data['vop3p']['gfx90a'].get(code) or data['vop3p']['gfx942'].get(code)
    vop3text[n]=split(t)[1]
sigs={}
for n,info in ops.items():
    fam,o=info['sig']
    if fam in ('vop1','vop2','vopc','vop3','vop3p'):
        if n in vop3text:
            o=vop3text[n]; f='vopc' if fam=='vopc' else 'vop3'
        else:
            f=fam
            if fam=='vop2': 
                # e32 text: dst, [vcc], src0, src1 [,vcc]  (madmk/fmamk have a literal)
                o=[x for x in o if not x.startswith('0x')]
                if n in CARRY_OUT: o=[o[0],'vcc']+o[2:]
            if fam=='vopc': o=['vcc']+o[1:]
            f='vopc' if fam=='vopc' else 'vop3'
        sigs[n]=vop_sig(n,f,o)
    else:
        sigs[n]=None


def mem_width(name):
    m=re.search(r'dwordx(\d)',name)
    if m: return int(m.group(1))
    if 'dword' in name: return 1
    for suf,w in (('_xyzw',4),('_xyz',3),('_xy',2),('_x',1)):
        if name.endswith(suf):
            if 'd16' in name: return (w+1)//2
            return w
    if name.endswith('_x2') or name.endswith('f64') or name.endswith('_b64') or name.endswith('_u64') or name.endswith('_i64'): return 2
    return 1
def reg_w(tok):
    return width(tok) or 1
def sig_nonvop(n, fam, o):
    B=lambda w: 'N' if w==0 else ('B32' if w==1 else ('B64' if w==2 else 'B%d'%(32*w)))
    if fam=='sop2':
        return [B(reg_w(o[0])),'N',B(reg_w(o[1])),B(reg_w(o[2])),'N'] if len(o)==3 else ['N','N',B(reg_w(o[0])),B(reg_w(o[1])),'N']
    if fam=='sop1':
        if len(o)==2: return [B(reg_w(o[0])),'N',B(reg_w(o[1])),'N','N']
        if len(o)==1:
            if o[0] in ('s4','s[4:5]'): return [B(reg_w(o[0])),'N','N','N','N']
            return ['N','N',B(reg_w(o[0])),'N','N']
        return ['N']*5
    if fam=='sopc':
        return ['N','N',B(reg_w(o[0])),B(reg_w(o[1])),'N']
    if fam=='sopk':
        if n.startswith('s_setreg'): return ['N','N','B32','N','N']
        if n.startswith('s_cmpk'): return ['N','N','B32','N','N']
        if o and re.match(r'^s(\[|\d)',o[0]): return [B(reg_w(o[0])),'N','N','N','N']
        return ['N']*5
    if fam=='sopp': return ['N']*5
    if fam=='smem':
        if n in ('s_memtime','s_memrealtime'): return ['B64','N','N','N','N']
        if n.startswith('s_dcache_inv') or n.startswith('s_dcache_wb') : return ['N']*5
        sb='B128' if 'buffer' in n else 'B64'
        if n.startswith('s_dcache_discard'): return ['N','N',sb,'B32','N']
        if n.startswith('s_atc_probe'): return ['N','N',sb,'B32','N']
        w=reg_w(o[0])
        return ['B%d'%(32*w) if w>2 else B(w),'N',sb,'B32','N']
    if fam=='ds': return ds_sig(n)
    if fam in ('flat','mubuf'): return vmem_sig(n)
    return None
def W(w): return 'N' if w==0 else ('B32' if w==1 else ('B64' if w==2 else 'B%d'%(32*w)))
def elem_w(n):
    return 2 if re.search(r'_(b64|u64|i64|f64)$',n) or n.endswith('_x2') else 1
def ds_sig(n):
    w=elem_w(n)
    if n in ('ds_nop',): return ['N']*5
    if n in ('ds_append','ds_consume','ds_read_addtid_b32'): return ['B32','N','N','N','N']
    if n.startswith('ds_gws') : return ['N','N','B32','N','N']
    if n=='ds_swizzle_b32': return ['B32','N','B32','N','N']
    if n in ('ds_permute_b32','ds_bpermute_b32'): return ['B32','N','B32','B32','N']
    m=re.match(r'ds_read2(st64)?_b(32|64)$',n)
    if m: return [W(2*(int(m.group(2))//32)),'N','B32','N','N']
    m=re.match(r'ds_read_b(64|96|128)$',n)
    if m: return [W(int(m.group(1))//32),'N','B32','N','N']
    if n.startswith('ds_read'): return ['B32','N','B32','N','N']
    m=re.match(r'ds_write2(st64)?_b(32|64)$',n)
    if m: ww=W(int(m.group(2))//32); return ['N','N','B32',ww,ww]
    m=re.match(r'ds_write_b(64|96|128)$',n)
    if m: return ['N','N','B32',W(int(m.group(1))//32),'N']
    if n.startswith('ds_write'): return ['N','N','B32','B32','N']
    rtn='_rtn_' in n
    two = any(k in n for k in ('cmpst','mskor','wrxchg2','_wrap_'))
    if n.startswith('ds_condxchg32'): return ['B64','N','B32','B64','N']
    dw = W(2*w) if 'wrxchg2' in n else W(w)
    return [dw if rtn else 'N','N','B32',W(w), W(w) if two else 'N']
def vmem_sig(n):
    if n in ('buffer_wbl2','buffer_invl2','buffer_inv','buffer_wbinvl1','buffer_wbinvl1_vol'): return ['N']*5
    w=mem_width(n)
    if '_lds_' in n or n.startswith('buffer_store_lds'): return ['N']*5
    if '_load_' in n: return [W(w),'N','N','N','N']
    if '_store_' in n: return ['N','N','N',W(w),'N']
    if '_atomic_' in n:
        d = 2*w if 'cmpswap' in n else w
        return [W(w),'N','N',W(d),'N']
    return ['N']*5
out=[]
for n,info in ops.items():
    fam,o=info['sig']
    s=sigs[n]
    if s is None: s=sig_nonvop(n,fam,o)
    if s is None:
        s=['N']*5
    if n=='v_sat_pk_u8_i16': s=['B32','N','PkB16','N','N']
    if n=='v_sad_u16': s=['B32','N','B32','B32','B32']  # LLVM types its sources i32
    if n=='v_cvt_pk_u8_f32': s=['B32','N','F32','B32','B32']
    if n.startswith('v_smfmac'):
        # Sparse matrix ops: the sweep's operand widths are unreliable (invalid field values);
        # dst 4 or 16 registers, src0 a pair, src1 four registers, src2 the index VGPR.
        s=['B128' if '16x16' in n else 'B512','N','B64','B128','B32']
    out.append((n,fam,s))
FAMNAME={'sop2':'Sop2','sopk':'Sopk','sop1':'Sop1','sopc':'Sopc','sopp':'Sopp','smem':'Smem','vop2':'Vop2','vop1':'Vop1','vopc':'Vopc','vop3':'Vop3','vop3p':'Vop3p','ds':'Ds','flat':'Flat','mubuf':'Mubuf'}
def flatfam(n):
    return 'Global' if n.startswith('global_') else ('Scratch' if n.startswith('scratch_') else 'Flat')
lines=[]
lines.append('define_ops! {')
for n,fam,s in out:
    f=FAMNAME[fam]
    if fam=='flat': f=flatfam(n)
    lines.append('    %s = "%s", %s, [%s];' % (ident(n), n, f, ', '.join(s)))
lines.append('}')
OPS_BODY='\n'.join(lines)+'\n'
# VOP3 opcodes 0-447 are the VOPC, VOP2 and VOP1 opcodes promoted to the 64-bit encoding, at
# 0, 256 and 320 (GFX9), except the ones without an e64 form. The decoder places them
# (decode/mod.rs: PROMOTED_TO_VOP3), so the VOP3 table lists only the VOP3-only opcodes (448
# and up), and NO_E64 the exceptions; the sweep must agree with that rule exactly.
VOP3_ONLY=448
promoted={}
for fam,base_code in (('vopc',0),('vop2',256),('vop1',320)):
    for (code,n),tm in enc[fam].items(): promoted[(base_code+code,n)]=tm
swept={k:tm for k,tm in enc['vop3'].items() if k[0]<VOP3_ONLY}
if any(k not in promoted or promoted[k]!=tm for k,tm in swept.items()):
    sys.exit('VOP3 opcodes below %d that are no promoted VOPC/VOP2/VOP1 opcode: %s' % (VOP3_ONLY,
        sorted(k for k,tm in swept.items() if promoted.get(k)!=tm)))
no_e64=sorted({n for (code,n) in promoted if (code,n) not in swept})
if any(k in swept for k in promoted if k[1] in no_e64):
    sys.exit('opcodes with an e64 form on one target only: %s' % no_e64)
encl=[]
for fam in FAMS:
    rows=[]
    for (code,n),tm in enc[fam].items():
        if fam=='vop3' and not VOP3_ONLY<=code<896: continue
        c = (code//1000)*128 + code%1000 if fam=='flat' else code
        rows.append('    (%d, Op::%s, %s),'%(c,ident(n),tm))
    title = 'VOP3-only opcodes' if fam=='vop3' else '%s opcodes' % FAMNAME[fam].upper()
    encl.append('/// %s.\npub(crate) const %s: &[OpcodeRow] = &[\n%s\n];\n'%(title, fam.upper(), '\n'.join(rows)))
    if fam=='vop1':
        encl.append('/// VOPC, VOP2 and VOP1 opcodes without a VOP3 (e64) form.\npub(crate) const NO_E64: &[Op] = &[\n%s\n];\n'
            % '\n'.join('    Op::%s,' % ident(n) for n in no_e64))
ENC_BODY='\n'.join(encl)

HDR_OPS = '''//! Every GFX9 opcode the decoder knows for gfx90a and gfx942, with its mnemonic, home encoding
//! and operand signature (`define_ops!` is in `isa/mod.rs`).
//!
//! Generated by `isa/tablegen/emit.py` from a sweep of every opcode value of every encoding
//! through `llvm-mc-19 --disassemble` for both targets (the mnemonics and register widths are
//! LLVM's); operand kinds (integer, half, single, double, packed) follow the mnemonics' type
//! suffixes. Regenerate rather than edit by hand.

'''
HDR_ENC = '''//! Opcode numbers of every encoding, per target.
//!
//! Generated by `isa/tablegen/emit.py` from the same `llvm-mc-19 --disassemble` sweep as
//! `isa/opcode.rs`. FLAT opcodes are keyed by `segment << 7 | opcode` (segment 0 flat,
//! 1 scratch, 2 global). VOP3 lists only the VOP3-only opcodes: the VOPC, VOP2 and VOP1
//! opcodes are promoted to it by the decoder, except those in `NO_E64`. Regenerate rather than
//! edit by hand.

use super::OpcodeRow;
use crate::gpu::shader::isa::{Op, Targets};

const ALL: Targets = Targets::ALL;
const GFX90A: Targets = Targets::GFX90A;
const GFX942: Targets = Targets::GFX942;

'''
open(os.path.join(OUT, 'isa', 'opcode.rs'), 'w').write(HDR_OPS + OPS_BODY)
open(os.path.join(OUT, 'decode', 'tables.rs'), 'w').write(HDR_ENC + ENC_BODY)
