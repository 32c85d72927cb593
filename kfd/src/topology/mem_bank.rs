//! `nodes/N/mem_banks/M/properties`: one memory heap of a node (kfd.md §2.5).

use crate::abi::sysfs::mem_bank;
use crate::topology::property_text::typed_properties;

typed_properties! {
    /// The `properties` file of one memory bank.
    pub struct MemBankProperties {
        /// One of the `HEAP_TYPE_*` values (see [`HeapType`]).
        heap_type: u32 = mem_bank::HEAP_TYPE,
        /// Size in bytes.
        size_in_bytes: u64 = mem_bank::SIZE_IN_BYTES,
        /// `HSA_MEM_FLAGS_*`: bit 0 hot-pluggable, bit 1 non-volatile.
        flags: u32 = mem_bank::FLAGS,
        /// Bus width in bits.
        width: u32 = mem_bank::WIDTH,
        /// Max memory clock in MHz.
        mem_clk_max: u32 = mem_bank::MEM_CLK_MAX,
    }
}

/// What kind of memory a bank is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HeapType {
    /// System memory.
    System,
    /// VRAM the host can reach through a large BAR.
    FrameBufferPublic,
    /// VRAM the host cannot reach (or only a small BAR window of it).
    FrameBufferPrivate,
    /// Global data share.
    Gds,
    /// Local data share.
    Lds,
    /// Scratch.
    Scratch,
    /// A value this driver does not know.
    Other(u32),
}

impl HeapType {
    /// Decode `heap_type`.
    pub const fn from_raw(value: u32) -> Self {
        match value {
            mem_bank::HEAP_TYPE_SYSTEM => Self::System,
            mem_bank::HEAP_TYPE_FB_PUBLIC => Self::FrameBufferPublic,
            mem_bank::HEAP_TYPE_FB_PRIVATE => Self::FrameBufferPrivate,
            mem_bank::HEAP_TYPE_GPU_GDS => Self::Gds,
            mem_bank::HEAP_TYPE_GPU_LDS => Self::Lds,
            mem_bank::HEAP_TYPE_GPU_SCRATCH => Self::Scratch,
            other => Self::Other(other),
        }
    }

    /// Whether this is VRAM.
    pub const fn is_vram(self) -> bool {
        matches!(self, Self::FrameBufferPublic | Self::FrameBufferPrivate)
    }
}

/// One memory bank of a node.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemBank {
    /// Its index under `mem_banks/`.
    pub index: u32,
    /// Its properties.
    pub properties: MemBankProperties,
    /// The `used_memory` file of GPU banks, if present and readable.
    pub used_memory: Option<u64>,
}

impl MemBank {
    /// The decoded heap type.
    pub const fn heap_type(&self) -> HeapType {
        HeapType::from_raw(self.properties.heap_type)
    }
}
