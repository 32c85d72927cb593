//! A parsed and validated code object: [`CodeObject::parse`] checks everything once (header,
//! segments, dynamic section, symbols, relocations, metadata, kernel descriptors), so that
//! [`CodeObject::load`] is a copy plus arithmetic.

use std::ops::Range;
use std::sync::Arc;

use object::LittleEndian as LE;
use object::read::elf::{ProgramHeader as _, SectionHeader as _};

use crate::dynamic::{DynamicInfo, RELA_ENTRY_SIZE, SYM_ENTRY_SIZE, vaddr_bytes};
use crate::elf_file::{CodeObjectVersion, ElfFile, SHT_DYNSYM, SHT_RELA, SHT_STRTAB, SHT_SYMTAB};
use crate::error::{Error, Result};
use crate::global_symbol::{FunctionSymbol, VariableSymbol};
use crate::hash::{GnuHashTable, SysvHashTable};
use crate::image::LoadedImage;
use crate::image_info::{ImageInfo, NameIndex, SymbolRef};
use crate::implicit_args;
use crate::kernel::{KernelSymbol, PRELOAD_PROLOGUE_SIZE};
use crate::kernel_descriptor::{KERNEL_DESCRIPTOR_ALIGN, KERNEL_ENTRY_ALIGN, KernelDescriptor};
use crate::metadata::Metadata;
use crate::note::{AMDGPU_NOTE_OWNER, NT_AMDGPU_METADATA, notes};
use crate::relocation::{ExternalSymbols, RelocationPlan};
use crate::segment::{ImageLayout, LoadSegment, PF_X, load_segments, place};
use crate::symbol::{
    STT_AMDGPU_HSA_KERNEL, STT_FUNC, STT_OBJECT, Symbol, SymbolTable, read_symbols,
};
use crate::target::TargetId;

/// A validated AMDGPU HSA code object (V4, V5 or V6), borrowing the file's bytes.
#[derive(Debug, Clone)]
pub struct CodeObject<'data> {
    data: &'data [u8],
    segments: Vec<LoadSegment>,
    relocation_read_only: Vec<Range<u64>>,
    dynamic: Option<DynamicInfo>,
    dynamic_symbols: Vec<Symbol<'data>>,
    static_symbols: Vec<Symbol<'data>>,
    relocations: RelocationPlan,
    sysv_hash: Option<&'data [u8]>,
    gnu_hash: Option<&'data [u8]>,
    info: Arc<ImageInfo>,
}

