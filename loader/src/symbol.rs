//! ELF symbol tables (`.dynsym` and `.symtab`) read into checked entries (code-objects.md §4).
//! A symbol's name must lie in its string table, its section index must name a section (or be
//! `SHN_UNDEF`/`SHN_ABS`; reliability.md §6: `st_shndx >= SHN_LORESERVE` otherwise refused), and
//! a defined object or function must lie inside the image.

use object::LittleEndian as LE;
use object::elf::Sym64;
use object::read::ReadRef as _;

use crate::dynamic::SYM_ENTRY_SIZE;
use crate::elf_file::string_at;
use crate::error::{Error, Result};
use crate::segment::ImageLayout;

/// `SHN_UNDEF`.
pub const SHN_UNDEF: u16 = 0;
/// `SHN_LORESERVE`.
pub const SHN_LORESERVE: u16 = 0xff00;
/// `SHN_ABS`.
pub const SHN_ABS: u16 = 0xfff1;

/// `STT_NOTYPE`.
pub const STT_NOTYPE: u8 = 0;
/// `STT_OBJECT`.
pub const STT_OBJECT: u8 = 1;
/// `STT_FUNC`.
pub const STT_FUNC: u8 = 2;
/// `STT_SECTION`.
pub const STT_SECTION: u8 = 3;
/// `STT_FILE`.
pub const STT_FILE: u8 = 4;
/// `STT_COMMON`.
pub const STT_COMMON: u8 = 5;
/// `STT_TLS`.
pub const STT_TLS: u8 = 6;
/// `STT_AMDGPU_HSA_KERNEL` (`STT_LOOS`, code object V2; ROCr still accepts it).
pub const STT_AMDGPU_HSA_KERNEL: u8 = 10;

/// `STB_LOCAL`.
pub const STB_LOCAL: u8 = 0;
/// `STB_GLOBAL`.
pub const STB_GLOBAL: u8 = 1;
/// `STB_WEAK`.
pub const STB_WEAK: u8 = 2;

/// `STV_DEFAULT`.
pub const STV_DEFAULT: u8 = 0;
/// `STV_HIDDEN`.
pub const STV_HIDDEN: u8 = 2;
/// `STV_PROTECTED`.
pub const STV_PROTECTED: u8 = 3;

/// Which table a symbol came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolTable {
    /// `.dynsym`, found through `DT_SYMTAB` (or its section header).
    Dynamic,
    /// `.symtab`, present unless the object was stripped.
    Static,
}

/// One checked ELF symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol<'data> {
    /// The name.
    pub name: &'data str,
    /// `st_value`: a virtual address for defined symbols.
    pub value: u64,
    /// `st_size`.
    pub size: u64,
    /// `st_type` (`STT_*`).
    pub kind: u8,
    /// `st_bind` (`STB_*`).
    pub binding: u8,
    /// `st_visibility` (`STV_*`).
    pub visibility: u8,
    /// `st_shndx`.
    pub section: u16,
}

