//! Processors, target ids and the one rule that decides whether a code object runs on an agent
//! (code-objects.md §1.2–§1.5).
//!
//! A target id is a processor plus the settings of the `xnack` and `sramecc` features, written
//! canonically as `gfx90a:sramecc+:xnack-` (features in alphabetical order, omitted when "any").
//! Generic processors (`gfx11-generic`, ...) carry a generic version (code object V6 only).

use std::fmt;

use crate::error::{Error, Result};

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

    /// Every processor the loader knows.
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

/// A target feature that a code object may require on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Feature {
    /// `xnack`: the code tolerates (on) or must not meet (off) retried page faults.
    Xnack,
    /// `sramecc`: the code was built for SRAM ECC on or off.
    Sramecc,
}

impl Feature {
    /// The feature's name in a target id.
    pub fn name(self) -> &'static str {
        match self {
            Self::Xnack => "xnack",
            Self::Sramecc => "sramecc",
        }
    }
}

/// The setting of one feature in a code object's `e_flags` (or in a target id).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FeatureSetting {
    /// The processor does not have the feature.
    #[default]
    Unsupported,
    /// Built to run with the feature on or off.
    Any,
    /// Built for the feature off (`-`).
    Off,
    /// Built for the feature on (`+`).
    On,
}

impl FeatureSetting {
    fn from_bits(bits: u32) -> Self {
        match bits & 3 {
            0 => Self::Unsupported,
            1 => Self::Any,
            2 => Self::Off,
            _ => Self::On,
        }
    }

    /// Whether the setting is on or off (not "any" or "unsupported").
    pub fn is_specific(self) -> bool {
        matches!(self, Self::On | Self::Off)
    }
}

/// A processor plus feature settings: what a code object is built for, or what an agent is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TargetId {
    /// The processor.
    pub processor: &'static Processor,
    /// `xnack` setting.
    pub xnack: FeatureSetting,
    /// `sramecc` setting.
    pub sramecc: FeatureSetting,
    /// Generic version (1..=255) for generic processors, 0 otherwise.
    pub generic_version: u8,
}

impl TargetId {
    /// Decode a V4+ code object's `e_flags`. A feature set on or "any" for a processor without
    /// it, an unknown or reserved processor, or a generic processor without a generic version is
    /// an error; so is a generic version on a concrete processor.
    pub fn from_e_flags(flags: u32) -> Result<Self> {
        let bad = |reason: String| Error::BadFlags { flags, reason };
        let mach = flags & EF_AMDGPU_MACH;
        let processor = Processor::from_mach(mach).ok_or_else(|| {
            bad(match mach {
                0x001..=0x01f => format!("EF_AMDGPU_MACH {mach:#x} is an R600 processor"),
                0x040 | 0x04b => format!(
                    "EF_AMDGPU_MACH {mach:#x} (gfx940/gfx941) is reserved: those pre-release \
                     processors are no longer supported by LLVM"
                ),
                0 => "EF_AMDGPU_MACH is 0 (no processor)".to_owned(),
                _ => format!("EF_AMDGPU_MACH {mach:#x} is not a processor this loader knows"),
            })
        })?;
        let xnack = FeatureSetting::from_bits(flags >> 8);
        let sramecc = FeatureSetting::from_bits(flags >> 10);
        for (feature, setting) in [(Feature::Xnack, xnack), (Feature::Sramecc, sramecc)] {
            if setting != FeatureSetting::Unsupported && !processor.supports(feature) {
                return Err(bad(format!(
                    "{} has no {} feature, yet e_flags sets it to {setting:?}",
                    processor.name,
                    feature.name()
                )));
            }
        }
        let generic_version =
            ((flags & EF_AMDGPU_GENERIC_VERSION) >> EF_AMDGPU_GENERIC_VERSION_OFFSET) as u8;
        if processor.is_generic && generic_version == 0 {
            return Err(bad(format!(
                "{} is generic but EF_AMDGPU_GENERIC_VERSION is 0",
                processor.name
            )));
        }
        if !processor.is_generic && generic_version != 0 {
            return Err(bad(format!(
                "{} is not generic but EF_AMDGPU_GENERIC_VERSION is {generic_version}",
                processor.name
            )));
        }
        let reserved = flags & !(EF_AMDGPU_MACH | 0xf00 | EF_AMDGPU_GENERIC_VERSION);
        if reserved != 0 {
            return Err(bad(format!("reserved bits {reserved:#x} are set")));
        }
        Ok(Self {
            processor,
            xnack,
            sramecc,
            generic_version,
        })
    }

