//! The AMDGCN processors: `EF_AMDGPU_MACH` value, name, ISA version, feature support and
//! generic family of each (code-objects.md §1.3).

/// The `EF_AMDGPU_MACH` field of `e_flags`.
pub const EF_AMDGPU_MACH: u32 = 0x0ff;
/// The `EF_AMDGPU_FEATURE_XNACK_V4` field of `e_flags`.
pub const EF_AMDGPU_FEATURE_XNACK_V4: u32 = 0x300;
/// The `EF_AMDGPU_FEATURE_SRAMECC_V4` field of `e_flags`.
pub const EF_AMDGPU_FEATURE_SRAMECC_V4: u32 = 0xc00;
/// The `EF_AMDGPU_GENERIC_VERSION` field of `e_flags` (V6 and later).
pub const EF_AMDGPU_GENERIC_VERSION: u32 = 0xff00_0000;
/// Shift of [`EF_AMDGPU_GENERIC_VERSION`].
pub const EF_AMDGPU_GENERIC_VERSION_OFFSET: u32 = 24;

use crate::gfx_version::GfxVersion;
use crate::target_id::Feature;

/// One AMDGCN processor as the ELF `EF_AMDGPU_MACH` field and ROCr know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Processor {
    /// `EF_AMDGPU_MACH_AMDGCN_*` value.
    pub mach: u8,
    /// The LLVM processor name, e.g. `gfx90a` or `gfx11-generic`.
    pub name: &'static str,
    /// ISA version (major, minor, stepping); for a generic processor, its family's major and
    /// minor with stepping 0 (`gfx9-4-generic` is 9.4.0).
    pub version: (u8, u8, u8),
    /// Whether the processor has the `xnack` feature (page-fault replay).
    pub xnack: bool,
    /// Whether the processor has the `sramecc` feature.
    pub sramecc: bool,
    /// For a generic processor: `None`. For a concrete one: the generic processor whose code it
    /// runs, and the generic version in which it joined that family.
    pub generic: Option<(&'static str, u8)>,
    /// Whether this is a generic processor (`gfx*-generic`).
    pub is_generic: bool,
}

impl Processor {
    /// `gfx_target_version` as KFD's topology reports it: major·10000 + minor·100 + stepping.
    pub fn gfx_target_version(&self) -> u32 {
        let (major, minor, stepping) = self.version;
        u32::from(major) * 10000 + u32::from(minor) * 100 + u32::from(stepping)
    }

    /// Whether the processor has the unified VGPR file of GFX90A, GFX94x and GFX950 (ArchVGPRs and
    /// AccVGPRs allocated together, encoding granule 8).
    pub fn has_unified_vgprs(&self) -> bool {
        matches!(self.version, (9, 0, 10) | (9, 4 | 5, _))
    }

    /// Whether the processor supports `feature`.
    pub fn supports(&self, feature: Feature) -> bool {
        match feature {
            Feature::Xnack => self.xnack,
            Feature::Sramecc => self.sramecc,
        }
    }

    /// The processor with this `EF_AMDGPU_MACH` value.
    pub fn from_mach(mach: u32) -> Option<&'static Processor> {
        PROCESSORS.iter().find(|p| u32::from(p.mach) == mach)
    }

    /// The processor with this LLVM name.
    pub fn from_name(name: &str) -> Option<&'static Processor> {
        PROCESSORS.iter().find(|p| p.name == name)
    }

    /// The concrete processor with this `gfx_target_version`.
    pub fn from_gfx_target_version(version: u32) -> Option<&'static Processor> {
        PROCESSORS
            .iter()
            .find(|p| !p.is_generic && p.gfx_target_version() == version)
    }

    /// The concrete processor of a KFD ISA version.
    pub fn from_gfx_version(version: GfxVersion) -> Option<&'static Processor> {
        Self::from_gfx_target_version(version.target_version())
    }

    /// Every processor this crate knows.
    pub fn all() -> &'static [Processor] {
        PROCESSORS
    }
}

const fn concrete(
    mach: u8,
    name: &'static str,
    version: (u8, u8, u8),
    xnack: bool,
    sramecc: bool,
    generic: Option<&'static str>,
) -> Processor {
    Processor {
        mach,
        name,
        version,
        xnack,
        sramecc,
        // Every concrete member joined its generic family at version 1 so far (ROCr's table has
        // minimum version 1 for every generic; AMDGPUUsage lists no later additions as of LLVM
        // 22). Unsure for processors added after LLVM 22.
        generic: match generic {
            Some(family) => Some((family, 1)),
            None => None,
        },
        is_generic: false,
    }
}

const fn generic(
    mach: u8,
    name: &'static str,
    version: (u8, u8, u8),
    xnack: bool,
    sramecc: bool,
) -> Processor {
    Processor {
        mach,
        name,
        version,
        xnack,
        sramecc,
        generic: None,
        is_generic: true,
    }
}