impl Symbol<'_> {
    /// Whether the symbol is defined here (not `SHN_UNDEF`).
    pub fn is_defined(&self) -> bool {
        self.section != SHN_UNDEF
    }

    /// Whether the symbol's value is an absolute number, not an address in the image.
    pub fn is_absolute(&self) -> bool {
        self.section == SHN_ABS
    }

    /// Whether another code object may see it: a defined global or weak symbol of default or
    /// protected visibility (LOCAL, HIDDEN and `_DYNAMIC` are not exported).
    pub fn is_exported(&self) -> bool {
        self.is_defined()
            && matches!(self.binding, STB_GLOBAL | STB_WEAK)
            && matches!(self.visibility, STV_DEFAULT | STV_PROTECTED)
    }

    /// `STT_*` as `llvm-readelf` prints it.
    pub fn kind_name(&self) -> &'static str {
        match self.kind {
            STT_NOTYPE => "NOTYPE",
            STT_OBJECT => "OBJECT",
            STT_FUNC => "FUNC",
            STT_SECTION => "SECTION",
            STT_FILE => "FILE",
            STT_COMMON => "COMMON",
            STT_TLS => "TLS",
            STT_AMDGPU_HSA_KERNEL => "AMDGPU_HSA_KERNEL",
            _ => "UNKNOWN",
        }
    }

    /// `STB_*` as `llvm-readelf` prints it.
    pub fn binding_name(&self) -> &'static str {
        match self.binding {
            STB_LOCAL => "LOCAL",
            STB_GLOBAL => "GLOBAL",
            STB_WEAK => "WEAK",
            _ => "UNKNOWN",
        }
    }

    /// `STV_*` as `llvm-readelf` prints it.
    pub fn visibility_name(&self) -> &'static str {
        match self.visibility {
            STV_DEFAULT => "DEFAULT",
            1 => "INTERNAL",
            STV_HIDDEN => "HIDDEN",
            _ => "PROTECTED",
        }
    }
}

/// Read `count` symbols from `bytes` (the table) with names in `strings`. `section_count` is the
/// number of section headers (0 when the object has none: indices are then only checked to be
/// below `SHN_LORESERVE`).
pub(crate) fn read_symbols<'data>(
    table: SymbolTable,
    bytes: &'data [u8],
    count: u64,
    strings: &'data [u8],
    section_count: usize,
    layout: &ImageLayout,
) -> Result<Vec<Symbol<'data>>> {
    let what = match table {
        SymbolTable::Dynamic => ".dynsym",
        SymbolTable::Static => ".symtab",
    };
    let needed = count.saturating_mul(SYM_ENTRY_SIZE);
    if needed > bytes.len() as u64 {
        return Err(Error::malformed(
            what,
            format!(
                "{count} symbols need {needed:#x} bytes, the table has {:#x}",
                bytes.len()
            ),
        ));
    }
    let raw: &[Sym64<LE>] = bytes
        .read_slice_at(0, count as usize)
        .map_err(|()| Error::malformed(what, "cannot read entries"))?;
    let mut symbols = Vec::with_capacity(raw.len());
    for (index, sym) in raw.iter().enumerate() {
        let what = || format!("{what} symbol {index}");
        let name = string_at(strings, sym.st_name.get(LE), what)?;
        let symbol = Symbol {
            name,
            value: sym.st_value.get(LE),
            size: sym.st_size.get(LE),
            kind: sym.st_type().0,
            binding: sym.st_bind().0,
            visibility: sym.st_visibility().0,
            section: sym.st_shndx.get(LE).0,
        };
        if symbol.section >= SHN_LORESERVE && symbol.section != SHN_ABS {
            return Err(Error::malformed(
                what(),
                format!(
                    "st_shndx {:#x} is a reserved index this loader does not accept",
                    symbol.section
                ),
            ));
        }
        if symbol.section != SHN_ABS
            && section_count != 0
            && usize::from(symbol.section) >= section_count
        {
            return Err(Error::malformed(
                what(),
                format!(
                    "st_shndx {} names no section (there are {section_count})",
                    symbol.section
                ),
            ));
        }
        if symbol.is_defined()
            && !symbol.is_absolute()
            && matches!(symbol.kind, STT_OBJECT | STT_FUNC | STT_AMDGPU_HSA_KERNEL)
            && layout.offset_of(symbol.value, symbol.size).is_none()
        {
            return Err(Error::malformed(
                what(),
                format!(
                    "`{name}` at {:#x}..+{:#x} lies outside the image {:#x}..+{:#x}",
                    symbol.value, symbol.size, layout.start_vaddr, layout.size
                ),
            ));
        }
        if matches!(symbol.kind, STT_TLS) && symbol.is_defined() {
            return Err(Error::malformed(
                what(),
                format!("`{name}` is thread-local, which a GPU code object cannot have"),
            ));
        }
        symbols.push(symbol);
    }
    Ok(symbols)
}
