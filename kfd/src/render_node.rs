//! How the driver obtains a GPU's render-node file for ACQUIRE_VM.
//!
//! The render node belongs to the `drm-amdgpu` crate (which builds on this one, so this crate
//! cannot call it): it names and opens the node and checks that amdgpu drives it. The open
//! sequence therefore takes a [`RenderNodeOpener`], which `drm-amdgpu` implements
//! (`drm_amdgpu::AmdgpuRenderNodes`); tests may hand in others.

use std::fmt;
use std::os::fd::RawFd;

use crate::sys::Sys;

/// Opens a GPU's render node, read-write and close-on-exec; the caller owns the fd.
pub trait RenderNodeOpener: Send + Sync + fmt::Debug {
    /// Open the render node with `minor`.
    fn open_render_node(
        &self,
        sys: &dyn Sys,
        minor: u32,
    ) -> Result<RawFd, Box<dyn std::error::Error + Send + Sync>>;
}