    /// The `e_flags` word this target id encodes (V4+ layout).
    pub fn e_flags(&self) -> u32 {
        let bits = |s: FeatureSetting| match s {
            FeatureSetting::Unsupported => 0,
            FeatureSetting::Any => 1,
            FeatureSetting::Off => 2,
            FeatureSetting::On => 3,
        };
        u32::from(self.processor.mach)
            | bits(self.xnack) << 8
            | bits(self.sramecc) << 10
            | u32::from(self.generic_version) << EF_AMDGPU_GENERIC_VERSION_OFFSET
    }

    /// Read a target id: `gfx90a`, `gfx90a:xnack+`, `gfx90a:sramecc-:xnack+`, optionally after a
    /// triple (`amdgcn-amd-amdhsa--gfx90a:xnack-`). Features that are not named are "any" when
    /// the processor has them, "unsupported" otherwise. A generic processor gets generic
    /// version 1 unless written as `gfx11-generic` with a `generic_version` set by the caller.
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |reason: String| Error::BadTargetId {
            text: text.to_owned(),
            reason,
        };
        let id = match text.rfind("--") {
            Some(at) => {
                let triple = &text[..at];
                if !triple.starts_with("amdgcn-amd-amdhsa") {
                    return Err(bad(format!("triple `{triple}` is not amdgcn-amd-amdhsa")));
                }
                &text[at + 2..]
            }
            None => text,
        };
        let mut parts = id.split(':');
        let name = parts.next().unwrap_or_default();
        let processor =
            Processor::from_name(name).ok_or_else(|| bad(format!("unknown processor `{name}`")))?;
        let default = |feature| {
            if processor.supports(feature) {
                FeatureSetting::Any
            } else {
                FeatureSetting::Unsupported
            }
        };
        let mut target = Self {
            processor,
            xnack: default(Feature::Xnack),
            sramecc: default(Feature::Sramecc),
            generic_version: u8::from(processor.is_generic),
        };
        let mut seen = Vec::new();
        for part in parts {
            let (feature_name, setting) = match part.as_bytes().last() {
                Some(b'+') => (&part[..part.len() - 1], FeatureSetting::On),
                Some(b'-') => (&part[..part.len() - 1], FeatureSetting::Off),
                _ => return Err(bad(format!("feature `{part}` lacks a + or - suffix"))),
            };
            let feature = match feature_name {
                "xnack" => Feature::Xnack,
                "sramecc" => Feature::Sramecc,
                _ => return Err(bad(format!("unknown feature `{feature_name}`"))),
            };
            if seen.contains(&feature) {
                return Err(bad(format!("feature `{feature_name}` is given twice")));
            }
            seen.push(feature);
            if !processor.supports(feature) {
                return Err(bad(format!(
                    "{} has no {feature_name} feature",
                    processor.name
                )));
            }
            match feature {
                Feature::Xnack => target.xnack = setting,
                Feature::Sramecc => target.sramecc = setting,
            }
        }
        Ok(target)
    }

    /// The agent target for a KFD node: its `gfx_target_version` and its current xnack and
    /// sramecc modes (ignored where the processor lacks the feature).
    pub fn for_agent(gfx_target_version: u32, xnack_on: bool, sramecc_on: bool) -> Option<Self> {
        let processor = Processor::from_gfx_target_version(gfx_target_version)?;
        let setting = |feature, on: bool| {
            if !processor.supports(feature) {
                FeatureSetting::Unsupported
            } else if on {
                FeatureSetting::On
            } else {
                FeatureSetting::Off
            }
        };
        Some(Self {
            processor,
            xnack: setting(Feature::Xnack, xnack_on),
            sramecc: setting(Feature::Sramecc, sramecc_on),
            generic_version: 0,
        })
    }

    /// The setting of `feature`.
    pub fn feature(&self, feature: Feature) -> FeatureSetting {
        match feature {
            Feature::Xnack => self.xnack,
            Feature::Sramecc => self.sramecc,
        }
    }

    /// Decide whether code built for `self` runs on an agent that is `agent`, as ROCr's
    /// `IsaSupportedByAgent` does (code-objects.md §1.4, §1.5):
    ///
    /// - a concrete processor must equal the agent's processor;
    /// - a generic processor must be the agent's generic family, with a generic version at least
    ///   the version in which the agent's processor joined that family;
    /// - a feature the code sets on or off must have the same setting on the agent; "any" and
    ///   "unsupported" accept either.
    ///
    /// An agent is a concrete processor; its features should be on or off (an agent given with
    /// "any" matches only code that is "any" as well).
    pub fn runs_on(&self, agent: &TargetId) -> Result<()> {
        let incompatible = |reason: &'static str| Error::Incompatible {
            code: self.to_string(),
            agent: agent.to_string(),
            reason,
        };
        if agent.processor.is_generic {
            return Err(incompatible(
                "an agent is a concrete processor, not a generic one",
            ));
        }
        if self.processor.is_generic {
            match agent.processor.generic {
                Some((family, _)) if family != self.processor.name => {
                    return Err(incompatible(
                        "the agent's processor is not in this generic family",
                    ));
                }
                None => return Err(incompatible("the agent's processor has no generic family")),
                Some((_, since)) if self.generic_version < since => {
                    return Err(incompatible(
                        "the generic version predates the agent's processor",
                    ));
                }
                Some(_) => {}
            }
        } else if self.processor != agent.processor {
            return Err(incompatible("different processors"));
        }
        for feature in [Feature::Xnack, Feature::Sramecc] {
            let code = self.feature(feature);
            if code.is_specific() && code != agent.feature(feature) {
                return Err(incompatible(match feature {
                    Feature::Xnack => "the xnack setting differs",
                    Feature::Sramecc => "the sramecc setting differs",
                }));
            }
        }
        Ok(())
    }

    /// How well code built for `self` suits `agent`, higher is better; `None` if it does not run
    /// there. A concrete processor beats a generic one, and each feature matched exactly beats
    /// "any".
    pub fn suitability(&self, agent: &TargetId) -> Option<u32> {
        self.runs_on(agent).ok()?;
        let mut score = if self.processor.is_generic {
            u32::from(self.generic_version)
        } else {
            1000
        };
        for feature in [Feature::Xnack, Feature::Sramecc] {
            if self.feature(feature).is_specific() {
                score += 2000;
            }
        }
        Some(score)
    }
}