impl<'data> CodeObject<'data> {
    /// Parse and validate a code object. Nothing in `data` is trusted: every offset, size,
    /// index, count and alignment is checked, and a defect is an [`Error`] that names it.
    pub fn parse(data: &'data [u8]) -> Result<Self> {
        let (elf, version) = ElfFile::parse_code_object(data)?;
        let target = TargetId::from_e_flags(elf.e_flags())?;
        if target.processor.is_generic && version < CodeObjectVersion::V6 {
            return Err(Error::BadFlags {
                flags: elf.e_flags(),
                reason: format!(
                    "generic processor {} needs code object V6, this is V{}",
                    target.processor.name,
                    version.number()
                ),
            });
        }
        let (segments, layout) = load_segments(&elf)?;
        let relocation_read_only = elf
            .segments_of_type(object::elf::PT_GNU_RELRO.0)
            .map(|(index, ph)| {
                let start = ph.p_vaddr(LE);
                start
                    .checked_add(ph.p_memsz(LE))
                    .map(|end| start..end)
                    .ok_or_else(|| {
                        Error::malformed(
                            format!("program header {index} (PT_GNU_RELRO)"),
                            "p_vaddr + p_memsz overflows",
                        )
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        let dynamic = DynamicInfo::parse(&elf)?;
        let section_count = elf.section_headers.len();

        let DynamicTables {
            dynamic_symbols,
            sysv_hash,
            gnu_hash,
            rela,
        } = dynamic_tables(&elf, dynamic.as_ref(), &segments, &layout)?;
        let static_symbols = match find_section(&elf, SHT_SYMTAB)? {
            Some(index) => {
                let (bytes, strings) = symbol_section(&elf, index)?;
                read_symbols(
                    SymbolTable::Static,
                    bytes,
                    bytes.len() as u64 / SYM_ENTRY_SIZE,
                    strings,
                    section_count,
                    &layout,
                )?
            }
            None => Vec::new(),
        };
        let relocations = RelocationPlan::parse(&rela, &dynamic_symbols, &layout)?;

        let mut metadata: Option<Metadata> = None;
        for note in notes(&elf)? {
            if note.owner == AMDGPU_NOTE_OWNER && note.kind == NT_AMDGPU_METADATA {
                metadata
                    .get_or_insert_with(Metadata::default)
                    .merge_msgpack(note.desc)
                    .map_err(Error::Metadata)?;
            }
        }
        if let Some(meta_target) = metadata.as_ref().and_then(|m| m.target.as_deref()) {
            check_metadata_target(meta_target, &target)?;
        }

        let mut kernels =
            find_kernels(data, &segments, &layout, &dynamic_symbols, &static_symbols)?;
        if let Some(metadata) = metadata.as_mut() {
            attach_metadata(version, &mut kernels, metadata)?;
        }
        let (variables, functions) = find_globals(&dynamic_symbols, &static_symbols, &kernels);
        let by_name = NameIndex::build(&kernels, &variables, &functions);
        let info = ImageInfo {
            version,
            target,
            layout,
            kernels,
            variables,
            functions,
            by_name,
            metadata,
        };
        Ok(Self {
            data,
            segments,
            relocation_read_only,
            dynamic,
            dynamic_symbols,
            static_symbols,
            relocations,
            sysv_hash,
            gnu_hash,
            info: Arc::new(info),
        })
    }

    /// The target the code object was built for (from `e_flags`).
    pub fn target(&self) -> TargetId {
        self.info.target
    }

    /// The code-object version (from `EI_ABIVERSION`).
    pub fn version(&self) -> CodeObjectVersion {
        self.info.version
    }

    /// Bytes the loaded image occupies.
    pub fn image_size(&self) -> u64 {
        self.info.layout.size
    }

    /// Alignment the image's GPU address needs (the largest `p_align`, at least 256).
    pub fn image_align(&self) -> u64 {
        self.info.layout.align
    }

    /// Where the image lies in the code object's virtual address space.
    pub fn layout(&self) -> ImageLayout {
        self.info.layout
    }

    /// The `PT_LOAD` segments, in address order.
    pub fn segments(&self) -> &[LoadSegment] {
        &self.segments
    }

    /// The relocation-read-only ranges (`PT_GNU_RELRO`: `.dynamic`, `.got`, `.data.rel.ro`,
    /// init/fini arrays) as `p_vaddr..p_vaddr + p_memsz`: written while loading, never by the
    /// code after it.
    pub fn relocation_read_only(&self) -> &[Range<u64>] {
        &self.relocation_read_only
    }

    /// What `PT_DYNAMIC` says, if the object has one.
    pub fn dynamic(&self) -> Option<&DynamicInfo> {
        self.dynamic.as_ref()
    }

    /// `.dynsym`, entry 0 included.
    pub fn dynamic_symbols(&self) -> &[Symbol<'data>] {
        &self.dynamic_symbols
    }

    /// `.symtab`, entry 0 included (empty if stripped).
    pub fn static_symbols(&self) -> &[Symbol<'data>] {
        &self.static_symbols
    }

    /// The dynamic relocations and the undefined symbols they need.
    pub fn relocations(&self) -> &RelocationPlan {
        &self.relocations
    }

    /// The kernels, in descriptor-address order.
    pub fn kernels(&self) -> &[KernelSymbol] {
        &self.info.kernels
    }

    /// The kernel named `name` or `name.kd` (link name), or by its metadata `.name`.
    pub fn kernel(&self, name: &str) -> Option<&KernelSymbol> {
        match self.info.lookup(name)? {
            SymbolRef::Kernel(i) => self.info.kernels.get(i as usize),
            _ => None,
        }
    }

    /// The variables (exported ones, then locals from `.symtab`).
    pub fn variables(&self) -> &[VariableSymbol] {
        &self.info.variables
    }

    /// The functions other than kernel entry points (exported, then locals from `.symtab`).
    pub fn functions(&self) -> &[FunctionSymbol] {
        &self.info.functions
    }

    /// The metadata note's top-level content (its kernels are in [`Self::kernels`]).
    pub fn metadata(&self) -> Option<&Metadata> {
        self.info.metadata.as_ref()
    }

    /// The file's bytes.
    pub fn data(&self) -> &'data [u8] {
        self.data
    }

    /// Look `name` up in `.dynsym` through the object's hash table (`DT_GNU_HASH`, else
    /// `DT_HASH`), as a dynamic linker would. `Ok(None)` if absent or if the object has neither
    /// table. [`Self::kernel`] and friends use their own index; this exists to check the ELF.
    pub fn hash_lookup(&self, name: &str) -> Result<Option<&Symbol<'data>>> {
        let name_of = |index: u32| {
            self.dynamic_symbols
                .get(index as usize)
                .map(|s| s.name)
                .ok_or_else(|| {
                    Error::malformed(
                        "symbol hash table",
                        format!("names symbol {index} beyond .dynsym"),
                    )
                })
        };
        let found = if let Some(table) = self.gnu_hash {
            GnuHashTable::parse(table)?.lookup(name, name_of)?
        } else if let Some(table) = self.sysv_hash {
            SysvHashTable::parse(table)?.lookup(name, name_of)?
        } else {
            None
        };
        Ok(found.map(|i| &self.dynamic_symbols[i as usize]))
    }

    /// Whether the object has a `DT_HASH` and a `DT_GNU_HASH` table.
    pub fn hash_tables(&self) -> (bool, bool) {
        (self.sysv_hash.is_some(), self.gnu_hash.is_some())
    }

    /// Look `name` up in the System V hash table only (`Ok(None)` without one).
    pub fn sysv_hash_lookup(&self, name: &str) -> Result<Option<u32>> {
        let Some(table) = self.sysv_hash else {
            return Ok(None);
        };
        SysvHashTable::parse(table)?.lookup(name, |i| {
            self.dynamic_symbols
                .get(i as usize)
                .map(|s| s.name)
                .ok_or_else(|| Error::malformed("DT_HASH", "index beyond .dynsym"))
        })
    }

    /// Place the image into `dest`, whose first byte will be at GPU address `base_va`: segments
    /// at their offsets, everything else of the image zeroed, relocations applied, undefined
    /// symbols taken from `externals`. `dest` must hold [`Self::image_size`] bytes (more are left
    /// alone) and `base_va` must be aligned to [`Self::image_align`].
    pub fn load(
        &self,
        dest: &mut [u8],
        base_va: u64,
        externals: &dyn ExternalSymbols,
    ) -> Result<LoadedImage> {
        let layout = &self.info.layout;
        if (dest.len() as u64) < layout.size {
            return Err(Error::DestinationTooSmall {
                len: dest.len(),
                needed: layout.size,
            });
        }
        if base_va & (layout.align - 1) != 0 {
            return Err(Error::MisalignedBase {
                base: base_va,
                align: layout.align,
            });
        }
        if base_va.checked_add(layout.size).is_none() {
            return Err(Error::AddressOverflow { base: base_va });
        }
        let image = &mut dest[..layout.size as usize];
        place(self.data, &self.segments, layout, image);
        self.relocations
            .apply(image, base_va, layout.start_vaddr, externals)?;
        Ok(LoadedImage::new(Arc::clone(&self.info), base_va))
    }
}

fn check_metadata_target(text: &str, target: &TargetId) -> Result<()> {
    let from_note =
        TargetId::parse(text).map_err(|e| Error::Metadata(format!("amdhsa.target: {e}")))?;
    // The note omits features that are "any"; e_flags is the authority.
    if from_note.processor != target.processor
        || from_note.xnack.is_specific() != target.xnack.is_specific()
        || from_note.sramecc.is_specific() != target.sramecc.is_specific()
        || (from_note.xnack.is_specific() && from_note.xnack != target.xnack)
        || (from_note.sramecc.is_specific() && from_note.sramecc != target.sramecc)
    {
        return Err(Error::Metadata(format!(
            "amdhsa.target `{text}` disagrees with e_flags ({target})"
        )));
    }
    Ok(())
}

struct DynamicTables<'data> {
    dynamic_symbols: Vec<Symbol<'data>>,
    sysv_hash: Option<&'data [u8]>,
    gnu_hash: Option<&'data [u8]>,
    rela: Vec<&'data [u8]>,
}

/// The bytes from `vaddr` to the end of its segment's file-backed part.
fn vaddr_tail<'data>(
    data: &'data [u8],
    segments: &[LoadSegment],
    vaddr: u64,
    what: &str,
) -> Result<&'data [u8]> {
    let segment = segments
        .iter()
        .find(|s| s.holds_file_bytes(vaddr, 0) && vaddr < s.vaddr + s.file_size)
        .ok_or_else(|| {
            Error::malformed(
                what,
                format!("address {vaddr:#x} is not in the file bytes of a PT_LOAD segment"),
            )
        })?;
    let len = segment.vaddr + segment.file_size - vaddr;
    vaddr_bytes(data, segments, vaddr, len, || what.to_owned())
}

