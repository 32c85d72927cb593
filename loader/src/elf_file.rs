//! The ELF container of a code object, read with `object`'s ELF structures: the header checks
//! that make a file an AMDGPU HSA code object (code-objects.md §1.1), the program and section
//! header tables, and bounds-checked access to file bytes and string tables.

use object::LittleEndian as LE;
use object::elf::{FileHeader64, ProgramHeader64, SectionHeader64};
use object::read::elf::{FileHeader as _, ProgramHeader as _, SectionHeader as _};

use crate::error::{Error, Result};

/// `EM_AMDGPU`.
pub const EM_AMDGPU: u16 = 224;
/// `ELFOSABI_AMDGPU_HSA`.
pub const ELFOSABI_AMDGPU_HSA: u8 = 64;
/// `ET_DYN`.
const ET_DYN: u16 = 3;

/// `PT_LOAD`.
pub(crate) const PT_LOAD: u32 = 1;
/// `PT_DYNAMIC`.
pub(crate) const PT_DYNAMIC: u32 = 2;
/// `PT_NOTE`.
pub(crate) const PT_NOTE: u32 = 4;

/// `SHT_SYMTAB`.
pub(crate) const SHT_SYMTAB: u32 = 2;
/// `SHT_STRTAB`.
pub(crate) const SHT_STRTAB: u32 = 3;
/// `SHT_RELA`.
pub(crate) const SHT_RELA: u32 = 4;
/// `SHT_NOTE`.
pub(crate) const SHT_NOTE: u32 = 7;
/// `SHT_NOBITS`.
pub(crate) const SHT_NOBITS: u32 = 8;
/// `SHT_DYNSYM`.
pub(crate) const SHT_DYNSYM: u32 = 11;

/// The code-object version, from `EI_ABIVERSION`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CodeObjectVersion {
    /// Code object V4 (`ELFABIVERSION_AMDGPU_HSA_V4` = 2).
    V4,
    /// Code object V5 (3), LLVM's default.
    V5,
    /// Code object V6 (4): generic processors.
    V6,
}

impl CodeObjectVersion {
    /// From `EI_ABIVERSION`.
    pub fn from_abi_version(abi_version: u8) -> Result<Self> {
        match abi_version {
            2 => Ok(Self::V4),
            3 => Ok(Self::V5),
            4 => Ok(Self::V6),
            _ => Err(Error::UnsupportedVersion { abi_version }),
        }
    }

    /// The version number (4, 5 or 6).
    pub fn number(self) -> u8 {
        match self {
            Self::V4 => 4,
            Self::V5 => 5,
            Self::V6 => 6,
        }
    }

    /// The `EI_ABIVERSION` byte.
    pub fn abi_version(self) -> u8 {
        self.number() - 2
    }
}

/// A validated view of the ELF header and header tables.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ElfFile<'data> {
    pub data: &'data [u8],
    pub header: &'data FileHeader64<LE>,
    pub program_headers: &'data [ProgramHeader64<LE>],
    pub section_headers: &'data [SectionHeader64<LE>],
}

/// Check the identification bytes that every AMDGPU ELF (code object or not) shares.
pub(crate) fn check_ident(data: &[u8]) -> Result<()> {
    if data.get(..4) != Some(b"\x7fELF") {
        return Err(Error::NotElf);
    }
    match data.get(4) {
        Some(2) => {}
        Some(1) => {
            return Err(Error::UnsupportedElf(
                "ELFCLASS32 (r600 or another machine)",
            ));
        }
        _ => return Err(Error::UnsupportedElf("unknown EI_CLASS")),
    }
    match data.get(5) {
        Some(1) => {}
        Some(2) => return Err(Error::UnsupportedElf("big-endian (ELFDATA2MSB)")),
        _ => return Err(Error::UnsupportedElf("unknown EI_DATA")),
    }
    Ok(())
}

impl<'data> ElfFile<'data> {
    /// Read any 64-bit little-endian ELF (a code object or a host binary).
    pub fn parse_any(data: &'data [u8]) -> Result<Self> {
        check_ident(data)?;
        let header = FileHeader64::<LE>::parse(data)
            .map_err(|e| Error::malformed("ELF header", e.to_string()))?;
        let program_headers = header
            .program_headers(LE, data)
            .map_err(|e| Error::malformed("program header table", e.to_string()))?;
        let section_headers = header
            .section_headers(LE, data)
            .map_err(|e| Error::malformed("section header table", e.to_string()))?;
        Ok(Self {
            data,
            header,
            program_headers,
            section_headers,
        })
    }

