//! Offload bundles and fat binaries: clang's `__CLANG_OFFLOAD_BUNDLE__` container, its
//! compressed `CCOB` form (zstd via `ruzstd`, zlib via `miniz_oxide`, both pure Rust), and a
//! host ELF's `.hip_fatbin` section holding one bundle per translation unit. Picks the code
//! object that suits an agent best.
//!
//! Bundle layout (little-endian): the 24-byte magic, `u64` entry count, then per entry `u64`
//! offset (from the bundle's start), `u64` size, `u64` id length and the id, e.g.
//! `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`. `CCOB` header: magic, `u16` version, `u16` method
//! (0 zlib, 1 zstd), then V1 `u32` uncompressed size; V2 `u32` total size and `u32` uncompressed
//! size; V3 `u64` total size and `u64` uncompressed size; then a `u64` truncated MD5 of the
//! uncompressed bytes (not checked here) and the compressed stream.

use std::borrow::Cow;
use std::io::Read as _;

use object::LittleEndian as LE;
use object::read::elf::SectionHeader as _;

use crate::elf_file::{EM_AMDGPU, ElfFile, SHT_NOBITS, check_ident};
use crate::error::{Error, Result};
use crate::target::TargetId;

/// The magic of an uncompressed bundle.
pub const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
/// The magic of a compressed bundle.
pub const COMPRESSED_MAGIC: &[u8] = b"CCOB";
/// The host ELF section that holds HIP's bundles.
pub const HIP_FATBIN_SECTION: &[u8] = b".hip_fatbin";
/// The largest decompressed bundle accepted (4 GiB).
pub const MAX_DECOMPRESSED_SIZE: u64 = 4 << 30;

/// What kind of file a byte string is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Container {
    /// An AMDGPU ELF (a code object).
    CodeObject,
    /// An uncompressed offload bundle.
    Bundle,
    /// A compressed (`CCOB`) offload bundle.
    CompressedBundle,
    /// Another ELF: a host program or library, perhaps with a `.hip_fatbin` section.
    HostElf,
}

impl Container {
    /// Tell what `data` is from its first bytes.
    pub fn identify(data: &[u8]) -> Option<Self> {
        if data.starts_with(BUNDLE_MAGIC) {
            Some(Self::Bundle)
        } else if data.starts_with(COMPRESSED_MAGIC) {
            Some(Self::CompressedBundle)
        } else if check_ident(data).is_ok() {
            let machine = data.get(18..20).map(|b| u16::from_le_bytes([b[0], b[1]]));
            Some(if machine == Some(EM_AMDGPU) {
                Self::CodeObject
            } else {
                Self::HostElf
            })
        } else {
            None
        }
    }
}

/// One entry of a bundle (or the single code object of a plain ELF file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleEntry<'a> {
    /// The entry id, e.g. `hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-`.
    pub id: String,
    /// The offload kind: `hip`, `hipv4`, `openmp`, `host`, ...
    pub kind: String,
    /// The triple, e.g. `amdgcn-amd-amdhsa-`.
    pub triple: String,
    /// The target id, for AMDGPU entries whose id names a known processor.
    pub target: Option<TargetId>,
    /// The entry's bytes (borrowed from the input, or owned after decompression).
    pub bytes: Cow<'a, [u8]>,
    /// Which bundle of the file it came from (0 for the first; fat binaries hold one per
    /// translation unit).
    pub bundle: usize,
}

impl BundleEntry<'_> {
    /// Whether the entry is an AMDGPU code object (not the empty host entry).
    pub fn is_code_object(&self) -> bool {
        self.triple.starts_with("amdgcn-amd-amdhsa") && !self.bytes.is_empty()
    }
}

/// Every code object in a file: a plain code object, a bundle, a compressed bundle or a host
/// ELF with a `.hip_fatbin` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatBinary<'a> {
    /// What the file is.
    pub container: Container,
    /// The entries, host entries included, in file order.
    pub entries: Vec<BundleEntry<'a>>,
}