/// `.dynsym`, its hash tables and the dynamic relocations: from `PT_DYNAMIC` when present, else
/// from the section headers (`SHT_DYNSYM`, and `SHT_RELA` sections with `sh_info == 0`).
fn dynamic_tables<'data>(
    elf: &ElfFile<'data>,
    dynamic: Option<&DynamicInfo>,
    segments: &[LoadSegment],
    layout: &ImageLayout,
) -> Result<DynamicTables<'data>> {
    let data = elf.data;
    let section_count = elf.section_headers.len();
    if let Some(d) = dynamic {
        let sysv_hash = d
            .hash
            .map(|v| vaddr_tail(data, segments, v, "DT_HASH"))
            .transpose()?;
        let gnu_hash = d
            .gnu_hash
            .map(|v| vaddr_tail(data, segments, v, "DT_GNU_HASH"))
            .transpose()?;
        let mut dynamic_symbols = Vec::new();
        if let (Some(symtab), Some(strtab)) = (d.symtab, d.strtab) {
            let strsz = d
                .strsz
                .ok_or_else(|| Error::malformed("PT_DYNAMIC", "DT_STRTAB without DT_STRSZ"))?;
            let strings = vaddr_bytes(data, segments, strtab, strsz, || "DT_STRTAB".into())?;
            // The count: from a hash table, else from a section header at the same address.
            let count = if let Some(table) = sysv_hash {
                u64::from(SysvHashTable::parse(table)?.symbol_count())
            } else if let Some(table) = gnu_hash {
                u64::from(GnuHashTable::parse(table)?.symbol_count()?)
            } else {
                let section = elf
                    .section_headers
                    .iter()
                    .find(|s| s.sh_type(LE).0 == SHT_DYNSYM && s.sh_addr(LE) == symtab);
                match section {
                    Some(s) => s.sh_size(LE) / SYM_ENTRY_SIZE,
                    None => {
                        return Err(Error::malformed(
                            "PT_DYNAMIC",
                            "DT_SYMTAB has no DT_HASH, DT_GNU_HASH or section header to size it",
                        ));
                    }
                }
            };
            let size = count.checked_mul(SYM_ENTRY_SIZE).ok_or_else(|| {
                Error::malformed("DT_SYMTAB", format!("{count} symbols overflow"))
            })?;
            let bytes = vaddr_bytes(data, segments, symtab, size, || "DT_SYMTAB".into())?;
            dynamic_symbols = read_symbols(
                SymbolTable::Dynamic,
                bytes,
                count,
                strings,
                section_count,
                layout,
            )?;
        }
        let mut rela = Vec::new();
        if let Some(address) = d.rela {
            if d.relasz != 0 && dynamic_symbols.is_empty() {
                return Err(Error::malformed("PT_DYNAMIC", "DT_RELA without DT_SYMTAB"));
            }
            rela.push(vaddr_bytes(data, segments, address, d.relasz, || {
                "DT_RELA".into()
            })?);
        }
        return Ok(DynamicTables {
            dynamic_symbols,
            sysv_hash,
            gnu_hash,
            rela,
        });
    }

    // No PT_DYNAMIC: read what ROCr reads, the section headers.
    let mut dynamic_symbols = Vec::new();
    let dynsym_index = find_section(elf, SHT_DYNSYM)?;
    if let Some(index) = dynsym_index {
        let (bytes, strings) = symbol_section(elf, index)?;
        dynamic_symbols = read_symbols(
            SymbolTable::Dynamic,
            bytes,
            bytes.len() as u64 / SYM_ENTRY_SIZE,
            strings,
            section_count,
            layout,
        )?;
    }
    let mut rela = Vec::new();
    for (index, section) in elf.section_headers.iter().enumerate() {
        // sh_info != 0: static relocations for one section (--emit-relocs), ignored.
        if section.sh_type(LE).0 != SHT_RELA || section.sh_info(LE) != 0 {
            continue;
        }
        if section.sh_entsize(LE) != RELA_ENTRY_SIZE {
            return Err(Error::malformed(
                format!("section {index} (SHT_RELA)"),
                format!(
                    "sh_entsize is {}, not {RELA_ENTRY_SIZE}",
                    section.sh_entsize(LE)
                ),
            ));
        }
        if Some(elf.section_link(index)?) != dynsym_index {
            return Err(Error::malformed(
                format!("section {index} (SHT_RELA)"),
                "dynamic relocations must refer to .dynsym",
            ));
        }
        let bytes = elf.section_bytes(index)?;
        if bytes.len() as u64 % RELA_ENTRY_SIZE != 0 {
            return Err(Error::malformed(
                format!("section {index} (SHT_RELA)"),
                "size is not a multiple of 24",
            ));
        }
        rela.push(bytes);
    }
    Ok(DynamicTables {
        dynamic_symbols,
        sysv_hash: None,
        gnu_hash: None,
        rela,
    })
}

