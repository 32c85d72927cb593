//! The loader's one error type. Every variant names what is wrong, so that a hostile or broken
//! code object is refused with a message a person can act on.

/// Everything that can go wrong while reading, placing or resolving a code object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes do not start with the ELF magic number.
    #[error("not an ELF file (no \\x7fELF magic)")]
    NotElf,
    /// An ELF file, but not a 64-bit little-endian one as every AMDGPU HSA code object is.
    #[error("unsupported ELF kind: {0} (AMDGPU HSA code objects are ELFCLASS64, ELFDATA2LSB)")]
    UnsupportedElf(&'static str),
    /// `e_machine` is not `EM_AMDGPU`.
    #[error("e_machine is {0}, not EM_AMDGPU (224)")]
    NotAmdgpu(u16),
    /// `EI_OSABI` is not `ELFOSABI_AMDGPU_HSA`.
    #[error("EI_OSABI is {0}, not ELFOSABI_AMDGPU_HSA (64): this is not an HSA code object")]
    NotHsa(u8),
    /// A code-object version the loader refuses (V2 and V3, or an unknown ABI version).
    #[error(
        "EI_ABIVERSION {abi_version} ({}) is not supported: this loader reads code object V4, V5 and V6",
        describe_abi(*abi_version)
    )]
    UnsupportedVersion {
        /// The `EI_ABIVERSION` byte.
        abi_version: u8,
    },
    /// `e_type` is not `ET_DYN`.
    #[error(
        "ELF type {0} is not loadable: the loader needs ET_DYN (a code object linked by ld.lld -shared)"
    )]
    NotShared(u16),
    /// `e_flags` names no processor this loader knows, a reserved one, or a feature the processor
    /// does not have.
    #[error("e_flags {flags:#x}: {reason}")]
    BadFlags {
        /// The `e_flags` word.
        flags: u32,
        /// What is wrong with it.
        reason: String,
    },
    /// A target-id string could not be read.
    #[error("target id `{text}`: {reason}")]
    BadTargetId {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A structure of the file is inconsistent: out of the file, out of the image, misaligned,
    /// overlapping, a bad count or index.
    #[error("malformed {what}: {detail}")]
    Malformed {
        /// The structure at fault (`program header 3`, `.dynsym`, `DT_RELA`, ...).
        what: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The `NT_AMDGPU_METADATA` note is malformed or disagrees with the ELF.
    #[error("metadata: {0}")]
    Metadata(String),
    /// A relocation cannot be applied.
    #[error("relocation {index} ({kind}) at {offset:#x}: {detail}")]
    Relocation {
        /// Index of the entry in the dynamic relocation table.
        index: usize,
        /// The relocation type's name.
        kind: String,
        /// `r_offset`.
        offset: u64,
        /// What is wrong.
        detail: String,
    },
    /// A relocation refers to an undefined symbol that the caller did not define.
    #[error(
        "undefined symbol `{name}` (relocation {index}) has no external definition; define it before loading"
    )]
    UndefinedSymbol {
        /// The symbol's name.
        name: String,
        /// Index of the first relocation that needs it.
        index: usize,
    },
    /// The destination given to [`crate::CodeObject::load`] cannot hold the image.
    #[error("destination of {len:#x} bytes cannot hold the image of {needed:#x} bytes")]
    DestinationTooSmall {
        /// Length of the destination slice.
        len: usize,
        /// [`crate::CodeObject::image_size`].
        needed: u64,
    },
    /// The GPU address given to [`crate::CodeObject::load`] is not aligned as the image needs.
    #[error("base address {base:#x} is not aligned to {align:#x} bytes")]
    MisalignedBase {
        /// The base address.
        base: u64,
        /// [`crate::CodeObject::image_align`].
        align: u64,
    },
    /// An image does not fit at the given base address (the addresses would wrap).
    #[error("the image does not fit at base address {base:#x}")]
    AddressOverflow {
        /// The base address.
        base: u64,
    },
    /// The same exported name is defined twice in one namespace (ROCr's
    /// `HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED`).
    #[error("symbol `{0}` is already defined")]
    AlreadyDefined(String),
    /// A code object built for one target cannot run on an agent.
    #[error("code object for {code} cannot run on {agent}: {reason}")]
    Incompatible {
        /// The code object's target id (`gfx90a:xnack-`), as [`crate::TargetId`] displays it.
        code: String,
        /// The agent's target id.
        agent: String,
        /// Why not.
        reason: &'static str,
    },
    /// An offload bundle or fat binary is malformed.
    #[error("offload bundle: {0}")]
    Bundle(String),
    /// A compressed offload bundle cannot be decompressed.
    #[error("compressed offload bundle: {0}")]
    Decompression(String),
}

fn describe_abi(abi_version: u8) -> &'static str {
    match abi_version {
        0 => "code object V2",
        1 => "code object V3",
        _ => "unknown",
    }
}

impl Error {
    /// A [`Error::Malformed`] for `what`.
    pub(crate) fn malformed(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::Malformed {
            what: what.into(),
            detail: detail.into(),
        }
    }
}

/// The loader's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<amdgpu_target::Error> for Error {
    /// The target crate's errors keep their variants here, so that callers match one type.
    fn from(error: amdgpu_target::Error) -> Self {
        match error {
            amdgpu_target::Error::BadFlags { flags, reason } => Self::BadFlags { flags, reason },
            amdgpu_target::Error::BadTargetId { text, reason } => {
                Self::BadTargetId { text, reason }
            }
            amdgpu_target::Error::Incompatible {
                code,
                agent,
                reason,
            } => Self::Incompatible {
                code,
                agent,
                reason,
            },
            other => Self::Malformed {
                what: "target".to_owned(),
                detail: other.to_string(),
            },
        }
    }
}
