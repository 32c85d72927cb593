//! Synthetic code objects (feature `synth`): a small ELF writer that lays out an AMDGPU HSA
//! code object the way ld.lld does (read-only segment with notes, symbols, hash table, strings,
//! relocations and kernel descriptors; code; dynamic section; data and bss), for tests,
//! benchmarks and fuzz seeds. It also writes clang offload bundles.
//!
//! It can make what a compiler will not: descriptors after the code (negative entry offsets), a
//! first segment at a non-zero address, ABS32 relocations, undefined externals, and objects
//! without section headers.

use rmp::encode as e;

use crate::kernel_descriptor::{KernelDescriptor, kernel_code_property};
use crate::relocation::RelocationKind;
use crate::symbol::{
    STB_GLOBAL, STB_LOCAL, STB_WEAK, STT_FUNC, STT_NOTYPE, STT_OBJECT, STV_DEFAULT, STV_HIDDEN,
    STV_PROTECTED,
};

/// `s_endpgm`, the smallest kernel.
pub const S_ENDPGM: [u8; 4] = [0x00, 0x00, 0x81, 0xbf];

const PAGE: u64 = 0x1000;
const VEC_WRITE: &str = "writing msgpack to a Vec cannot fail";

/// A kernel to synthesise.
#[derive(Debug, Clone)]
pub struct SynthKernel {
    /// Link name (the descriptor is `name.kd`).
    pub name: String,
    /// Machine code (at least 4 bytes).
    pub code: Vec<u8>,
    /// The descriptor; `kernel_code_entry_byte_offset` is filled in.
    pub descriptor: KernelDescriptor,
    /// Explicit arguments: (size, value kind) laid out in order, aligned to their size.
    pub args: Vec<(u32, &'static str)>,
    /// Append the V5 implicit-argument block with these hidden kinds at their V5 offsets.
    pub hidden: Vec<&'static str>,
}

impl SynthKernel {
    /// A kernel of `code` taking `args`, wave64, kernarg pointer enabled.
    pub fn new(name: &str, code: Vec<u8>) -> Self {
        Self {
            name: name.to_owned(),
            code,
            descriptor: KernelDescriptor {
                kernel_code_properties: kernel_code_property::ENABLE_SGPR_KERNARG_SEGMENT_PTR
                    .set(0, 1) as u16,
                compute_pgm_rsrc2: crate::kernel_descriptor::rsrc2::USER_SGPR_COUNT.set(0, 2),
                ..KernelDescriptor::default()
            },
            args: vec![(8, "global_buffer")],
            hidden: Vec::new(),
        }
    }
}

/// A variable to synthesise.
#[derive(Debug, Clone)]
pub struct SynthVariable {
    /// Name.
    pub name: String,
    /// Initial bytes (in `.data`), or `None` for `.bss` of `size` bytes.
    pub data: Option<Vec<u8>>,
    /// Size in bytes.
    pub size: u64,
    /// Global protected (true) or local hidden, `.symtab` only (false).
    pub exported: bool,
}

/// A device function to synthesise.
#[derive(Debug, Clone)]
pub struct SynthFunction {
    /// Name.
    pub name: String,
    /// Machine code.
    pub code: Vec<u8>,
    /// Global protected (true) or local, `.symtab` only (false).
    pub exported: bool,
}

/// What a synthetic relocation refers to.
#[derive(Debug, Clone)]
pub enum SynthTarget {
    /// `R_AMDGPU_RELATIVE64` to a variable, function or `name.kd` defined here, plus an addend.
    Relative(String, i64),
    /// A relocation of `kind` against the named defined or external symbol, plus an addend.
    Symbol(RelocationKind, String, i64),
}

/// A relocation at `offset` inside variable `variable` (which must have initial data).
#[derive(Debug, Clone)]
pub struct SynthRelocation {
    /// The variable holding the place.
    pub variable: String,
    /// Byte offset of the place in the variable.
    pub offset: u64,
    /// What is written there.
    pub target: SynthTarget,
}

/// An undefined symbol.
#[derive(Debug, Clone)]
pub struct SynthExternal {
    /// Name.
    pub name: String,
    /// Weak (resolves to 0 if nobody defines it).
    pub weak: bool,
}

/// A code object to synthesise.
#[derive(Debug, Clone)]
pub struct Synth {
    /// `e_flags`.
    pub e_flags: u32,
    /// `EI_ABIVERSION` (3 = V5).
    pub abi_version: u8,
    /// `amdhsa.target` (none: no target key).
    pub target_name: Option<String>,
    /// Kernels.
    pub kernels: Vec<SynthKernel>,
    /// Variables.
    pub variables: Vec<SynthVariable>,
    /// Functions.
    pub functions: Vec<SynthFunction>,
    /// Undefined symbols.
    pub externals: Vec<SynthExternal>,
    /// Dynamic relocations.
    pub relocations: Vec<SynthRelocation>,
    /// Virtual address of the first segment.
    pub start_vaddr: u64,
    /// Put the read-only segment (descriptors) after the code: negative entry offsets.
    pub descriptors_after_code: bool,
    /// Write section headers (false: a section-less object, `PT_DYNAMIC` only).
    pub section_headers: bool,
    /// Write `.symtab` (false: as `llvm-strip` leaves it).
    pub symtab: bool,
    /// Write the metadata note.
    pub metadata: bool,
}

impl Default for Synth {
    fn default() -> Self {
        Self {
            e_flags: 0x53f,
            abi_version: 3,
            target_name: Some("amdgcn-amd-amdhsa--gfx90a".into()),
            kernels: Vec::new(),
            variables: Vec::new(),
            functions: Vec::new(),
            externals: Vec::new(),
            relocations: Vec::new(),
            start_vaddr: 0,
            descriptors_after_code: false,
            section_headers: true,
            symtab: true,
            metadata: true,
        }
    }
}

fn align(value: u64, to: u64) -> u64 {
    value.div_ceil(to) * to
}

fn align_len(buf: &mut Vec<u8>, to: u64) {
    let len = align(buf.len() as u64, to);
    pad_to(buf, len);
}

fn pad_to(buf: &mut Vec<u8>, len: u64) {
    buf.resize(len as usize, 0);
}

#[derive(Default)]
struct Strings {
    bytes: Vec<u8>,
}

impl Strings {
    fn new() -> Self {
        Self { bytes: vec![0] }
    }
    fn add(&mut self, s: &str) -> u32 {
        if s.is_empty() {
            return 0;
        }
        let at = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        at
    }
}

struct Sym {
    name: String,
    value: u64,
    size: u64,
    kind: u8,
    bind: u8,
    vis: u8,
    section: u16,
}

fn sym_bytes(out: &mut Vec<u8>, name: u32, s: &Sym) {
    out.extend(name.to_le_bytes());
    out.push(s.bind << 4 | s.kind);
    out.push(s.vis);
    out.extend(s.section.to_le_bytes());
    out.extend(s.value.to_le_bytes());
    out.extend(s.size.to_le_bytes());
}

/// Section indices of the synthetic layout (all of them, in order; some only document it).
#[allow(dead_code)]
mod sec {
    pub const NOTE: u16 = 1;
    pub const DYNSYM: u16 = 2;
    pub const HASH: u16 = 3;
    pub const DYNSTR: u16 = 4;
    pub const RELA: u16 = 5;
    pub const RODATA: u16 = 6;
    pub const TEXT: u16 = 7;
    pub const DYNAMIC: u16 = 8;
    pub const DATA: u16 = 9;
    pub const BSS: u16 = 10;
    pub const SYMTAB: u16 = 11;
    pub const STRTAB: u16 = 12;
    pub const SHSTRTAB: u16 = 13;
    pub const COUNT: u16 = 14;
}

impl Synth {
    /// Write the ELF file.
    pub fn build(&self) -> Vec<u8> {
        let base = self.start_vaddr;
        // --- Code (.text): kernels 256-aligned, then functions 4-aligned.
        let mut text = Vec::new();
        let mut kernel_code_at = Vec::new();
        for k in &self.kernels {
            align_len(&mut text, 256);
            kernel_code_at.push(text.len() as u64);
            text.extend(&k.code);
        }
        let mut function_at = Vec::new();
        for f in &self.functions {
            align_len(&mut text, 4);
            function_at.push(text.len() as u64);
            text.extend(&f.code);
        }
        // --- Data (.data then .bss).
        let mut data = Vec::new();
        let mut variable_at = Vec::new();
        for v in self.variables.iter().filter(|v| v.data.is_some()) {
            align_len(&mut data, 8);
            variable_at.push((v.name.clone(), data.len() as u64));
            data.extend(v.data.as_deref().unwrap_or_default());
            let written = v.data.as_ref().map_or(0, Vec::len);
            data.resize(data.len() + (v.size as usize).saturating_sub(written), 0);
        }
        let mut bss_size = 0u64;
        let mut bss_at = Vec::new();
        for v in self.variables.iter().filter(|v| v.data.is_none()) {
            bss_size = align(bss_size, 8);
            bss_at.push((v.name.clone(), bss_size));
            bss_size += v.size;
        }

        // Sizes of the read-only tables depend only on the dynamic symbols' names (in the order
        // of `dynamic_symbols` below), not on any address.
        let mut dynstr = Strings::new();
        let note = self.metadata_note();
        let names = self.dynamic_names();
        let dyn_syms = names.len();
        let dynstr_size: u64 = 1 + names.iter().map(|n| n.len() as u64 + 1).sum::<u64>();
        let dynsym_size = 24 * (1 + dyn_syms as u64);
        let nbucket = (dyn_syms as u32 / 2).max(1);
        let hash_size = 4 * (2 + u64::from(nbucket) + 1 + dyn_syms as u64);
        let rela_size = 24 * self.relocations.len() as u64;
        let rodata_size = 64 * self.kernels.len() as u64;

        // --- File layout: offsets equal vaddr - base; each segment starts on a page.
        let phnum = 6 + u16::from(self.descriptors_after_code);
        let ehdr_phdrs = 64 + 56 * u64::from(phnum);
        let note_off = align(ehdr_phdrs, 4);
        let dynsym_off = align(note_off + note.len() as u64, 8);
        let hash_off = align(dynsym_off + dynsym_size, 8);
        let dynstr_off = hash_off + hash_size;
        let rela_off = align(dynstr_off + dynstr_size, 8);
        let ro_tables_end = rela_off + rela_size;
        let (rodata_off, text_off, ro_end);
        if self.descriptors_after_code {
            text_off = align(ro_tables_end, PAGE);
            rodata_off = align(text_off + text.len() as u64, PAGE);
            ro_end = rodata_off + rodata_size;
        } else {
            rodata_off = align(ro_tables_end, 64);
            text_off = align(rodata_off + rodata_size, PAGE);
            ro_end = text_off + text.len() as u64;
        }
        let dynamic_off = align(ro_end, PAGE);
        let dynamic_size = 16 * 10u64;
        let data_off = align(dynamic_off + dynamic_size, PAGE);
        let data_end = data_off + data.len() as u64;
        let bss_vaddr = base + align(data_end, 8);

        let kd_vaddr = |i: usize| base + rodata_off + 64 * i as u64;
        let code_vaddr = |i: usize| base + text_off + kernel_code_at[i];
        let var_vaddr = |name: &str| -> Option<u64> {
            variable_at
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, at)| base + data_off + at)
                .or_else(|| {
                    bss_at
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|(_, at)| bss_vaddr + at)
                })
        };

        // --- Symbols: dynamic ones are the exported definitions, then the externals.
        let mut dynamic_symbols = Vec::new();
        let mut local_symbols = Vec::new();
        for (i, k) in self.kernels.iter().enumerate() {
            dynamic_symbols.push(Sym {
                name: k.name.clone(),
                value: code_vaddr(i),
                size: k.code.len() as u64,
                kind: STT_FUNC,
                bind: STB_GLOBAL,
                vis: STV_PROTECTED,
                section: sec::TEXT,
            });
            dynamic_symbols.push(Sym {
                name: format!("{}.kd", k.name),
                value: kd_vaddr(i),
                size: 64,
                kind: STT_OBJECT,
                bind: STB_GLOBAL,
                vis: STV_PROTECTED,
                section: sec::RODATA,
            });
        }
        for v in &self.variables {
            let s = Sym {
                name: v.name.clone(),
                value: var_vaddr(&v.name).unwrap_or(0),
                size: v.size,
                kind: STT_OBJECT,
                bind: if v.exported { STB_GLOBAL } else { STB_LOCAL },
                vis: if v.exported {
                    STV_PROTECTED
                } else {
                    STV_HIDDEN
                },
                section: if v.data.is_some() {
                    sec::DATA
                } else {
                    sec::BSS
                },
            };
            if v.exported {
                dynamic_symbols.push(s);
            } else {
                local_symbols.push(s);
            }
        }
        for (i, f) in self.functions.iter().enumerate() {
            let s = Sym {
                name: f.name.clone(),
                value: base + text_off + function_at[i],
                size: f.code.len() as u64,
                kind: STT_FUNC,
                bind: if f.exported { STB_GLOBAL } else { STB_LOCAL },
                vis: if f.exported {
                    STV_PROTECTED
                } else {
                    STV_DEFAULT
                },
                section: sec::TEXT,
            };
            if f.exported {
                dynamic_symbols.push(s);
            } else {
                local_symbols.push(s);
            }
        }
        for e in &self.externals {
            dynamic_symbols.push(Sym {
                name: e.name.clone(),
                value: 0,
                size: 0,
                kind: STT_NOTYPE,
                bind: if e.weak { STB_WEAK } else { STB_GLOBAL },
                vis: STV_DEFAULT,
                section: 0,
            });
        }
        let symbol_vaddr = |name: &str| -> u64 {
            dynamic_symbols
                .iter()
                .chain(&local_symbols)
                .find(|s| s.name == name)
                .map_or(0, |s| s.value)
        };
        let dynamic_index = |name: &str| -> u32 {
            dynamic_symbols
                .iter()
                .position(|s| s.name == name)
                .map_or(0, |i| i as u32 + 1)
        };

        // --- Read-only tables.
        let mut dynsym = Vec::new();
        sym_bytes(
            &mut dynsym,
            0,
            &Sym {
                name: String::new(),
                value: 0,
                size: 0,
                kind: 0,
                bind: 0,
                vis: 0,
                section: 0,
            },
        );
        for s in &dynamic_symbols {
            let at = dynstr.add(&s.name);
            sym_bytes(&mut dynsym, at, s);
        }
        debug_assert!(dynstr.bytes.len() as u64 <= dynstr_size);
        let mut hash = Vec::new();
        let count = 1 + dynamic_symbols.len() as u32;
        let mut buckets = vec![0u32; nbucket as usize];
        let mut chains = vec![0u32; count as usize];
        for (i, s) in dynamic_symbols.iter().enumerate() {
            let index = i as u32 + 1;
            let b = (crate::hash::sysv_hash(s.name.as_bytes()) % nbucket) as usize;
            chains[index as usize] = buckets[b];
            buckets[b] = index;
        }
        for w in [nbucket, count].into_iter().chain(buckets).chain(chains) {
            hash.extend(w.to_le_bytes());
        }
        let mut rela = Vec::new();
        for r in &self.relocations {
            let place = var_vaddr(&r.variable).unwrap_or(0) + r.offset;
            let (kind, symbol, addend) = match &r.target {
                SynthTarget::Relative(name, addend) => (
                    RelocationKind::Relative64,
                    0,
                    symbol_vaddr(name) as i64 + addend,
                ),
                SynthTarget::Symbol(kind, name, addend) => (*kind, dynamic_index(name), *addend),
            };
            rela.extend(place.to_le_bytes());
            rela.extend((u64::from(symbol) << 32 | u64::from(kind.r_type())).to_le_bytes());
            rela.extend(addend.to_le_bytes());
        }
        let mut rodata = Vec::new();
        for (i, k) in self.kernels.iter().enumerate() {
            let mut kd = k.descriptor;
            kd.kernel_code_entry_byte_offset = code_vaddr(i) as i64 - kd_vaddr(i) as i64;
            kd.kernarg_size = Self::kernarg_size(k);
            rodata.extend(zerocopy::IntoBytes::as_bytes(&kd));
        }
        let mut dynamic = Vec::new();
        for (tag, value) in [
            (4i64, base + hash_off),
            (6, base + dynsym_off),
            (11, 24),
            (5, base + dynstr_off),
            (10, dynstr.bytes.len() as u64),
            (7, base + rela_off),
            (8, rela_size),
            (9, 24),
            (0, 0),
            (0, 0),
        ] {
            dynamic.extend(tag.to_le_bytes());
            dynamic.extend(value.to_le_bytes());
        }

        // --- Assemble the file.
        let mut file = vec![0u8; ehdr_phdrs as usize];
        let put = |file: &mut Vec<u8>, at: u64, bytes: &[u8]| {
            pad_to(file, at.max(file.len() as u64));
            if file.len() < (at as usize + bytes.len()) {
                file.resize(at as usize + bytes.len(), 0);
            }
            file[at as usize..at as usize + bytes.len()].copy_from_slice(bytes);
        };
        put(&mut file, note_off, &note);
        put(&mut file, dynsym_off, &dynsym);
        put(&mut file, hash_off, &hash);
        put(&mut file, dynstr_off, &dynstr.bytes);
        put(&mut file, rela_off, &rela);
        put(&mut file, rodata_off, &rodata);
        put(&mut file, text_off, &text);
        put(&mut file, dynamic_off, &dynamic);
        put(&mut file, data_off, &data);
        let file_end = file.len() as u64;

        // Non-allocated: .symtab, .strtab, .shstrtab, section headers.
        let mut strtab = Strings::new();
        let mut symtab = Vec::new();
        sym_bytes(
            &mut symtab,
            0,
            &Sym {
                name: String::new(),
                value: 0,
                size: 0,
                kind: 0,
                bind: 0,
                vis: 0,
                section: 0,
            },
        );
        for s in local_symbols.iter().chain(&dynamic_symbols) {
            let at = strtab.add(&s.name);
            sym_bytes(&mut symtab, at, s);
        }
        let mut shstrtab = Strings::new();
        let names_at: Vec<u32> = [
            "",
            ".note",
            ".dynsym",
            ".hash",
            ".dynstr",
            ".rela.dyn",
            ".rodata",
            ".text",
            ".dynamic",
            ".data",
            ".bss",
            ".symtab",
            ".strtab",
            ".shstrtab",
        ]
        .iter()
        .map(|n| shstrtab.add(n))
        .collect();
        let symtab_off = align(file_end, 8);
        if self.section_headers && self.symtab {
            put(&mut file, symtab_off, &symtab);
            let strtab_off = file.len() as u64;
            put(&mut file, strtab_off, &strtab.bytes);
        }
        let strtab_off = symtab_off + symtab.len() as u64;
        let shstrtab_off = file.len() as u64;
        let mut shoff = 0;
        let mut shnum = 0u16;
        if self.section_headers {
            put(&mut file, shstrtab_off, &shstrtab.bytes);
            shoff = align(file.len() as u64, 8);
            pad_to(&mut file, shoff);
            shnum = sec::COUNT;
            #[allow(clippy::type_complexity)]
            let headers: [(u32, u64, u64, u64, u64, u32, u32, u64, u64);
                sec::COUNT as usize] = [
                (0, 0, 0, 0, 0, 0, 0, 0, 0),
                (
                    7,
                    2,
                    base + note_off,
                    note_off,
                    note.len() as u64,
                    0,
                    0,
                    4,
                    0,
                ),
                (
                    11,
                    2,
                    base + dynsym_off,
                    dynsym_off,
                    dynsym_size,
                    u32::from(sec::DYNSTR),
                    1,
                    8,
                    24,
                ),
                (
                    5,
                    2,
                    base + hash_off,
                    hash_off,
                    hash_size,
                    u32::from(sec::DYNSYM),
                    0,
                    4,
                    4,
                ),
                (
                    3,
                    2,
                    base + dynstr_off,
                    dynstr_off,
                    dynstr.bytes.len() as u64,
                    0,
                    0,
                    1,
                    0,
                ),
                (
                    4,
                    2,
                    base + rela_off,
                    rela_off,
                    rela_size,
                    u32::from(sec::DYNSYM),
                    0,
                    8,
                    24,
                ),
                (
                    1,
                    2,
                    base + rodata_off,
                    rodata_off,
                    rodata_size,
                    0,
                    0,
                    64,
                    0,
                ),
                (
                    1,
                    6,
                    base + text_off,
                    text_off,
                    text.len() as u64,
                    0,
                    0,
                    256,
                    0,
                ),
                (
                    6,
                    3,
                    base + dynamic_off,
                    dynamic_off,
                    dynamic_size,
                    u32::from(sec::DYNSTR),
                    0,
                    8,
                    16,
                ),
                (
                    1,
                    3,
                    base + data_off,
                    data_off,
                    data.len() as u64,
                    0,
                    0,
                    8,
                    0,
                ),
                (8, 3, bss_vaddr, data_end, bss_size, 0, 0, 8, 0),
                if self.symtab {
                    (
                        2,
                        0,
                        0,
                        symtab_off,
                        symtab.len() as u64,
                        u32::from(sec::STRTAB),
                        1 + local_symbols.len() as u32,
                        8,
                        24,
                    )
                } else {
                    (0, 0, 0, 0, 0, 0, 0, 0, 0)
                },
                if self.symtab {
                    (3, 0, 0, strtab_off, strtab.bytes.len() as u64, 0, 0, 1, 0)
                } else {
                    (0, 0, 0, 0, 0, 0, 0, 0, 0)
                },
                (
                    3,
                    0,
                    0,
                    shstrtab_off,
                    shstrtab.bytes.len() as u64,
                    0,
                    0,
                    1,
                    0,
                ),
            ];
            for (i, (ty, flags, addr, off, size, link, info, align, entsize)) in
                headers.into_iter().enumerate()
            {
                let mut h = Vec::new();
                h.extend(names_at[i].to_le_bytes());
                h.extend(ty.to_le_bytes());
                h.extend(flags.to_le_bytes());
                h.extend(addr.to_le_bytes());
                h.extend(off.to_le_bytes());
                h.extend(size.to_le_bytes());
                h.extend(link.to_le_bytes());
                h.extend(info.to_le_bytes());
                h.extend(align.to_le_bytes());
                h.extend(entsize.to_le_bytes());
                file.extend(h);
            }
        }

        // --- Headers.
        let (ro_memsz, rx_off, rx_size) = if self.descriptors_after_code {
            (ro_tables_end, text_off, text.len() as u64)
        } else {
            (rodata_off + rodata_size, text_off, text.len() as u64)
        };
        let mut loads = vec![
            (4u32, 0u64, ro_memsz, ro_memsz),
            (5, rx_off, rx_size, rx_size),
        ];
        if self.descriptors_after_code {
            loads.push((4, rodata_off, rodata_size, rodata_size));
        }
        loads.push((6, dynamic_off, dynamic_size, dynamic_size));
        loads.push((
            6,
            data_off,
            data.len() as u64,
            bss_vaddr + bss_size - base - data_off,
        ));
        let mut phdrs = Vec::new();
        for (flags, off, filesz, memsz) in &loads {
            phdrs.push((1u32, *flags, *off, *filesz, *memsz, PAGE));
        }
        phdrs.push((2, 6, dynamic_off, dynamic_size, dynamic_size, 8));
        phdrs.push((4, 4, note_off, note.len() as u64, note.len() as u64, 4));
        debug_assert_eq!(phdrs.len(), usize::from(phnum));
        let mut header = Vec::with_capacity(64);
        header.extend(b"\x7fELF");
        header.extend([2, 1, 1, 64, self.abi_version, 0, 0, 0, 0, 0, 0, 0]);
        header.extend(3u16.to_le_bytes());
        header.extend(224u16.to_le_bytes());
        header.extend(1u32.to_le_bytes());
        header.extend(0u64.to_le_bytes());
        header.extend(64u64.to_le_bytes());
        header.extend(shoff.to_le_bytes());
        header.extend(self.e_flags.to_le_bytes());
        header.extend(64u16.to_le_bytes());
        header.extend(56u16.to_le_bytes());
        header.extend(phnum.to_le_bytes());
        header.extend(64u16.to_le_bytes());
        header.extend(shnum.to_le_bytes());
        header.extend(
            (if self.section_headers {
                sec::SHSTRTAB
            } else {
                0
            })
            .to_le_bytes(),
        );
        file[..64].copy_from_slice(&header);
        let mut at = 64usize;
        for (ty, flags, off, filesz, memsz, align) in phdrs {
            let mut p = Vec::with_capacity(56);
            p.extend(ty.to_le_bytes());
            p.extend(flags.to_le_bytes());
            p.extend(off.to_le_bytes());
            p.extend((base + off).to_le_bytes());
            p.extend((base + off).to_le_bytes());
            p.extend(filesz.to_le_bytes());
            p.extend(memsz.to_le_bytes());
            p.extend(align.to_le_bytes());
            file[at..at + 56].copy_from_slice(&p);
            at += 56;
        }
        file
    }

    /// The names of the dynamic symbols, in `.dynsym` order: each kernel and its descriptor,
    /// exported variables, exported functions, externals.
    fn dynamic_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        for k in &self.kernels {
            names.push(k.name.clone());
            names.push(format!("{}.kd", k.name));
        }
        names.extend(
            self.variables
                .iter()
                .filter(|v| v.exported)
                .map(|v| v.name.clone()),
        );
        names.extend(
            self.functions
                .iter()
                .filter(|f| f.exported)
                .map(|f| f.name.clone()),
        );
        names.extend(self.externals.iter().map(|e| e.name.clone()));
        names
    }

    /// Explicit arguments, each aligned to its size, then the 256-byte V5 block if any hidden
    /// argument is asked for.
    fn layout_args(k: &SynthKernel) -> (Vec<(u32, u32, &'static str)>, u32) {
        let mut out = Vec::new();
        let mut at = 0u32;
        for &(size, kind) in &k.args {
            at = at.next_multiple_of(size.clamp(1, 8));
            out.push((at, size, kind));
            at += size;
        }
        if !k.hidden.is_empty() {
            let block = at.next_multiple_of(8);
            for &kind in &k.hidden {
                let hidden = crate::metadata::ValueKind::from_name(kind);
                let crate::metadata::ValueKind::Hidden(h) = hidden else {
                    continue;
                };
                if let Some((offset, size)) = crate::implicit_args::ImplicitLayout::V5.slot(h) {
                    out.push((block + offset, size, kind));
                }
            }
            at = block + 256;
        }
        (out, at)
    }

    fn kernarg_size(k: &SynthKernel) -> u32 {
        Self::layout_args(k).1
    }

    fn metadata_note(&self) -> Vec<u8> {
        if !self.metadata {
            return Vec::new();
        }
        let mut m = Vec::new();
        let top = 2 + u32::from(self.target_name.is_some());
        e::write_map_len(&mut m, top).expect(VEC_WRITE);
        e::write_str(&mut m, "amdhsa.kernels").expect(VEC_WRITE);
        e::write_array_len(&mut m, self.kernels.len() as u32).expect(VEC_WRITE);
        for k in &self.kernels {
            let (args, kernarg) = Self::layout_args(k);
            e::write_map_len(&mut m, 12).expect(VEC_WRITE);
            let kv_str = |m: &mut Vec<u8>, key: &str, value: &str| {
                e::write_str(m, key).expect(VEC_WRITE);
                e::write_str(m, value).expect(VEC_WRITE);
            };
            let kv_u = |m: &mut Vec<u8>, key: &str, value: u64| {
                e::write_str(m, key).expect(VEC_WRITE);
                e::write_uint(m, value).expect(VEC_WRITE);
            };
            kv_str(&mut m, ".name", &k.name);
            kv_str(&mut m, ".symbol", &format!("{}.kd", k.name));
            kv_u(&mut m, ".kernarg_segment_size", u64::from(kernarg));
            kv_u(
                &mut m,
                ".group_segment_fixed_size",
                u64::from(k.descriptor.group_segment_fixed_size),
            );
            kv_u(
                &mut m,
                ".private_segment_fixed_size",
                u64::from(k.descriptor.private_segment_fixed_size),
            );
            kv_u(&mut m, ".kernarg_segment_align", 8);
            kv_u(
                &mut m,
                ".wavefront_size",
                u64::from(k.descriptor.wavefront_size()),
            );
            kv_u(&mut m, ".sgpr_count", 16);
            kv_u(&mut m, ".vgpr_count", 8);
            kv_u(&mut m, ".max_flat_workgroup_size", 1024);
            kv_str(&mut m, ".language", "OpenCL C");
            e::write_str(&mut m, ".args").expect(VEC_WRITE);
            e::write_array_len(&mut m, args.len() as u32).expect(VEC_WRITE);
            for (offset, size, kind) in args {
                e::write_map_len(&mut m, 3).expect(VEC_WRITE);
                kv_u(&mut m, ".offset", u64::from(offset));
                kv_u(&mut m, ".size", u64::from(size));
                kv_str(&mut m, ".value_kind", kind);
            }
        }
        e::write_str(&mut m, "amdhsa.version").expect(VEC_WRITE);
        e::write_array_len(&mut m, 2).expect(VEC_WRITE);
        e::write_uint(&mut m, 1).expect(VEC_WRITE);
        e::write_uint(&mut m, 2).expect(VEC_WRITE);
        if let Some(target) = &self.target_name {
            e::write_str(&mut m, "amdhsa.target").expect(VEC_WRITE);
            e::write_str(&mut m, target).expect(VEC_WRITE);
        }
        let mut note = Vec::new();
        note.extend(7u32.to_le_bytes());
        note.extend((m.len() as u32).to_le_bytes());
        note.extend(32u32.to_le_bytes());
        note.extend(b"AMDGPU\0\0");
        note.extend(&m);
        align_len(&mut note, 4);
        note
    }
}