/// The one section of type `sh_type` (more than one is an error).
fn find_section(elf: &ElfFile<'_>, sh_type: u32) -> Result<Option<usize>> {
    let mut found = None;
    for (index, section) in elf.section_headers.iter().enumerate() {
        if section.sh_type(LE).0 == sh_type {
            if found.is_some() {
                return Err(Error::malformed(
                    "section header table",
                    format!("more than one section of type {sh_type}"),
                ));
            }
            found = Some(index);
        }
    }
    Ok(found)
}

/// A symbol table section's bytes and the bytes of its string table (`sh_link`).
fn symbol_section<'data>(elf: &ElfFile<'data>, index: usize) -> Result<(&'data [u8], &'data [u8])> {
    let section = &elf.section_headers[index];
    if section.sh_entsize(LE) != SYM_ENTRY_SIZE {
        return Err(Error::malformed(
            format!("section {index}"),
            format!(
                "sh_entsize is {}, not {SYM_ENTRY_SIZE}",
                section.sh_entsize(LE)
            ),
        ));
    }
    let bytes = elf.section_bytes(index)?;
    let link = elf.section_link(index)?;
    if elf.section_headers[link].sh_type(LE).0 != SHT_STRTAB {
        return Err(Error::malformed(
            format!("section {index}"),
            format!("sh_link {link} is not a string table"),
        ));
    }
    Ok((bytes, elf.section_bytes(link)?))
}

