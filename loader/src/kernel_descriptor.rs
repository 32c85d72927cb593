//! The 64-byte AMDHSA kernel descriptor and the bit fields of its register images, as LLVM's
//! `llvm/Support/AMDHSAKernelDescriptor.h` defines them (code-objects.md §5). Field and bit
//! names follow that header (`COMPUTE_PGM_RSRC1_<NAME>` becomes [`rsrc1`]`::<NAME>`), so the
//! workspace test `tests/abi_headers/` can compare every shift and width with it.

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Required alignment of a kernel descriptor in GPU memory ("CP microcode requires").
pub const KERNEL_DESCRIPTOR_ALIGN: u64 = 64;
/// Required alignment of a kernel's entry point (`COMPUTE_PGM_LO` holds `address >> 8`).
pub const KERNEL_ENTRY_ALIGN: u64 = 256;

/// `kernel_descriptor_t`.
#[repr(C)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct KernelDescriptor {
    /// LDS bytes the kernel allocates statically.
    pub group_segment_fixed_size: u32,
    /// Scratch bytes per work-item the kernel needs (excluding dynamic stack).
    pub private_segment_fixed_size: u32,
    /// Bytes of kernarg segment, explicit plus hidden arguments.
    pub kernarg_size: u32,
    /// Reserved, 0.
    pub reserved0: [u8; 4],
    /// Signed byte offset from this descriptor to the kernel's first instruction.
    pub kernel_code_entry_byte_offset: i64,
    /// Reserved, 0.
    pub reserved1: [u8; 20],
    /// COMPUTE_PGM_RSRC3 image (GFX90A+ and GFX10+), see [`rsrc3`].
    pub compute_pgm_rsrc3: u32,
    /// COMPUTE_PGM_RSRC1 image, see [`rsrc1`].
    pub compute_pgm_rsrc1: u32,
    /// COMPUTE_PGM_RSRC2 image, see [`rsrc2`].
    pub compute_pgm_rsrc2: u32,
    /// Which user SGPRs the CP sets up, and more; see [`kernel_code_property`].
    pub kernel_code_properties: u16,
    /// Preloaded kernarg span, see [`kernarg_preload_spec`].
    pub kernarg_preload: u16,
    /// Reserved, 0.
    pub reserved3: [u8; 4],
}

/// Size of a kernel descriptor.
pub const KERNEL_DESCRIPTOR_SIZE: usize = size_of::<KernelDescriptor>();

/// A bit field of a register image: `width` bits starting at `shift`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BitField {
    /// Position of the lowest bit.
    pub shift: u32,
    /// Number of bits.
    pub width: u32,
}

impl BitField {
    const fn new(shift: u32, width: u32) -> Self {
        Self { shift, width }
    }

    /// The field's mask, in place.
    pub const fn mask(self) -> u32 {
        (((1u64 << self.width) - 1) << self.shift) as u32
    }

    /// Extract the field from `word`.
    pub const fn get(self, word: u32) -> u32 {
        (word & self.mask()) >> self.shift
    }

    /// Replace the field in `word` with `value` (truncated to the field's width).
    #[must_use]
    pub const fn set(self, word: u32, value: u32) -> u32 {
        (word & !self.mask()) | ((value << self.shift) & self.mask())
    }
}