/// Write an uncompressed clang offload bundle of `(entry id, bytes)` pairs, entries 4096-aligned
/// as clang-offload-bundler places them.
pub fn offload_bundle(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(crate::bundle::BUNDLE_MAGIC);
    out.extend((entries.len() as u64).to_le_bytes());
    let header_len: u64 = out.len() as u64
        + entries
            .iter()
            .map(|(id, _)| 24 + id.len() as u64)
            .sum::<u64>();
    let mut at = align(header_len, PAGE);
    let mut offsets = Vec::new();
    for (id, bytes) in entries {
        offsets.push(at);
        out.extend(at.to_le_bytes());
        out.extend((bytes.len() as u64).to_le_bytes());
        out.extend((id.len() as u64).to_le_bytes());
        out.extend(id.as_bytes());
        at = align(at + bytes.len() as u64, PAGE);
    }
    for ((_, bytes), offset) in entries.iter().zip(offsets) {
        pad_to(&mut out, offset);
        out.extend(*bytes);
    }
    out
}

/// A large code object: `kernels` kernels of `code` bytes each (HIP-like signature, V5 hidden
/// arguments), and a data table with `relocations` alternating RELATIVE64 and ABS64 entries
/// pointing at the kernel descriptors.
pub fn many_kernels(kernels: usize, code: usize, relocations: usize, e_flags: u32) -> Vec<u8> {
    let hidden = vec![
        "hidden_block_count_x",
        "hidden_block_count_y",
        "hidden_block_count_z",
        "hidden_group_size_x",
        "hidden_group_size_y",
        "hidden_group_size_z",
        "hidden_remainder_x",
        "hidden_remainder_y",
        "hidden_remainder_z",
        "hidden_global_offset_x",
        "hidden_global_offset_y",
        "hidden_global_offset_z",
        "hidden_grid_dims",
    ];
    let kernels: Vec<SynthKernel> = (0..kernels)
        .map(|i| {
            let body: Vec<u8> = (0..code).map(|b| (b * 31 + i * 7) as u8).collect();
            let mut k = SynthKernel::new(&format!("_Z6kernel{i}PfS_S_i"), body);
            k.args = vec![
                (8, "global_buffer"),
                (8, "global_buffer"),
                (8, "global_buffer"),
                (4, "by_value"),
            ];
            k.hidden.clone_from(&hidden);
            k
        })
        .collect();
    let names: Vec<String> = kernels.iter().map(|k| format!("{}.kd", k.name)).collect();
    let table = relocations;
    let relocations = (0..relocations)
        .map(|i| SynthRelocation {
            variable: "dispatch_table".into(),
            offset: 8 * i as u64,
            target: if i % 2 == 0 {
                SynthTarget::Relative(names[i % names.len()].clone(), 0)
            } else {
                SynthTarget::Symbol(RelocationKind::Abs64, names[i % names.len()].clone(), 0)
            },
        })
        .collect();
    Synth {
        e_flags,
        target_name: None,
        kernels,
        variables: vec![SynthVariable {
            name: "dispatch_table".into(),
            data: Some(vec![0; 8 * table]),
            size: 8 * table as u64,
            exported: true,
        }],
        relocations,
        ..Synth::default()
    }
    .build()
}

/// An offload bundle with a host entry and three code objects (gfx90a, gfx942, gfx1100) of
/// `kernels` kernels with `code` bytes of code each: the shape of a HIP fat binary.
pub fn fat_binary(kernels: usize, code: usize) -> Vec<u8> {
    let gfx90a = many_kernels(kernels, code, 64, 0x53f);
    let gfx942 = many_kernels(kernels, code, 64, 0x54c);
    let gfx1100 = many_kernels(kernels, code, 64, 0x41);
    offload_bundle(&[
        ("host-x86_64-unknown-linux-gnu-", &[]),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", &gfx90a),
        ("hipv4-amdgcn-amd-amdhsa--gfx942", &gfx942),
        ("hipv4-amdgcn-amd-amdhsa--gfx1100", &gfx1100),
    ])
}
