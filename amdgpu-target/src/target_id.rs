//! Target ids and the one rule that decides whether a code object runs on an agent
//! (code-objects.md §1.2–§1.5).
//!
//! A target id is a processor plus the settings of the `xnack` and `sramecc` features, written
//! canonically as `gfx90a:sramecc+:xnack-` (features in alphabetical order, omitted when "any").
//! Generic processors (`gfx11-generic`, ...) carry a generic version (code object V6 only).

use std::fmt;

use crate::error::{Error, Result};
use crate::processor::{
    EF_AMDGPU_GENERIC_VERSION, EF_AMDGPU_GENERIC_VERSION_OFFSET, EF_AMDGPU_MACH, Processor,
};

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
    /// sramecc modes (ignored where the processor lacks the feature). `None` if no concrete
    /// processor has that version.
    pub fn for_agent(gfx_target_version: u32, xnack_on: bool, sramecc_on: bool) -> Option<Self> {
        let processor = Processor::from_gfx_target_version(gfx_target_version)?;
        Some(Self::of_agent(processor, Some(xnack_on), Some(sramecc_on)))
    }

    /// The agent target of `processor` with its xnack and sramecc modes: `Some(on)` where the
    /// mode is known, `None` ("any") where it is not (XNACK is per process, known once the
    /// driver is open). Ignored where the processor lacks the feature.
    pub fn of_agent(
        processor: &'static Processor,
        xnack: Option<bool>,
        sramecc: Option<bool>,
    ) -> Self {
        let setting = |feature, mode: Option<bool>| match mode {
            _ if !processor.supports(feature) => FeatureSetting::Unsupported,
            Some(true) => FeatureSetting::On,
            Some(false) => FeatureSetting::Off,
            None => FeatureSetting::Any,
        };
        Self {
            processor,
            xnack: setting(Feature::Xnack, xnack),
            sramecc: setting(Feature::Sramecc, sramecc),
            generic_version: 0,
        }
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
