//! How the driver obtains a GPU's render-node file for ACQUIRE_VM.
//!
//! The render node belongs to the `drm-amdgpu` crate (which builds on this one, so this crate
//! cannot call it): the open sequence takes a [`RenderNodeOpener`], which `drm-amdgpu`
//! implements with its driver check. [`PlainRenderNodes`] opens the node without checking the
//! DRM driver behind it; the kernel still refuses a non-amdgpu file at ACQUIRE_VM (EINVAL).

use std::fmt;
use std::os::fd::RawFd;
use std::path::PathBuf;

use crate::errno::Errno;
use crate::sys::{OFlag, Sys};

/// Render-node minors are 128..=255; libhsakmt rejects others (kfd.md §1.1).
pub const RENDER_MINORS: std::ops::RangeInclusive<u32> = 128..=255;

/// `/dev/dri/renderD<minor>`.
pub fn render_node_path(minor: u32) -> PathBuf {
    PathBuf::from(format!("/dev/dri/renderD{minor}"))
}

/// Opens a GPU's render node, read-write and close-on-exec; the caller owns the fd.
pub trait RenderNodeOpener: Send + Sync + fmt::Debug {
    /// Open the render node with `minor`.
    fn open_render_node(
        &self,
        sys: &dyn Sys,
        minor: u32,
    ) -> Result<RawFd, Box<dyn std::error::Error + Send + Sync>>;
}

/// Why [`PlainRenderNodes`] could not open a node.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlainRenderNodeError {
    /// The minor is outside 128..=255.
    #[error("{0} is not a DRM render-node minor (128..=255)")]
    NotARenderMinor(u32),
    /// `open` failed.
    #[error("cannot open {path}: {errno}", path = path.display())]
    Open {
        /// The node.
        path: PathBuf,
        /// Why.
        errno: Errno,
    },
}

/// Opens `/dev/dri/renderD<minor>` without asking which DRM driver serves it.
#[derive(Clone, Copy, Debug, Default)]
pub struct PlainRenderNodes;

impl RenderNodeOpener for PlainRenderNodes {
    fn open_render_node(
        &self,
        sys: &dyn Sys,
        minor: u32,
    ) -> Result<RawFd, Box<dyn std::error::Error + Send + Sync>> {
        if !RENDER_MINORS.contains(&minor) {
            return Err(Box::new(PlainRenderNodeError::NotARenderMinor(minor)));
        }
        let path = render_node_path(minor);
        sys.open(&path, OFlag::O_RDWR | OFlag::O_CLOEXEC)
            .map_err(|errno| Box::new(PlainRenderNodeError::Open { path, errno }).into())
    }
}