macro_rules! bit_fields {
    ($(#[$doc:meta])* $module:ident, $cprefix:literal { $($name:ident = ($shift:literal, $width:literal),)* }) => {
        $(#[$doc])*
        pub mod $module {
            use super::BitField;

            /// The C prefix of every name in this module.
            pub const C_PREFIX: &str = $cprefix;

            $(
                #[doc = concat!("`", $cprefix, stringify!($name), "`")]
                pub const $name: BitField = BitField::new($shift, $width);
            )*

            /// Every field, with its name as LLVM spells it after the prefix.
            pub const ALL: &[(&str, BitField)] = &[$((stringify!($name), $name),)*];
        }
    };
}

bit_fields! {
    /// COMPUTE_PGM_RSRC1 fields.
    rsrc1, "COMPUTE_PGM_RSRC1_" {
        GRANULATED_WORKITEM_VGPR_COUNT = (0, 6),
        GRANULATED_WAVEFRONT_SGPR_COUNT = (6, 4),
        PRIORITY = (10, 2),
        FLOAT_ROUND_MODE_32 = (12, 2),
        FLOAT_ROUND_MODE_16_64 = (14, 2),
        FLOAT_DENORM_MODE_32 = (16, 2),
        FLOAT_DENORM_MODE_16_64 = (18, 2),
        PRIV = (20, 1),
        GFX6_GFX11_ENABLE_DX10_CLAMP = (21, 1),
        GFX12_PLUS_ENABLE_WG_RR_EN = (21, 1),
        DEBUG_MODE = (22, 1),
        GFX6_GFX11_ENABLE_IEEE_MODE = (23, 1),
        GFX12_PLUS_DISABLE_PERF = (23, 1),
        BULKY = (24, 1),
        CDBG_USER = (25, 1),
        GFX9_PLUS_FP16_OVFL = (26, 1),
        GFX10_PLUS_WGP_MODE = (29, 1),
        GFX10_PLUS_MEM_ORDERED = (30, 1),
        GFX10_PLUS_FWD_PROGRESS = (31, 1),
    }
}

bit_fields! {
    /// COMPUTE_PGM_RSRC2 fields.
    rsrc2, "COMPUTE_PGM_RSRC2_" {
        ENABLE_PRIVATE_SEGMENT = (0, 1),
        USER_SGPR_COUNT = (1, 5),
        GFX6_GFX11_ENABLE_TRAP_HANDLER = (6, 1),
        ENABLE_SGPR_WORKGROUP_ID_X = (7, 1),
        ENABLE_SGPR_WORKGROUP_ID_Y = (8, 1),
        ENABLE_SGPR_WORKGROUP_ID_Z = (9, 1),
        ENABLE_SGPR_WORKGROUP_INFO = (10, 1),
        ENABLE_VGPR_WORKITEM_ID = (11, 2),
        ENABLE_EXCEPTION_ADDRESS_WATCH = (13, 1),
        ENABLE_EXCEPTION_MEMORY = (14, 1),
        GRANULATED_LDS_SIZE = (15, 9),
        ENABLE_EXCEPTION_IEEE_754_FP_INVALID_OPERATION = (24, 1),
        ENABLE_EXCEPTION_FP_DENORMAL_SOURCE = (25, 1),
        ENABLE_EXCEPTION_IEEE_754_FP_DIVISION_BY_ZERO = (26, 1),
        ENABLE_EXCEPTION_IEEE_754_FP_OVERFLOW = (27, 1),
        ENABLE_EXCEPTION_IEEE_754_FP_UNDERFLOW = (28, 1),
        ENABLE_EXCEPTION_IEEE_754_FP_INEXACT = (29, 1),
        ENABLE_EXCEPTION_INT_DIVIDE_BY_ZERO = (30, 1),
    }
}

bit_fields! {
    /// COMPUTE_PGM_RSRC3 fields (their meaning depends on the generation).
    rsrc3, "COMPUTE_PGM_RSRC3_" {
        GFX90A_ACCUM_OFFSET = (0, 6),
        GFX90A_TG_SPLIT = (16, 1),
        GFX10_GFX11_SHARED_VGPR_COUNT = (0, 4),
        GFX11_INST_PREF_SIZE = (4, 6),
        GFX11_TRAP_ON_START = (10, 1),
        GFX11_TRAP_ON_END = (11, 1),
        GFX12_PLUS_INST_PREF_SIZE = (4, 8),
        GFX12_PLUS_GLG_EN = (13, 1),
        GFX11_PLUS_IMAGE_OP = (31, 1),
    }
}

bit_fields! {
    /// `kernel_code_properties` fields.
    kernel_code_property, "KERNEL_CODE_PROPERTY_" {
        ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER = (0, 1),
        ENABLE_SGPR_DISPATCH_PTR = (1, 1),
        ENABLE_SGPR_QUEUE_PTR = (2, 1),
        ENABLE_SGPR_KERNARG_SEGMENT_PTR = (3, 1),
        ENABLE_SGPR_DISPATCH_ID = (4, 1),
        ENABLE_SGPR_FLAT_SCRATCH_INIT = (5, 1),
        ENABLE_SGPR_PRIVATE_SEGMENT_SIZE = (6, 1),
        ENABLE_WAVEFRONT_SIZE32 = (10, 1),
        USES_DYNAMIC_STACK = (11, 1),
    }
}

bit_fields! {
    /// `kernarg_preload` fields (in dwords).
    kernarg_preload_spec, "KERNARG_PRELOAD_SPEC_" {
        LENGTH = (0, 7),
        OFFSET = (7, 9),
    }
}

/// A user SGPR the command processor initialises, in the fixed order of AMDGPUUsage's "Initial
/// Kernel Execution State" (code-objects.md §5.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UserSgpr {
    /// The scratch buffer resource (V#): 4 SGPRs.
    PrivateSegmentBuffer,
    /// The address of the AQL dispatch packet: 2 SGPRs.
    DispatchPtr,
    /// The address of the `amd_queue_t`: 2 SGPRs.
    QueuePtr,
    /// The address of the kernarg segment: 2 SGPRs.
    KernargSegmentPtr,
    /// The 64-bit dispatch id: 2 SGPRs.
    DispatchId,
    /// Flat scratch init: 2 SGPRs.
    FlatScratchInit,
    /// Preloaded kernarg dwords (`kernarg_preload` LENGTH SGPRs).
    PreloadedKernargs,
    /// The per-lane private segment size: 1 SGPR.
    PrivateSegmentSize,
}

/// One entry of a kernel's user-SGPR layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UserSgprSlot {
    /// What the SGPRs hold.
    pub kind: UserSgpr,
    /// The first SGPR (s\[first\]).
    pub first: u32,
    /// How many SGPRs.
    pub count: u32,
}

