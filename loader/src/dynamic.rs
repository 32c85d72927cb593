//! The dynamic section (`PT_DYNAMIC`): where the dynamic symbol table, its strings, its hash
//! tables and the dynamic relocations are (code-objects.md §2.2: a loader that follows `DT_*`
//! works on section-less objects, which ROCr cannot load).

use object::LittleEndian as LE;
use object::elf::Dyn64;
use object::read::ReadRef as _;
use object::read::elf::ProgramHeader as _;

use crate::elf_file::{ElfFile, PT_DYNAMIC};
use crate::error::{Error, Result};
use crate::segment::LoadSegment;

const DT_NULL: i64 = 0;
const DT_NEEDED: i64 = 1;
const DT_PLTRELSZ: i64 = 2;
const DT_HASH: i64 = 4;
const DT_STRTAB: i64 = 5;
const DT_SYMTAB: i64 = 6;
const DT_RELA: i64 = 7;
const DT_RELASZ: i64 = 8;
const DT_RELAENT: i64 = 9;
const DT_STRSZ: i64 = 10;
const DT_SYMENT: i64 = 11;
const DT_SONAME: i64 = 14;
const DT_REL: i64 = 17;
const DT_RELSZ: i64 = 18;
const DT_JMPREL: i64 = 23;
const DT_RELRSZ: i64 = 35;
const DT_RELR: i64 = 36;
const DT_GNU_HASH: i64 = 0x6fff_fef5;
const DT_RELACOUNT: i64 = 0x6fff_fff9;

/// Size of an `Elf64_Rela`.
pub const RELA_ENTRY_SIZE: u64 = 24;
/// Size of an `Elf64_Sym`.
pub const SYM_ENTRY_SIZE: u64 = 24;

/// What the dynamic section says, addresses still virtual.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DynamicInfo {
    /// `DT_SYMTAB`.
    pub symtab: Option<u64>,
    /// `DT_STRTAB`.
    pub strtab: Option<u64>,
    /// `DT_STRSZ`.
    pub strsz: Option<u64>,
    /// `DT_HASH`.
    pub hash: Option<u64>,
    /// `DT_GNU_HASH`.
    pub gnu_hash: Option<u64>,
    /// `DT_RELA`.
    pub rela: Option<u64>,
    /// `DT_RELASZ`.
    pub relasz: u64,
    /// `DT_RELACOUNT`: the number of leading RELATIVE64 entries. Reported, not relied on: every
    /// entry is read and checked by type anyway.
    pub relacount: Option<u64>,
    /// `DT_SONAME` (string-table offset).
    pub soname: Option<u64>,
    /// `DT_NEEDED` (string-table offsets): libraries the object says it needs. A code object
    /// has none; their symbols must come from the caller's external definitions.
    pub needed: Vec<u64>,
}

impl DynamicInfo {
    /// Read the `PT_DYNAMIC` segment, if any.
    pub(crate) fn parse(elf: &ElfFile<'_>) -> Result<Option<Self>> {
        let mut dynamics = elf.segments_of_type(PT_DYNAMIC);
        let Some((index, ph)) = dynamics.next() else {
            return Ok(None);
        };
        if dynamics.next().is_some() {
            return Err(Error::malformed(
                "program header table",
                "more than one PT_DYNAMIC",
            ));
        }
        let what = || format!("program header {index} (PT_DYNAMIC)");
        let bytes = elf.bytes(ph.p_offset(LE), ph.p_filesz(LE), what)?;
        let count = bytes.len() / size_of::<Dyn64<LE>>();
        let entries: &[Dyn64<LE>] = bytes
            .read_slice_at(0, count)
            .map_err(|()| Error::malformed(what(), "cannot read entries"))?;
        let mut info = Self::default();
        let (mut relaent, mut syment) = (None, None);
        let mut terminated = false;
        for entry in entries {
            let tag = entry.d_tag.get(LE).0;
            let value = entry.d_val.get(LE);
            match tag {
                DT_NULL => {
                    terminated = true;
                    break;
                }
                DT_NEEDED => info.needed.push(value),
                DT_HASH => info.hash = Some(value),
                DT_GNU_HASH => info.gnu_hash = Some(value),
                DT_STRTAB => info.strtab = Some(value),
                DT_SYMTAB => info.symtab = Some(value),
                DT_STRSZ => info.strsz = Some(value),
                DT_SYMENT => syment = Some(value),
                DT_RELA => info.rela = Some(value),
                DT_RELASZ => info.relasz = value,
                DT_RELAENT => relaent = Some(value),
                DT_RELACOUNT => info.relacount = Some(value),
                DT_SONAME => info.soname = Some(value),
                DT_REL | DT_RELSZ if value != 0 => {
                    return Err(Error::malformed(
                        what(),
                        "DT_REL relocations (without addends) are not used by AMDGPU",
                    ));
                }
                DT_RELR | DT_RELRSZ if value != 0 => {
                    return Err(Error::malformed(
                        what(),
                        "DT_RELR packed relocations are not supported",
                    ));
                }
                DT_JMPREL | DT_PLTRELSZ if value != 0 => {
                    return Err(Error::malformed(
                        what(),
                        "PLT relocations (DT_JMPREL) are not used by AMDGPU",
                    ));
                }
                _ => {}
            }
        }
        if !terminated {
            return Err(Error::malformed(
                what(),
                "no DT_NULL terminates the entries",
            ));
        }
        if let Some(size) = relaent.filter(|&size| size != RELA_ENTRY_SIZE) {
            return Err(Error::malformed(
                what(),
                format!("DT_RELAENT is {size}, not {RELA_ENTRY_SIZE}"),
            ));
        }
        if let Some(size) = syment.filter(|&size| size != SYM_ENTRY_SIZE) {
            return Err(Error::malformed(
                what(),
                format!("DT_SYMENT is {size}, not {SYM_ENTRY_SIZE}"),
            ));
        }
        if info.relasz % RELA_ENTRY_SIZE != 0 {
            return Err(Error::malformed(
                what(),
                format!(
                    "DT_RELASZ {} is not a multiple of {RELA_ENTRY_SIZE}",
                    info.relasz
                ),
            ));
        }
        if info.relasz != 0 && info.rela.is_none() {
            return Err(Error::malformed(what(), "DT_RELASZ without DT_RELA"));
        }
        if info.symtab.is_some() != info.strtab.is_some() {
            return Err(Error::malformed(
                what(),
                "DT_SYMTAB and DT_STRTAB must come together",
            ));
        }
        Ok(Some(info))
    }
}

/// The file bytes of `[vaddr, vaddr + size)`, which must lie in one segment's file-backed part.
pub(crate) fn vaddr_bytes<'data>(
    data: &'data [u8],
    segments: &[LoadSegment],
    vaddr: u64,
    size: u64,
    what: impl Fn() -> String,
) -> Result<&'data [u8]> {
    let segment = segments
        .iter()
        .find(|s| s.holds_file_bytes(vaddr, size))
        .ok_or_else(|| {
            Error::malformed(
                what(),
                format!(
                    "addresses {vaddr:#x}..+{size:#x} are not in the file bytes of a PT_LOAD segment"
                ),
            )
        })?;
    let offset = segment.file_offset + (vaddr - segment.vaddr);
    crate::elf_file::file_slice(data, offset, size)
        .ok_or_else(|| Error::malformed(what(), "outside the file"))
}