impl<'a> FatBinary<'a> {
    /// Read whatever `data` is.
    pub fn parse(data: &'a [u8]) -> Result<Self> {
        let container = Container::identify(data).ok_or_else(|| {
            Error::Bundle(
                "neither an ELF file nor an offload bundle (no ELF, __CLANG_OFFLOAD_BUNDLE__ or \
                 CCOB magic)"
                    .into(),
            )
        })?;
        let mut entries = Vec::new();
        match container {
            Container::CodeObject => {
                let target = ElfFile::parse_any(data)
                    .ok()
                    .and_then(|elf| TargetId::from_e_flags(elf.e_flags()).ok());
                entries.push(BundleEntry {
                    id: target.map_or_else(String::new, |t| format!("amdgcn-amd-amdhsa--{t}")),
                    kind: String::new(),
                    triple: "amdgcn-amd-amdhsa-".into(),
                    target,
                    bytes: Cow::Borrowed(data),
                    bundle: 0,
                });
            }
            Container::Bundle | Container::CompressedBundle => {
                read_bundles(data, &mut entries)?;
            }
            Container::HostElf => {
                let elf = ElfFile::parse_any(data)?;
                let mut found = false;
                for index in 0..elf.section_headers.len() {
                    if elf.section_name(index)? == HIP_FATBIN_SECTION {
                        if elf.section_headers[index].sh_type(LE).0 == SHT_NOBITS {
                            return Err(Error::Bundle(".hip_fatbin has no file bytes".into()));
                        }
                        read_bundles(elf.section_bytes(index)?, &mut entries)?;
                        found = true;
                    }
                }
                if !found {
                    return Err(Error::Bundle(
                        "a host ELF without a .hip_fatbin section".into(),
                    ));
                }
            }
        }
        Ok(Self { container, entries })
    }

    /// The AMDGPU code objects.
    pub fn code_objects(&self) -> impl Iterator<Item = &BundleEntry<'a>> {
        self.entries.iter().filter(|e| e.is_code_object())
    }

    /// The code objects that run on `agent`, best first (a concrete processor before a generic
    /// one, features matched exactly before "any"); ties keep file order. Uses the targets in
    /// the entry ids: parse the chosen code object, whose `e_flags` are authoritative.
    pub fn candidates_for(&self, agent: &TargetId) -> Vec<&BundleEntry<'a>> {
        let mut found: Vec<(u32, usize, &BundleEntry<'a>)> = self
            .code_objects()
            .enumerate()
            .filter_map(|(i, e)| Some((e.target?.suitability(agent)?, i, e)))
            .collect();
        found.sort_by_key(|&(score, i, _)| (std::cmp::Reverse(score), i));
        found.into_iter().map(|(_, _, e)| e).collect()
    }

    /// The code object that suits `agent` best, if any runs on it.
    pub fn best_for(&self, agent: &TargetId) -> Option<&BundleEntry<'a>> {
        self.candidates_for(agent).into_iter().next()
    }
}

fn u64_at(data: &[u8], at: usize) -> Option<u64> {
    let b = data.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    let b = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    let b = data.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes(b.try_into().ok()?))
}

/// Read one or more bundles laid end to end (as in `.hip_fatbin`, separated by zero padding).
fn read_bundles<'a>(mut data: &'a [u8], entries: &mut Vec<BundleEntry<'a>>) -> Result<()> {
    let mut bundle = 0;
    loop {
        let skip = data.iter().position(|&b| b != 0).unwrap_or(data.len());
        data = &data[skip..];
        if data.is_empty() {
            return Ok(());
        }
        let used = if data.starts_with(BUNDLE_MAGIC) {
            read_bundle(data, bundle, Cow::Borrowed, entries)?
        } else if data.starts_with(COMPRESSED_MAGIC) {
            let (decompressed, used) = decompress(data)?;
            read_bundle(
                &decompressed,
                bundle,
                |bytes| Cow::Owned(bytes.to_vec()),
                entries,
            )?;
            used
        } else {
            return Err(Error::Bundle(format!(
                "bundle {bundle}: no bundle magic where a bundle should start"
            )));
        };
        data = &data[used.min(data.len())..];
        bundle += 1;
    }
}

