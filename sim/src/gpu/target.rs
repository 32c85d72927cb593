//! The GPU targets the simulator models.

/// A simulated ISA target. The shader core decodes and executes its machine code; the
/// topology reports it as `gfx_target_version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GfxTarget {
    /// gfx90a (CDNA2, MI200 series), `gfx_target_version` 90010.
    Gfx90a,
    /// gfx942 (CDNA3, MI300 series), `gfx_target_version` 90402.
    Gfx942,
}

impl GfxTarget {
    /// The processor name, e.g. `"gfx90a"`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Gfx90a => "gfx90a",
            Self::Gfx942 => "gfx942",
        }
    }

    /// `gfx_target_version` as KFD prints it: major·10000 + minor·100 + stepping.
    pub const fn gfx_target_version(self) -> u32 {
        match self {
            Self::Gfx90a => 90010,
            Self::Gfx942 => 90402,
        }
    }

    /// The target for a `gfx_target_version`, if simulated.
    pub const fn from_gfx_target_version(version: u32) -> Option<Self> {
        match version {
            90010 => Some(Self::Gfx90a),
            90402 => Some(Self::Gfx942),
            _ => None,
        }
    }

    /// Wavefront size (both are wave64 parts).
    pub const fn wavefront_size(self) -> u32 {
        64
    }
}
