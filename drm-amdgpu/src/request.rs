//! The DRM requests aqueduct issues on a render node, as typed [`Ioctl`]s. Neither is a
//! `PlainIoctl`: the kernel writes through caller pointers in both.

use kfd::ioctl::{Ioctl, Opcode};

use crate::abi::{DRM_AMDGPU_INFO, DRM_COMMAND_BASE, DRM_IOCTL_BASE, InfoArgs, VersionArgs};

/// `DRM_IOCTL_VERSION`: the driver's name, date and version. The kernel writes the strings
/// through the caller's buffers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Version;

// SAFETY: `_IOWR('d', 0x00, struct drm_version)` as drm.h defines it; `VersionArgs` mirrors
// `struct drm_version` (size asserted against drm-sys in abi.rs, offsets by the header test).
unsafe impl Ioctl for Version {
    type Arg = VersionArgs;
    const NAME: &'static str = "DRM_IOCTL_VERSION";
    const OPCODE: Opcode = Opcode::read_write::<VersionArgs>(DRM_IOCTL_BASE, 0x00);
}

/// `DRM_IOCTL_AMDGPU_INFO`: one query; the kernel writes the answer through `return_pointer`.
#[derive(Clone, Copy, Debug, Default)]
pub struct AmdgpuInfo;

// SAFETY: `_IOW('d', DRM_COMMAND_BASE + DRM_AMDGPU_INFO, struct drm_amdgpu_info)` as
// amdgpu_drm.h defines it; `InfoArgs` mirrors the struct.
unsafe impl Ioctl for AmdgpuInfo {
    type Arg = InfoArgs;
    const NAME: &'static str = "DRM_IOCTL_AMDGPU_INFO";
    const OPCODE: Opcode =
        Opcode::write::<InfoArgs>(DRM_IOCTL_BASE, DRM_COMMAND_BASE + DRM_AMDGPU_INFO);
}

/// Every request defined here, for tables and the layout tests.
pub const ALL: &[kfd::ioctl::requests::RequestInfo] = &[
    kfd::ioctl::requests::RequestInfo {
        name: Version::NAME,
        opcode: Version::OPCODE,
    },
    kfd::ioctl::requests::RequestInfo {
        name: AmdgpuInfo::NAME,
        opcode: AmdgpuInfo::OPCODE,
    },
];