    /// Read an AMDGPU HSA code object's ELF container and check its identity: EM_AMDGPU,
    /// ELFOSABI_AMDGPU_HSA, a V4–V6 ABI version, ET_DYN.
    pub fn parse_code_object(data: &'data [u8]) -> Result<(Self, CodeObjectVersion)> {
        check_ident(data)?;
        // Check the identity before anything else so that the error says what the file is.
        let header = FileHeader64::<LE>::parse(data)
            .map_err(|e| Error::malformed("ELF header", e.to_string()))?;
        let machine = header.e_machine(LE).0;
        if machine != EM_AMDGPU {
            return Err(Error::NotAmdgpu(machine));
        }
        let ident = header.e_ident();
        if ident.os_abi.0 != ELFOSABI_AMDGPU_HSA {
            return Err(Error::NotHsa(ident.os_abi.0));
        }
        let version = CodeObjectVersion::from_abi_version(ident.abi_version)?;
        let e_type = header.e_type(LE).0;
        if e_type != ET_DYN {
            return Err(Error::NotShared(e_type));
        }
        Ok((Self::parse_any(data)?, version))
    }

    pub fn e_flags(&self) -> u32 {
        self.header.e_flags(LE).0
    }

    /// The file bytes `[offset, offset + size)`, or an error naming `what`.
    pub fn bytes(&self, offset: u64, size: u64, what: impl Fn() -> String) -> Result<&'data [u8]> {
        file_slice(self.data, offset, size).ok_or_else(|| {
            Error::malformed(
                what(),
                format!(
                    "bytes {offset:#x}..+{size:#x} lie outside the file of {:#x} bytes",
                    self.data.len()
                ),
            )
        })
    }

    /// The file bytes of section `index` (empty for `SHT_NOBITS`).
    pub fn section_bytes(&self, index: usize) -> Result<&'data [u8]> {
        let section = self
            .section_headers
            .get(index)
            .ok_or_else(|| Error::malformed("section index", format!("{index} is out of range")))?;
        if section.sh_type(LE).0 == SHT_NOBITS {
            return Ok(&[]);
        }
        self.bytes(section.sh_offset(LE), section.sh_size(LE), || {
            format!("section {index}")
        })
    }

    /// The section's `sh_link`, checked to name another section.
    pub fn section_link(&self, index: usize) -> Result<usize> {
        let link = self.section_headers[index].sh_link(LE) as usize;
        if link == 0 || link >= self.section_headers.len() {
            return Err(Error::malformed(
                format!("section {index}"),
                format!(
                    "sh_link {link} does not name one of the {} sections",
                    self.section_headers.len()
                ),
            ));
        }
        Ok(link)
    }

    /// Section names, for host ELF files (`.hip_fatbin`).
    pub fn section_name(&self, index: usize) -> Result<&'data [u8]> {
        let strings = self
            .header
            .section_strings(LE, self.data, self.section_headers)
            .map_err(|e| Error::malformed("section name table", e.to_string()))?;
        strings
            .get(self.section_headers[index].sh_name(LE))
            .map_err(|()| {
                Error::malformed(
                    format!("name of section {index}"),
                    "name offset out of range",
                )
            })
    }

    pub fn segments_of_type(
        &self,
        p_type: u32,
    ) -> impl Iterator<Item = (usize, &'data ProgramHeader64<LE>)> {
        self.program_headers
            .iter()
            .enumerate()
            .filter(move |(_, ph)| ph.p_type(LE).0 == p_type)
    }
}

/// `data[offset..offset + size]`, if it lies in `data`.
pub(crate) fn file_slice(data: &[u8], offset: u64, size: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let len = usize::try_from(size).ok()?;
    data.get(start..start.checked_add(len)?)
}

/// The NUL-terminated string at `offset` in a string table.
pub(crate) fn string_at(table: &[u8], offset: u32, what: impl Fn() -> String) -> Result<&str> {
    let tail = table.get(offset as usize..).ok_or_else(|| {
        Error::malformed(
            what(),
            format!(
                "name offset {offset:#x} is beyond the string table of {:#x} bytes",
                table.len()
            ),
        )
    })?;
    let end = tail
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| Error::malformed(what(), "name is not NUL-terminated"))?;
    std::str::from_utf8(&tail[..end]).map_err(|_| Error::malformed(what(), "name is not UTF-8"))
}
