//! The GPU targets the simulator models: a subset of the workspace's one target type
//! (`amdgpu_target`), which owns the names, ISA versions and feature support.

use amdgpu_target::{Processor, TargetId};

/// A simulated ISA target. The shader core decodes and executes its machine code; the
/// topology reports it as `gfx_target_version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GfxTarget {
    /// gfx90a (CDNA2, MI200 series), `gfx_target_version` 90010.
    Gfx90a,
    /// gfx942 (CDNA3, MI300 series), `gfx_target_version` 90402.
    Gfx942,
    /// gfx1100 (RDNA3, Navi 31: Radeon RX 7900 XTX), `gfx_target_version` 110000.
    Gfx1100,
}

impl GfxTarget {
    /// The processor, from the shared table.
    pub fn processor(self) -> &'static Processor {
        let version = self.gfx_target_version();
        Processor::from_gfx_target_version(version)
            .unwrap_or_else(|| unreachable!("the shared processor table lists gfx{version}"))
    }

    /// The processor name, e.g. `"gfx90a"`.
    pub fn name(self) -> &'static str {
        self.processor().name
    }

    /// `gfx_target_version` as KFD prints it: major·10000 + minor·100 + stepping.
    pub const fn gfx_target_version(self) -> u32 {
        match self {
            Self::Gfx90a => 90010,
            Self::Gfx942 => 90402,
            Self::Gfx1100 => 110000,
        }
    }

    /// The target for a `gfx_target_version`, if simulated.
    pub const fn from_gfx_target_version(version: u32) -> Option<Self> {
        match version {
            90010 => Some(Self::Gfx90a),
            90402 => Some(Self::Gfx942),
            110000 => Some(Self::Gfx1100),
            _ => None,
        }
    }

    /// The simulated target of an agent's target id, if its processor is simulated.
    pub fn from_target_id(target: &TargetId) -> Option<Self> {
        Self::from_gfx_target_version(target.processor.gfx_target_version())
            .filter(|_| !target.processor.is_generic)
    }

    /// The agent target id with the given xnack and sramecc modes.
    pub fn target_id(self, xnack_on: bool, sramecc_on: bool) -> TargetId {
        TargetId::of_agent(self.processor(), Some(xnack_on), Some(sramecc_on))
    }

    /// The wavefront size the node reports (`wave_front_size`): 64 on the GFX9 parts, 32 on
    /// RDNA, which also runs wave64 code (a kernel's own size is in its descriptor, see
    /// [`Self::wave64_only`]).
    pub const fn wavefront_size(self) -> u32 {
        match self {
            Self::Gfx90a | Self::Gfx942 => 64,
            Self::Gfx1100 => 32,
        }
    }

    /// Whether this is a GFX9 (GCN/CDNA) ISA, the one the GFX9 shader core executes.
    pub const fn is_gfx9(self) -> bool {
        matches!(self, Self::Gfx90a | Self::Gfx942)
    }

    /// Whether the ISA runs wave64 kernels only (GFX9), or both sizes, chosen per kernel by
    /// `ENABLE_WAVEFRONT_SIZE32` in its descriptor (GFX10+).
    pub const fn wave64_only(self) -> bool {
        self.is_gfx9()
    }

    /// Every simulated target.
    pub const ALL: [Self; 3] = [Self::Gfx90a, Self::Gfx942, Self::Gfx1100];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simulated_targets_are_in_the_shared_table() {
        for target in GfxTarget::ALL {
            let id = target.target_id(false, true);
            assert_eq!(GfxTarget::from_target_id(&id), Some(target));
            assert_eq!(
                id.processor.gfx_target_version(),
                target.gfx_target_version()
            );
        }
        assert_eq!(GfxTarget::Gfx90a.name(), "gfx90a");
        assert_eq!(GfxTarget::Gfx1100.name(), "gfx1100");
        assert_eq!(GfxTarget::Gfx1100.wavefront_size(), 32);
        // gfx1100 has neither xnack nor sramecc: its agent target id is the bare name.
        assert_eq!(
            GfxTarget::Gfx1100.target_id(false, false).to_string(),
            "gfx1100"
        );
        assert_eq!(
            GfxTarget::Gfx942.target_id(false, true).to_string(),
            "gfx942:sramecc+:xnack-"
        );
    }
}
