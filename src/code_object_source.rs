//! Where a code object comes from, and which one runs on a device: a plain code object, an
//! offload bundle (plain or `CCOB`-compressed) or a host ELF with a `.hip_fatbin` section, read
//! from memory or mapped from a file (not copied), narrowed to the one code object that suits a
//! device's target id best (code-objects.md §1.4 generic targets, §1.5 xnack/sramecc; the
//! loader's [`FatBinary::candidates_for`] and [`TargetId::runs_on`] decide).
//!
//! ```
//! use aqueduct::code_object_source::CodeObjectSource;
//! use aqueduct::loader::TargetId;
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/bin/fixtures/vector_add.hipfb");
//! let source = CodeObjectSource::open(path)?;           // mapped, not read
//! let device = TargetId::parse("gfx942:sramecc+:xnack-")?;
//! let chosen = source.select(&device)?;
//! assert_eq!(chosen.target.processor.name, "gfx942");
//! assert_eq!(chosen.entry_id.as_deref(), Some("hipv4-amdgcn-amd-amdhsa--gfx942"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};

use amdgpu_loader::bundle::Container;
use amdgpu_loader::{BundleEntry, CodeObject, FatBinary, TargetId};
use memmap2::Mmap;

/// Why no code object could be picked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodeObjectSourceError {
    /// The file could not be opened or mapped.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The bytes are no code object, bundle or host binary with `.hip_fatbin`, or one of them
    /// is malformed.
    #[error("{origin}: {source}")]
    Unreadable {
        /// Where the bytes came from.
        origin: Origin,
        /// What the loader found wrong.
        source: amdgpu_loader::Error,
    },
    /// A plain code object built for another target.
    #[error(
        "{origin}: the code object is built for {code}, which does not run on the device's \
         {device}: {reason}"
    )]
    WrongTarget {
        /// Where the bytes came from.
        origin: Origin,
        /// The code object's target (from its `e_flags`).
        code: TargetId,
        /// The device's target.
        device: TargetId,
        /// Why not (different processors, xnack or sramecc setting, generic family).
        reason: &'static str,
    },
    /// A bundle or fat binary with no code object for this device.
    #[error(
        "{origin}: no code object for the device's {device} in this {container}; it holds {}",
        list(.present)
    )]
    NoMatchingEntry {
        /// Where the bytes came from.
        origin: Origin,
        /// What kind of file it is.
        container: ContainerKind,
        /// The device's target.
        device: TargetId,
        /// The targets (or, where an id names none, the entry ids) of the AMDGPU code objects
        /// present, in file order.
        present: Vec<String>,
    },
}

fn list(present: &[String]) -> String {
    if present.is_empty() {
        "no AMDGPU code object".to_owned()
    } else {
        present.join(", ")
    }
}

/// Where a source's bytes came from, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A file.
    File(PathBuf),
    /// Bytes in memory.
    Memory,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path) => write!(f, "{}", path.display()),
            Self::Memory => f.write_str("code object in memory"),
        }
    }
}

/// The kind of container, for messages (the loader's [`Container`] with a readable name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerKind(pub Container);

impl fmt::Display for ContainerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Container::CodeObject => "code object",
            Container::Bundle => "offload bundle",
            Container::CompressedBundle => "compressed offload bundle",
            Container::HostElf => "host binary's .hip_fatbin",
        })
    }
}

/// The bytes behind a source.
enum Bytes {
    Mapped(Mmap),
    Owned(Vec<u8>),
    Static(&'static [u8]),
}

/// A file or byte string holding one or more code objects.
pub struct CodeObjectSource {
    bytes: Bytes,
    origin: Origin,
}

impl fmt::Debug for CodeObjectSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodeObjectSource")
            .field("origin", &self.origin)
            .field("len", &self.bytes().len())
            .finish_non_exhaustive()
    }
}