/// At most this many user SGPRs are set up by the command processor.
pub const MAX_USER_SGPRS: u32 = 16;

impl KernelDescriptor {
    /// Size of a kernel descriptor, as a `u64`.
    pub const SIZE: u64 = KERNEL_DESCRIPTOR_SIZE as u64;

    /// Read a descriptor from the first 64 bytes of `bytes` (any alignment).
    pub fn read(bytes: &[u8]) -> Option<Self> {
        Self::read_from_prefix(bytes).ok().map(|(kd, _)| kd)
    }

    /// The user SGPRs the command processor sets up, dense from s0 in AMDGPUUsage's order
    /// (private segment buffer, dispatch ptr, queue ptr, kernarg segment ptr, dispatch id,
    /// flat scratch init, preloaded kernargs, private segment size). Entries that would pass
    /// s15 are cut off: the CP initialises at most 16 user SGPRs.
    pub fn user_sgprs(&self) -> impl Iterator<Item = UserSgprSlot> + use<> {
        use kernel_code_property as p;
        let enabled = |field: BitField| self.property(field) != 0;
        let items = [
            (
                UserSgpr::PrivateSegmentBuffer,
                enabled(p::ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER),
                4,
            ),
            (
                UserSgpr::DispatchPtr,
                enabled(p::ENABLE_SGPR_DISPATCH_PTR),
                2,
            ),
            (UserSgpr::QueuePtr, enabled(p::ENABLE_SGPR_QUEUE_PTR), 2),
            (
                UserSgpr::KernargSegmentPtr,
                enabled(p::ENABLE_SGPR_KERNARG_SEGMENT_PTR),
                2,
            ),
            (UserSgpr::DispatchId, enabled(p::ENABLE_SGPR_DISPATCH_ID), 2),
            (
                UserSgpr::FlatScratchInit,
                enabled(p::ENABLE_SGPR_FLAT_SCRATCH_INIT),
                2,
            ),
            (
                UserSgpr::PreloadedKernargs,
                self.kernarg_preload_length() != 0,
                self.kernarg_preload_length(),
            ),
            (
                UserSgpr::PrivateSegmentSize,
                enabled(p::ENABLE_SGPR_PRIVATE_SEGMENT_SIZE),
                1,
            ),
        ];
        let mut next = 0u32;
        items.into_iter().filter_map(move |(kind, on, count)| {
            if !on || next >= MAX_USER_SGPRS {
                return None;
            }
            let first = next;
            let count = count.min(MAX_USER_SGPRS - first);
            next += count;
            Some(UserSgprSlot { kind, first, count })
        })
    }

