//! Processors, target ids and the rule that decides whether a code object runs on an agent: the
//! workspace's one target type, owned by `amdgpu-target` and re-exported here under its old
//! path.

pub use amdgpu_target::processor::{
    EF_AMDGPU_FEATURE_SRAMECC_V4, EF_AMDGPU_FEATURE_XNACK_V4, EF_AMDGPU_GENERIC_VERSION,
    EF_AMDGPU_GENERIC_VERSION_OFFSET, EF_AMDGPU_MACH,
};
pub use amdgpu_target::{Feature, FeatureSetting, Processor, TargetId};