impl CodeObjectSource {
    /// Map the file at `path` read-only (its bytes are not copied).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CodeObjectSourceError> {
        let path = path.as_ref();
        let io = |source| CodeObjectSourceError::Io {
            path: path.to_owned(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        // SAFETY: the mapping is read-only and private to this value, which owns it, so no Rust
        // code writes through it and it outlives every borrow of its bytes (`bytes()` borrows
        // `self`). What a mapping cannot exclude is another process rewriting or truncating the
        // file while it is mapped; the bytes are never trusted (every offset and size is
        // checked by the loader) and the file is one the user asked to load, the same contract
        // every mapping loader (ld.so, ROCr's file loads) lives with.
        let map = unsafe { Mmap::map(&file) }.map_err(io)?;
        Ok(Self {
            bytes: Bytes::Mapped(map),
            origin: Origin::File(path.to_owned()),
        })
    }

    /// A source over bytes the caller hands over.
    pub fn from_vec(bytes: Vec<u8>) -> Self {
        Self {
            bytes: Bytes::Owned(bytes),
            origin: Origin::Memory,
        }
    }

    /// A source over bytes built into the program (`include_bytes!`).
    pub fn from_static(bytes: &'static [u8]) -> Self {
        Self {
            bytes: Bytes::Static(bytes),
            origin: Origin::Memory,
        }
    }

    /// The whole file's bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Mapped(map) => map,
            Bytes::Owned(v) => v,
            Bytes::Static(s) => s,
        }
    }

    /// Where the bytes came from.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Whether the bytes are a mapping of the file (not a copy).
    pub fn is_mapped(&self) -> bool {
        matches!(self.bytes, Bytes::Mapped(_))
    }

    /// The code object that runs on a device whose target is `device`. Borrowed from the
    /// source, except an entry of a compressed bundle, which is decompressed.
    pub fn select(
        &self,
        device: &TargetId,
    ) -> Result<SelectedCodeObject<'_>, CodeObjectSourceError> {
        select(self.bytes(), device, &self.origin)
    }
}

/// The code object chosen for a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectedCodeObject<'a> {
    /// The code object's bytes.
    pub bytes: Cow<'a, [u8]>,
    /// Its target, from its own `e_flags` (authoritative, unlike a bundle entry's id).
    pub target: TargetId,
    /// What the file was.
    pub container: Container,
    /// The bundle entry id, for a bundle or fat binary.
    pub entry_id: Option<String>,
    /// Which bundle of a fat binary it came from (0 otherwise).
    pub bundle: usize,
}

impl SelectedCodeObject<'_> {
    /// Parse and validate the chosen code object.
    pub fn parse(&self) -> Result<CodeObject<'_>, amdgpu_loader::Error> {
        CodeObject::parse(&self.bytes)
    }
}

/// Offset of `e_flags` in an ELF64 header.
const E_FLAGS_OFFSET: usize = 48;

/// The target in a code object's own `e_flags`, if `bytes` is an AMDGPU ELF whose flags the
/// loader accepts.
fn elf_target(bytes: &[u8]) -> Result<TargetId, amdgpu_loader::Error> {
    if Container::identify(bytes) != Some(Container::CodeObject) {
        return Err(amdgpu_loader::Error::NotElf);
    }
    let flags = bytes
        .get(E_FLAGS_OFFSET..E_FLAGS_OFFSET + 4)
        .and_then(|b| b.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or_else(|| amdgpu_loader::Error::Malformed {
            what: "ELF header".into(),
            detail: "truncated before e_flags".into(),
        })?;
    TargetId::from_e_flags(flags).map_err(amdgpu_loader::Error::from)
}

/// Pick the code object in `bytes` (any container) that suits `device` best.
pub fn select<'a>(
    bytes: &'a [u8],
    device: &TargetId,
    origin: &Origin,
) -> Result<SelectedCodeObject<'a>, CodeObjectSourceError> {
    let unreadable = |source| CodeObjectSourceError::Unreadable {
        origin: origin.clone(),
        source,
    };
    let fat = FatBinary::parse(bytes).map_err(unreadable)?;
    if fat.container == Container::CodeObject {
        let code = elf_target(bytes).map_err(unreadable)?;
        return match code.runs_on(device).map_err(amdgpu_loader::Error::from) {
            Ok(()) => Ok(SelectedCodeObject {
                bytes: Cow::Borrowed(bytes),
                target: code,
                container: fat.container,
                entry_id: None,
                bundle: 0,
            }),
            Err(amdgpu_loader::Error::Incompatible { reason, .. }) => {
                Err(CodeObjectSourceError::WrongTarget {
                    origin: origin.clone(),
                    code,
                    device: *device,
                    reason,
                })
            }
            Err(other) => Err(unreadable(other)),
        };
    }
    // Best first by the ids; the first whose own e_flags agree wins (an id can lie).
    for entry in fat.candidates_for(device) {
        let Ok(target) = elf_target(&entry.bytes) else {
            continue;
        };
        if target.runs_on(device).is_ok() {
            return Ok(chosen(entry, target, fat.container));
        }
    }
    Err(CodeObjectSourceError::NoMatchingEntry {
        origin: origin.clone(),
        container: ContainerKind(fat.container),
        device: *device,
        present: fat
            .code_objects()
            .map(|e| e.target.map_or_else(|| e.id.clone(), |t| t.to_string()))
            .collect(),
    })
}

fn chosen<'a>(
    entry: &BundleEntry<'a>,
    target: TargetId,
    container: Container,
) -> SelectedCodeObject<'a> {
    SelectedCodeObject {
        bytes: entry.bytes.clone(),
        target,
        container,
        entry_id: Some(entry.id.clone()),
        bundle: entry.bundle,
    }
}