/// Read one uncompressed bundle at the start of `data`; returns the bytes it spans.
fn read_bundle<'d, 'a>(
    data: &'d [u8],
    bundle: usize,
    keep: impl Fn(&'d [u8]) -> Cow<'a, [u8]>,
    entries: &mut Vec<BundleEntry<'a>>,
) -> Result<usize> {
    let bad = |detail: String| Error::Bundle(format!("bundle {bundle}: {detail}"));
    let count = u64_at(data, BUNDLE_MAGIC.len()).ok_or_else(|| bad("truncated header".into()))?;
    let mut at = BUNDLE_MAGIC.len() + 8;
    // Each entry header takes at least 24 bytes: a count beyond that is a lie.
    if count > (data.len() / 24) as u64 {
        return Err(bad(format!(
            "{count} entries cannot fit in {} bytes",
            data.len()
        )));
    }
    let mut end = at;
    for index in 0..count {
        let (Some(offset), Some(size), Some(id_len)) = (
            u64_at(data, at),
            u64_at(data, at + 8),
            u64_at(data, at + 16),
        ) else {
            return Err(bad(format!("entry {index}: truncated header")));
        };
        at += 24;
        let id_bytes = usize::try_from(id_len)
            .ok()
            .and_then(|len| data.get(at..at.checked_add(len)?))
            .ok_or_else(|| bad(format!("entry {index}: id runs past the bundle")))?;
        at += id_bytes.len();
        let id = std::str::from_utf8(id_bytes)
            .map_err(|_| bad(format!("entry {index}: id is not UTF-8")))?;
        let bytes = crate::elf_file::file_slice(data, offset, size).ok_or_else(|| {
            bad(format!(
                "entry {index} (`{id}`): bytes {offset:#x}..+{size:#x} lie outside the bundle of {:#x} bytes",
                data.len()
            ))
        })?;
        end = end.max(at).max((offset + size) as usize);
        let (kind, rest) = id.split_once('-').unwrap_or((id, ""));
        let (triple, target) = match rest.rfind("--") {
            Some(split) => (
                &rest[..=split],
                TargetId::parse(rest)
                    .ok()
                    .filter(|_| !rest[split + 2..].is_empty()),
            ),
            None => (rest, None),
        };
        entries.push(BundleEntry {
            id: id.to_owned(),
            kind: kind.to_owned(),
            triple: triple.to_owned(),
            target,
            bytes: keep(bytes),
            bundle,
        });
    }
    Ok(end)
}

/// Decompress a `CCOB` bundle at the start of `data`; returns the bundle and the compressed
/// bytes it spanned.
fn decompress(data: &[u8]) -> Result<(Vec<u8>, usize)> {
    let bad = |detail: String| Error::Decompression(detail);
    let truncated = || bad("truncated header".into());
    let version = u16_at(data, 4).ok_or_else(truncated)?;
    let method = u16_at(data, 6).ok_or_else(truncated)?;
    let (total, uncompressed, header) = match version {
        1 => (
            None,
            u64::from(u32_at(data, 8).ok_or_else(truncated)?),
            8 + 4 + 8,
        ),
        2 => (
            Some(u64::from(u32_at(data, 8).ok_or_else(truncated)?)),
            u64::from(u32_at(data, 12).ok_or_else(truncated)?),
            8 + 8 + 8,
        ),
        3 => (
            Some(u64_at(data, 8).ok_or_else(truncated)?),
            u64_at(data, 16).ok_or_else(truncated)?,
            8 + 16 + 8,
        ),
        _ => return Err(bad(format!("unknown format version {version}"))),
    };
    if header > data.len() {
        return Err(truncated());
    }
    let end = match total {
        Some(total) => usize::try_from(total)
            .ok()
            .filter(|&t| t >= header && t <= data.len())
            .ok_or_else(|| {
                bad(format!(
                    "total size {total:#x} does not fit the {:#x} bytes present",
                    data.len()
                ))
            })?,
        None => data.len(),
    };
    if uncompressed > MAX_DECOMPRESSED_SIZE {
        return Err(bad(format!(
            "uncompressed size {uncompressed:#x} exceeds the {MAX_DECOMPRESSED_SIZE:#x} accepted"
        )));
    }
    let stream = &data[header..end];
    // Do not trust the declared size for the allocation: grow as the stream really decodes.
    let limit = uncompressed as usize;
    let out = match method {
        0 => miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(stream, limit)
            .map_err(|e| bad(format!("zlib: {e}")))?,
        1 => {
            let decoder = ruzstd::decoding::StreamingDecoder::new(stream)
                .map_err(|e| bad(format!("zstd: {e}")))?;
            let mut out = Vec::new();
            decoder
                .take(uncompressed + 1)
                .read_to_end(&mut out)
                .map_err(|e| bad(format!("zstd: {e}")))?;
            out
        }
        _ => return Err(bad(format!("unknown compression method {method}"))),
    };
    if out.len() as u64 != uncompressed {
        return Err(bad(format!(
            "decompressed to {:#x} bytes, the header says {uncompressed:#x}",
            out.len()
        )));
    }
    if !out.starts_with(BUNDLE_MAGIC) {
        return Err(bad("the decompressed bytes are not a bundle".into()));
    }
    Ok((out, end))
}
