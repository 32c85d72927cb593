//! `gfx_target_version` and the target id it names: the workspace's one target type, owned by
//! `amdgpu-target` and re-exported here under its old path. KFD prints the ISA version as one
//! decimal, major·10000 + minor·100 + stepping (90010 is gfx90a, 90402 gfx942); it is the ISA
//! target, not the GC IP version: MI300X (GC 9.4.3) reports 90402 (kfd.md §2.3).

pub use amdgpu_target::{FeatureSetting, GfxVersion, GfxVersionError, Processor, TargetId};