    /// The number of user SGPRs [`Self::user_sgprs`] lays out.
    pub fn enabled_user_sgpr_count(&self) -> u32 {
        self.user_sgprs().map(|s| s.count).sum()
    }

    /// COMPUTE_PGM_RSRC3.ACCUM_OFFSET (GFX90A, GFX94x, GFX950): the first AccVGPR is
    /// `4 * (accum_offset + 1)`.
    pub fn accum_offset(&self) -> u32 {
        rsrc3::GFX90A_ACCUM_OFFSET.get(self.compute_pgm_rsrc3)
    }

    /// COMPUTE_PGM_RSRC1.GRANULATED_WORKITEM_VGPR_COUNT.
    pub fn granulated_vgpr_count(&self) -> u32 {
        rsrc1::GRANULATED_WORKITEM_VGPR_COUNT.get(self.compute_pgm_rsrc1)
    }

    /// VGPRs per work-item the descriptor allocates, `(GRANULATED_WORKITEM_VGPR_COUNT + 1) ×
    /// granule`, the encoding granule being 8 on GFX90A/GFX94x/GFX950 (ArchVGPRs and AccVGPRs
    /// together), 8 in wave32 and 4 in wave64 on GFX10+, and 4 on older GFX9 and before
    /// (LLVM's `getVGPREncodingGranule`; code-objects.md §5.2). This is what
    /// `.amdhsa_next_free_vgpr` disassembles to.
    pub fn allocated_vgprs(&self, processor: &crate::target::Processor) -> u32 {
        let granule = if processor.has_unified_vgprs()
            || (processor.version.0 >= 10 && self.wavefront_size() == 32)
        {
            8
        } else {
            4
        };
        (self.granulated_vgpr_count() + 1) * granule
    }

    /// COMPUTE_PGM_RSRC1.GRANULATED_WAVEFRONT_SGPR_COUNT.
    pub fn granulated_sgpr_count(&self) -> u32 {
        rsrc1::GRANULATED_WAVEFRONT_SGPR_COUNT.get(self.compute_pgm_rsrc1)
    }

    fn property(&self, field: BitField) -> u32 {
        field.get(u32::from(self.kernel_code_properties))
    }

    /// Number of user SGPRs the CP initialises (COMPUTE_PGM_RSRC2.USER_SGPR_COUNT).
    pub fn user_sgpr_count(&self) -> u32 {
        rsrc2::USER_SGPR_COUNT.get(self.compute_pgm_rsrc2)
    }

    /// Wavefront size: 32 if ENABLE_WAVEFRONT_SIZE32 is set, else 64.
    pub fn wavefront_size(&self) -> u32 {
        if self.property(kernel_code_property::ENABLE_WAVEFRONT_SIZE32) != 0 {
            32
        } else {
            64
        }
    }

