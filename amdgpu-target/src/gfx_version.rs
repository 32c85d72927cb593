//! `gfx_target_version`: the ISA version as KFD's topology reports it.
//!
//! KFD prints the ISA version as one decimal, major·10000 + minor·100 + stepping (90010 is
//! gfx90a, 90402 gfx942, 100300 gfx1030); processor names print the minor version and the
//! stepping as one hex digit each (kfd.md §2.3). It is the ISA target, not the GC IP version:
//! MI300X (GC 9.4.3) reports 90402.

use std::fmt;

/// An ISA version as KFD reports it in `gfx_target_version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GfxVersion {
    /// Major version (9 for gfx9xx).
    pub major: u32,
    /// Minor version (0..=15).
    pub minor: u32,
    /// Stepping (0..=15).
    pub stepping: u32,
}

/// Why a `gfx_target_version` does not name an ISA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GfxVersionError {
    /// 0: the node is not a GPU, or the kernel does not know its ISA.
    #[error("gfx_target_version is 0")]
    Zero,
    /// The minor version or stepping does not fit one hex digit of a processor name.
    #[error("gfx_target_version {0} has a minor version or stepping above 15")]
    NotRepresentable(u32),
}

impl GfxVersion {
    /// Decode `gfx_target_version`.
    pub const fn from_target_version(value: u32) -> Result<Self, GfxVersionError> {
        if value == 0 {
            return Err(GfxVersionError::Zero);
        }
        let version = Self {
            major: value / 10000,
            minor: (value / 100) % 100,
            stepping: value % 100,
        };
        if version.minor > 15 || version.stepping > 15 {
            return Err(GfxVersionError::NotRepresentable(value));
        }
        Ok(version)
    }

    /// Encode back into `gfx_target_version` (the form kernel code compares, e.g. `< 100100`).
    pub const fn target_version(self) -> u32 {
        self.major * 10000 + self.minor * 100 + self.stepping
    }

    /// The processor name, e.g. `gfx90a`.
    pub fn processor_name(self) -> String {
        format!("gfx{}{:x}{:x}", self.major, self.minor, self.stepping)
    }

    /// Whether the processor has the `sramecc` target feature (its code objects say `sramecc+`,
    /// `sramecc-` or nothing): gfx906, gfx908, gfx90a and the gfx94x/gfx950 parts.
    pub const fn supports_sramecc(self) -> bool {
        matches!(
            (self.major, self.minor, self.stepping),
            (9, 0, 6 | 8 | 10) | (9, 4, _) | (9, 5, 0)
        )
    }

    /// Whether the processor has the `xnack` target feature: the gfx90x, gfx94x and gfx950 parts
    /// and gfx101x.
    pub const fn supports_xnack(self) -> bool {
        matches!(
            (self.major, self.minor, self.stepping),
            (9, 0 | 4, _) | (9, 5, 0) | (10, 1, _)
        )
    }
}

impl fmt::Display for GfxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gfx{}{:x}{:x}", self.major, self.minor, self.stepping)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(value: u32) -> String {
        GfxVersion::from_target_version(value)
            .unwrap()
            .processor_name()
    }

    #[test]
    fn decodes_the_documented_examples() {
        assert_eq!(name(90008), "gfx908");
        assert_eq!(name(90010), "gfx90a");
        assert_eq!(name(90402), "gfx942");
        assert_eq!(name(90500), "gfx950");
        assert_eq!(name(100300), "gfx1030");
        assert_eq!(name(110000), "gfx1100");
        assert_eq!(name(120001), "gfx1201");
        assert_eq!(name(80002), "gfx802");
        let v = GfxVersion::from_target_version(90010).unwrap();
        assert_eq!((v.major, v.minor, v.stepping), (9, 0, 10));
        assert_eq!(v.target_version(), 90010);
        assert_eq!(v.to_string(), "gfx90a");
    }

    #[test]
    fn rejects_what_no_processor_name_can_hold() {
        assert_eq!(
            GfxVersion::from_target_version(0),
            Err(GfxVersionError::Zero)
        );
        assert_eq!(
            GfxVersion::from_target_version(91600),
            Err(GfxVersionError::NotRepresentable(91600))
        );
        assert_eq!(
            GfxVersion::from_target_version(90016),
            Err(GfxVersionError::NotRepresentable(90016))
        );
    }
}