/// Every kernel descriptor symbol (`*.kd`, `STT_OBJECT`), from `.dynsym` and then `.symtab`,
/// with its descriptor read and its entry point checked.
fn find_kernels(
    data: &[u8],
    segments: &[LoadSegment],
    layout: &ImageLayout,
    dynamic_symbols: &[Symbol<'_>],
    static_symbols: &[Symbol<'_>],
) -> Result<Vec<KernelSymbol>> {
    // Candidates from both tables, sorted by name: a descriptor listed in .dynsym and .symtab
    // appears twice with the same address; two addresses under one name are an error.
    let mut candidates: Vec<&Symbol<'_>> = dynamic_symbols
        .iter()
        .chain(static_symbols)
        .filter(|sym| {
            is_descriptor_name(sym.name)
                && sym.name.len() > 3
                && sym.is_defined()
                && !sym.is_absolute()
                && matches!(sym.kind, STT_OBJECT | STT_AMDGPU_HSA_KERNEL)
        })
        .collect();
    candidates.sort_unstable_by(|a, b| (a.name, a.value).cmp(&(b.name, b.value)));
    candidates.dedup_by(|a, b| (a.name, a.value) == (b.name, b.value));
    if let Some(pair) = candidates.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(Error::malformed(
            format!("kernel descriptor `{}`", pair[0].name),
            "two symbols of this name point at different descriptors",
        ));
    }
    let mut kernels = candidates
        .into_iter()
        .map(|sym| read_kernel(data, segments, layout, sym, &sym.name[..sym.name.len() - 3]))
        .collect::<Result<Vec<_>>>()?;
    kernels.sort_by_key(|k| k.descriptor_vaddr);
    Ok(kernels)
}

fn read_kernel(
    data: &[u8],
    segments: &[LoadSegment],
    layout: &ImageLayout,
    sym: &Symbol<'_>,
    name: &str,
) -> Result<KernelSymbol> {
    let what = || format!("kernel descriptor `{}`", sym.name);
    let size = KernelDescriptor::SIZE;
    if sym.size != 0 && sym.size != size {
        return Err(Error::malformed(
            what(),
            format!("st_size is {}, a kernel descriptor is {size}", sym.size),
        ));
    }
    if (sym.value - layout.start_vaddr) % KERNEL_DESCRIPTOR_ALIGN != 0 {
        return Err(Error::malformed(
            what(),
            format!(
                "address {:#x} is not {KERNEL_DESCRIPTOR_ALIGN}-byte aligned",
                sym.value
            ),
        ));
    }
    let bytes = vaddr_bytes(data, segments, sym.value, size, what)?;
    let descriptor = KernelDescriptor::read(bytes)
        .ok_or_else(|| Error::malformed(what(), "cannot read 64 bytes"))?;
    let entry_vaddr = sym
        .value
        .checked_add_signed(descriptor.kernel_code_entry_byte_offset)
        .ok_or_else(|| {
            Error::malformed(
                what(),
                "kernel_code_entry_byte_offset overflows the address space",
            )
        })?;
    let mut entries = vec![entry_vaddr];
    if descriptor.kernarg_preload_length() != 0 {
        entries.push(
            entry_vaddr
                .checked_add(PRELOAD_PROLOGUE_SIZE)
                .ok_or_else(|| {
                    Error::malformed(what(), "the preload entry overflows the address space")
                })?,
        );
    }
    for entry in entries {
        if (entry.wrapping_sub(layout.start_vaddr)) % KERNEL_ENTRY_ALIGN != 0 {
            return Err(Error::malformed(
                what(),
                format!("entry point {entry:#x} is not {KERNEL_ENTRY_ALIGN}-byte aligned"),
            ));
        }
        // At least one instruction must be there, in an executable segment's file bytes.
        if !segments
            .iter()
            .any(|s| s.flags & PF_X != 0 && s.holds_file_bytes(entry, 4))
        {
            return Err(Error::malformed(
                what(),
                format!("entry point {entry:#x} is not in the code of an executable segment"),
            ));
        }
    }
    Ok(KernelSymbol {
        name: name.to_owned(),
        descriptor_symbol: sym.name.to_owned(),
        descriptor_vaddr: sym.value,
        entry_vaddr,
        descriptor,
        exported: sym.is_exported(),
        metadata: None,
        implicit_args: None,
    })
}

/// Give each kernel its metadata and check that both agree.
fn attach_metadata(
    version: CodeObjectVersion,
    kernels: &mut [KernelSymbol],
    metadata: &mut Metadata,
) -> Result<()> {
    let mut by_symbol: Vec<usize> = (0..kernels.len()).collect();
    by_symbol.sort_unstable_by(|&a, &b| {
        kernels[a]
            .descriptor_symbol
            .cmp(&kernels[b].descriptor_symbol)
    });
    for meta in std::mem::take(&mut metadata.kernels) {
        let fail = |detail: String| Error::Metadata(format!("kernel `{}`: {detail}", meta.name));
        let found = by_symbol
            .binary_search_by(|&i| kernels[i].descriptor_symbol.as_str().cmp(&meta.symbol))
            .map(|at| by_symbol[at]);
        let Ok(i) = found else {
            return Err(fail(format!(
                "`.symbol` {} is not a kernel descriptor symbol of the object",
                meta.symbol
            )));
        };
        let kernel = &mut kernels[i];
        if kernel.metadata.is_some() {
            return Err(fail(format!("two metadata entries name {}", meta.symbol)));
        }
        let kd = &kernel.descriptor;
        let checks = [
            (
                "kernarg_size",
                kd.kernarg_size != 0 && kd.kernarg_size != meta.kernarg_segment_size,
                kd.kernarg_size,
                meta.kernarg_segment_size,
            ),
            (
                "group_segment_fixed_size",
                kd.group_segment_fixed_size != meta.group_segment_fixed_size,
                kd.group_segment_fixed_size,
                meta.group_segment_fixed_size,
            ),
            (
                "private_segment_fixed_size",
                kd.private_segment_fixed_size != meta.private_segment_fixed_size,
                kd.private_segment_fixed_size,
                meta.private_segment_fixed_size,
            ),
            (
                "wavefront size",
                kd.wavefront_size() != meta.wavefront_size,
                kd.wavefront_size(),
                meta.wavefront_size,
            ),
        ];
        if let Some((field, _, in_kd, in_meta)) = checks.iter().find(|c| c.1) {
            return Err(fail(format!(
                "the descriptor's {field} is {in_kd}, the metadata says {in_meta}"
            )));
        }
        for (n, arg) in meta.args.iter().enumerate() {
            if arg.end() > u64::from(meta.kernarg_segment_size) {
                return Err(fail(format!(
                    "argument {n} ends at {}, beyond the kernarg segment of {} bytes",
                    arg.end(),
                    meta.kernarg_segment_size
                )));
            }
        }
        kernel.implicit_args =
            implicit_args::locate(version, &meta.args, meta.kernarg_segment_size).map_err(&fail)?;
        kernel.metadata = Some(meta);
    }
    Ok(())
}

/// Variables and functions: the exported ones (from `.dynsym`, or `.symtab` when there is no
/// `.dynsym`), then the local ones (`.symtab` only).
fn find_globals(
    dynamic_symbols: &[Symbol<'_>],
    static_symbols: &[Symbol<'_>],
    kernels: &[KernelSymbol],
) -> (Vec<VariableSymbol>, Vec<FunctionSymbol>) {
    let mut kernel_names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
    kernel_names.sort_unstable();
    let mut variables = Vec::new();
    let mut functions = Vec::new();
    let exported_table = if dynamic_symbols.len() > 1 {
        dynamic_symbols
    } else {
        static_symbols
    };
    let passes = [(exported_table, true), (static_symbols, false)];
    for (table, exported_pass) in passes {
        for sym in table {
            if sym.is_exported() != exported_pass || !sym.is_defined() || sym.name.is_empty() {
                continue;
            }
            match sym.kind {
                STT_OBJECT if !is_descriptor_name(sym.name) => variables.push(VariableSymbol {
                    name: sym.name.to_owned(),
                    vaddr: sym.value,
                    size: sym.size,
                    exported: exported_pass,
                }),
                STT_FUNC if kernel_names.binary_search(&sym.name).is_err() => {
                    functions.push(FunctionSymbol {
                        name: sym.name.to_owned(),
                        vaddr: sym.value,
                        size: sym.size,
                        exported: exported_pass,
                    });
                }
                _ => {}
            }
        }
    }
    (variables, functions)
}

/// Whether `name` is a kernel descriptor's (`*.kd`; symbol names are case-sensitive).
fn is_descriptor_name(name: &str) -> bool {
    name.strip_suffix(".kd").is_some()
}
