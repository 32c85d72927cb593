//! `drm-amdgpu`: the amdgpu DRM render node as a KFD user needs it.
//!
//! A compute process opens `/dev/dri/renderD<minor>` for each GPU, hands the fd to
//! `AMDKFD_IOC_ACQUIRE_VM` and keeps it for the life of the process; buffer objects are
//! CPU-mapped through it. Besides that, only `DRM_IOCTL_VERSION` (to check the driver) and
//! `DRM_IOCTL_AMDGPU_INFO` queries are needed. Every system call goes through the
//! [`kfd::Sys`] seam, so the same code runs on the simulator; node naming comes from the
//! `drm` crate.

pub mod abi;
pub mod info;
pub mod render_node;
pub mod request;

use std::path::PathBuf;

use kfd::{Errno, IoctlError};

pub use info::{DriverVersion, device_info, driver_version, firmware_version, memory, vram_gtt};
pub use render_node::{AmdgpuRenderNodes, open_render_node, render_node_path};

/// What can go wrong on a render node.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An ioctl failed.
    #[error(transparent)]
    Ioctl(#[from] IoctlError),
    /// Opening the node failed.
    #[error("cannot open {path}: {errno}", path = path.display())]
    Open {
        /// The node.
        path: PathBuf,
        /// Why.
        errno: Errno,
    },
    /// The node is served by another DRM driver.
    #[error("{path} is driven by {driver:?}, not amdgpu", path = path.display())]
    NotAmdgpu {
        /// The node.
        path: PathBuf,
        /// The driver's name.
        driver: String,
    },
    /// The minor number is outside the render-node range.
    #[error("{0} is not a DRM render-node minor (128..=255)")]
    NotARenderMinor(u32),
    /// The kernel answered with something impossible.
    #[error("malformed answer from the kernel: {0}")]
    Malformed(&'static str),
}