const G9: Option<&str> = Some("gfx9-generic");
const G94: Option<&str> = Some("gfx9-4-generic");
const G101: Option<&str> = Some("gfx10-1-generic");
const G103: Option<&str> = Some("gfx10-3-generic");
const G11: Option<&str> = Some("gfx11-generic");
const G12: Option<&str> = Some("gfx12-generic");

/// The AMDGCN processors: `EF_AMDGPU_MACH` values from LLVM 22's `ELF.h`, feature support from
/// the default `e_flags` clang-22 emits for each (a feature is supported iff clang marks it
/// "any"), which agrees with ROCr's `GetMachInfo` (code-objects.md §1.3). 0x040 (gfx940) and
/// 0x04b (gfx941) are reserved in current LLVM and refused.
static PROCESSORS: &[Processor] = &[
    concrete(0x20, "gfx600", (6, 0, 0), false, false, None),
    concrete(0x21, "gfx601", (6, 0, 1), false, false, None),
    concrete(0x3a, "gfx602", (6, 0, 2), false, false, None),
    concrete(0x22, "gfx700", (7, 0, 0), false, false, None),
    concrete(0x23, "gfx701", (7, 0, 1), false, false, None),
    concrete(0x24, "gfx702", (7, 0, 2), false, false, None),
    concrete(0x25, "gfx703", (7, 0, 3), false, false, None),
    concrete(0x26, "gfx704", (7, 0, 4), false, false, None),
    concrete(0x3b, "gfx705", (7, 0, 5), false, false, None),
    concrete(0x28, "gfx801", (8, 0, 1), true, false, None),
    concrete(0x29, "gfx802", (8, 0, 2), false, false, None),
    concrete(0x2a, "gfx803", (8, 0, 3), false, false, None),
    concrete(0x3c, "gfx805", (8, 0, 5), false, false, None),
    concrete(0x2b, "gfx810", (8, 1, 0), true, false, None),
    concrete(0x2c, "gfx900", (9, 0, 0), true, false, G9),
    concrete(0x2d, "gfx902", (9, 0, 2), true, false, G9),
    concrete(0x2e, "gfx904", (9, 0, 4), true, false, G9),
    concrete(0x2f, "gfx906", (9, 0, 6), true, true, G9),
    concrete(0x30, "gfx908", (9, 0, 8), true, true, None),
    concrete(0x31, "gfx909", (9, 0, 9), true, false, G9),
    concrete(0x3f, "gfx90a", (9, 0, 10), true, true, None),
    concrete(0x32, "gfx90c", (9, 0, 12), true, false, G9),
    concrete(0x4c, "gfx942", (9, 4, 2), true, true, G94),
    concrete(0x4f, "gfx950", (9, 5, 0), true, true, G94),
    concrete(0x33, "gfx1010", (10, 1, 0), true, false, G101),
    concrete(0x34, "gfx1011", (10, 1, 1), true, false, G101),
    concrete(0x35, "gfx1012", (10, 1, 2), true, false, G101),
    concrete(0x42, "gfx1013", (10, 1, 3), true, false, G101),
    concrete(0x36, "gfx1030", (10, 3, 0), false, false, G103),
    concrete(0x37, "gfx1031", (10, 3, 1), false, false, G103),
    concrete(0x38, "gfx1032", (10, 3, 2), false, false, G103),
    concrete(0x39, "gfx1033", (10, 3, 3), false, false, G103),
    concrete(0x3e, "gfx1034", (10, 3, 4), false, false, G103),
    concrete(0x3d, "gfx1035", (10, 3, 5), false, false, G103),
    concrete(0x45, "gfx1036", (10, 3, 6), false, false, G103),
    concrete(0x41, "gfx1100", (11, 0, 0), false, false, G11),
    concrete(0x46, "gfx1101", (11, 0, 1), false, false, G11),
    concrete(0x47, "gfx1102", (11, 0, 2), false, false, G11),
    concrete(0x44, "gfx1103", (11, 0, 3), false, false, G11),
    concrete(0x43, "gfx1150", (11, 5, 0), false, false, G11),
    concrete(0x4a, "gfx1151", (11, 5, 1), false, false, G11),
    concrete(0x55, "gfx1152", (11, 5, 2), false, false, G11),
    concrete(0x58, "gfx1153", (11, 5, 3), false, false, G11),
    concrete(0x48, "gfx1200", (12, 0, 0), false, false, G12),
    concrete(0x4e, "gfx1201", (12, 0, 1), false, false, G12),
    concrete(0x49, "gfx1250", (12, 5, 0), true, true, None),
    concrete(0x5a, "gfx1251", (12, 5, 1), true, true, None),
    generic(0x51, "gfx9-generic", (9, 0, 0), true, false),
    generic(0x5f, "gfx9-4-generic", (9, 4, 0), true, true),
    generic(0x52, "gfx10-1-generic", (10, 1, 0), true, false),
    generic(0x53, "gfx10-3-generic", (10, 3, 0), false, false),
    generic(0x54, "gfx11-generic", (11, 0, 0), false, false),
    generic(0x59, "gfx12-generic", (12, 0, 0), false, false),
];