impl fmt::Display for TargetId {
    /// The canonical target id: processor, then `sramecc` and `xnack` when on or off.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.processor.name)?;
        for (name, setting) in [("sramecc", self.sramecc), ("xnack", self.xnack)] {
            match setting {
                FeatureSetting::On => write!(f, ":{name}+")?,
                FeatureSetting::Off => write!(f, ":{name}-")?,
                FeatureSetting::Any | FeatureSetting::Unsupported => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str) -> TargetId {
        TargetId::parse(text).unwrap()
    }

    #[test]
    fn decodes_the_observed_e_flags() {
        let cases = [
            (
                0x12c,
                "gfx900",
                FeatureSetting::Any,
                FeatureSetting::Unsupported,
                0,
            ),
            (0x53f, "gfx90a", FeatureSetting::Any, FeatureSetting::Any, 0),
            (0xb3f, "gfx90a", FeatureSetting::On, FeatureSetting::Off, 0),
            (0x54c, "gfx942", FeatureSetting::Any, FeatureSetting::Any, 0),
            (
                0x41,
                "gfx1100",
                FeatureSetting::Unsupported,
                FeatureSetting::Unsupported,
                0,
            ),
            (
                0x1000151,
                "gfx9-generic",
                FeatureSetting::Any,
                FeatureSetting::Unsupported,
                1,
            ),
            (
                0x1000059,
                "gfx12-generic",
                FeatureSetting::Unsupported,
                FeatureSetting::Unsupported,
                1,
            ),
            (
                0x100055f,
                "gfx9-4-generic",
                FeatureSetting::Any,
                FeatureSetting::Any,
                1,
            ),
        ];
        for (flags, name, xnack, sramecc, generic) in cases {
            let id = TargetId::from_e_flags(flags).unwrap();
            assert_eq!(
                (id.processor.name, id.xnack, id.sramecc, id.generic_version),
                (name, xnack, sramecc, generic),
                "{flags:#x}"
            );
            assert_eq!(id.e_flags(), flags);
        }
        assert_eq!(
            TargetId::from_e_flags(0xb3f).unwrap().to_string(),
            "gfx90a:sramecc-:xnack+"
        );
    }

    #[test]
    fn refuses_bad_e_flags() {
        for flags in [
            0x000,     // no processor
            0x010,     // r600
            0x040,     // gfx940, reserved
            0x04b,     // gfx941, reserved
            0x04d,     // reserved
            0x0ff,     // unknown
            0x141,     // gfx1100 with xnack any
            0xc41,     // gfx1100 with sramecc on
            0x82c,     // gfx900 with sramecc off
            0x54,      // gfx11-generic without a version
            0x100003f, // gfx90a with a generic version
            0x100f03f, // reserved bits
        ] {
            assert!(
                matches!(TargetId::from_e_flags(flags), Err(Error::BadFlags { .. })),
                "{flags:#x}"
            );
        }
    }

    #[test]
    fn every_processor_round_trips_through_its_name_and_mach() {
        for p in Processor::all() {
            assert_eq!(Processor::from_mach(u32::from(p.mach)), Some(p));
            assert_eq!(Processor::from_name(p.name), Some(p));
            if !p.is_generic {
                assert_eq!(
                    Processor::from_gfx_target_version(p.gfx_target_version()),
                    Some(p)
                );
            }
            if let Some((family, _)) = p.generic {
                let family = Processor::from_name(family).unwrap();
                assert!(family.is_generic);
                // A family can only promise the features all of its members have.
                assert!(!family.xnack || p.xnack, "{}", p.name);
            }
        }
        assert_eq!(
            Processor::from_gfx_target_version(90010).unwrap().name,
            "gfx90a"
        );
    }

    #[test]
    fn parses_target_ids() {
        assert_eq!(t("gfx90a").to_string(), "gfx90a");
        assert_eq!(t("gfx90a").xnack, FeatureSetting::Any);
        assert_eq!(t("gfx1100").xnack, FeatureSetting::Unsupported);
        assert_eq!(
            t("gfx90a:xnack+:sramecc-").to_string(),
            "gfx90a:sramecc-:xnack+"
        );
        assert_eq!(
            t("amdgcn-amd-amdhsa--gfx942:xnack-").to_string(),
            "gfx942:xnack-"
        );
        assert_eq!(t("gfx11-generic").generic_version, 1);
        for bad in [
            "",
            "gfx9000",
            "gfx90a:xnack",
            "gfx90a:xnack+:xnack-",
            "gfx1100:xnack+",
            "gfx90a:foo+",
            "x86_64-unknown-linux-gnu--gfx90a",
        ] {
            assert!(TargetId::parse(bad).is_err(), "{bad}");
        }
    }

    /// The compatibility rule as one table: code object, agent, runs?
    #[test]
    fn compatibility_table() {
        let agent = |v, x, s| TargetId::for_agent(v, x, s).unwrap();
        let mi200_xnack_off = agent(90010, false, true); // gfx90a:sramecc+:xnack-
        let mi200_xnack_on = agent(90010, true, true);
        let mi300 = agent(90402, false, true);
        let navi31 = agent(110000, false, false);
        let navi32 = agent(110001, true, true); // features ignored: gfx1101 has neither
        let navi21 = agent(100300, false, false);
        let vega10 = agent(90000, true, false);
        let mi100 = agent(90008, false, false);
        let table: &[(&str, TargetId, bool)] = &[
            // exact processor, features any
            ("gfx90a", mi200_xnack_off, true),
            ("gfx90a", mi200_xnack_on, true),
            ("gfx90a", mi300, false),
            ("gfx942", mi300, true),
            // xnack / sramecc on and off must match the agent
            ("gfx90a:xnack-", mi200_xnack_off, true),
            ("gfx90a:xnack-", mi200_xnack_on, false),
            ("gfx90a:xnack+", mi200_xnack_on, true),
            ("gfx90a:xnack+", mi200_xnack_off, false),
            ("gfx90a:sramecc+", mi200_xnack_off, true),
            ("gfx90a:sramecc-", mi200_xnack_off, false),
            ("gfx90a:sramecc+:xnack+", mi200_xnack_on, true),
            ("gfx90a:sramecc-:xnack+", mi200_xnack_on, false),
            ("gfx908:sramecc-", mi100, true),
            // processors without the feature: unsupported matches anything
            ("gfx1100", navi31, true),
            ("gfx1101", navi32, true),
            ("gfx1100", navi32, false),
            // generic families
            ("gfx11-generic", navi31, true),
            ("gfx11-generic", navi32, true),
            ("gfx11-generic", navi21, false),
            ("gfx10-3-generic", navi21, true),
            ("gfx9-generic", vega10, true),
            ("gfx9-generic", mi200_xnack_off, false), // gfx90a has no generic family
            ("gfx9-generic:xnack+", vega10, true),
            ("gfx9-generic:xnack-", vega10, false),
            ("gfx9-4-generic", mi300, true),
            ("gfx9-4-generic:sramecc-", mi300, false),
            ("gfx12-generic", navi31, false),
        ];
        for (code, agent, runs) in table {
            assert_eq!(t(code).runs_on(agent).is_ok(), *runs, "{code} on {agent}");
        }
        // A generic version 0 never occurs in a valid object, but must not match either.
        let mut old = t("gfx11-generic");
        old.generic_version = 0;
        assert!(old.runs_on(&navi31).is_err());
        // An agent can't be generic.
        assert!(t("gfx11-generic").runs_on(&t("gfx11-generic")).is_err());
    }

    #[test]
    fn suitability_prefers_exact_processors_and_features() {
        let agent = TargetId::for_agent(90010, true, true).unwrap();
        let order = ["gfx90a:sramecc+:xnack+", "gfx90a:xnack+", "gfx90a"];
        let scores: Vec<_> = order
            .iter()
            .map(|c| t(c).suitability(&agent).unwrap())
            .collect();
        assert!(scores.windows(2).all(|w| w[0] > w[1]), "{scores:?}");
        let navi = TargetId::for_agent(110000, false, false).unwrap();
        assert!(t("gfx1100").suitability(&navi) > t("gfx11-generic").suitability(&navi));
        assert_eq!(t("gfx1101").suitability(&navi), None);
    }
}