    /// Whether the kernel may use a dynamic stack (USES_DYNAMIC_STACK).
    pub fn uses_dynamic_stack(&self) -> bool {
        self.property(kernel_code_property::USES_DYNAMIC_STACK) != 0
    }

    /// Preloaded kernarg dwords (KERNARG_PRELOAD_SPEC.LENGTH).
    pub fn kernarg_preload_length(&self) -> u32 {
        kernarg_preload_spec::LENGTH.get(u32::from(self.kernarg_preload))
    }

    /// First preloaded kernarg dword (KERNARG_PRELOAD_SPEC.OFFSET).
    pub fn kernarg_preload_offset(&self) -> u32 {
        kernarg_preload_spec::OFFSET.get(u32::from(self.kernarg_preload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_extract_and_insert() {
        let word = rsrc2::USER_SGPR_COUNT.set(0, 6);
        assert_eq!(word, 6 << 1);
        assert_eq!(rsrc2::USER_SGPR_COUNT.get(word | 1), 6);
        assert_eq!(rsrc2::USER_SGPR_COUNT.set(u32::MAX, 0), !(0x1f << 1));
        assert_eq!(rsrc1::GFX10_PLUS_FWD_PROGRESS.mask(), 1 << 31);
        let kd = KernelDescriptor {
            kernel_code_properties: 1 << 10 | 1 << 11,
            kernarg_preload: 3 | 2 << 7,
            compute_pgm_rsrc2: 8 << 1,
            ..KernelDescriptor::default()
        };
        assert_eq!(kd.wavefront_size(), 32);
        assert!(kd.uses_dynamic_stack());
        assert_eq!(
            (kd.kernarg_preload_length(), kd.kernarg_preload_offset()),
            (3, 2)
        );
        assert_eq!(kd.user_sgpr_count(), 8);
        assert_eq!(KERNEL_DESCRIPTOR_SIZE, 64);
    }

    fn layout(kd: &KernelDescriptor) -> Vec<(UserSgpr, u32, u32)> {
        kd.user_sgprs()
            .map(|s| (s.kind, s.first, s.count))
            .collect()
    }

    #[test]
    fn user_sgprs_are_dense_in_the_fixed_order() {
        // gfx90a simple kernel, kcp 0x9: s[0:3] scratch V#, s[4:5] kernarg pointer.
        let kd = KernelDescriptor {
            kernel_code_properties: 0x9,
            ..KernelDescriptor::default()
        };
        assert_eq!(
            layout(&kd),
            [
                (UserSgpr::PrivateSegmentBuffer, 0, 4),
                (UserSgpr::KernargSegmentPtr, 4, 2)
            ]
        );
        // gfx942 with 3 preloaded arguments (4 dwords): s[0:1] kernarg pointer, s[2:5] the
        // preloaded dwords (code-objects.md §5.5).
        let kd = KernelDescriptor {
            kernel_code_properties: 0x8,
            kernarg_preload: 4,
            ..KernelDescriptor::default()
        };
        assert_eq!(
            layout(&kd),
            [
                (UserSgpr::KernargSegmentPtr, 0, 2),
                (UserSgpr::PreloadedKernargs, 2, 4)
            ]
        );
        assert_eq!(kd.enabled_user_sgpr_count(), 6);
        // Kernel with calls on gfx90a, kcp 0x83b; and everything on, cut off at 16.
        let kd = KernelDescriptor {
            kernel_code_properties: 0x83b,
            ..KernelDescriptor::default()
        };
        assert_eq!(kd.enabled_user_sgpr_count(), 4 + 2 + 2 + 2 + 2);
        let kd = KernelDescriptor {
            kernel_code_properties: 0x7f,
            kernarg_preload: 10,
            ..KernelDescriptor::default()
        };
        let slots = layout(&kd);
        assert_eq!(slots.last(), Some(&(UserSgpr::PreloadedKernargs, 14, 2)));
        assert_eq!(kd.enabled_user_sgpr_count(), MAX_USER_SGPRS);
    }
}
