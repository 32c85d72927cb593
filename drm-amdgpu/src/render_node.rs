//! Finding and opening a GPU's render node, through the [`Sys`] seam.

use std::os::fd::RawFd;
use std::path::PathBuf;

use drm::node::NodeType;
use kfd::Sys;
use kfd::sys::OFlag;

use crate::Error;
use crate::info::driver_version;

/// Directory holding DRM device nodes.
pub const DRI_DIR: &str = "/dev/dri";
/// Name of the kernel driver behind amdgpu render nodes.
pub const AMDGPU_DRIVER_NAME: &str = "amdgpu";
/// Render-node minors are 128..=255 (libhsakmt rejects others).
pub const RENDER_MINORS: std::ops::RangeInclusive<u32> = 128..=255;

/// `/dev/dri/renderD<minor>`.
pub fn render_node_path(minor: u32) -> PathBuf {
    PathBuf::from(format!(
        "{DRI_DIR}/{}{minor}",
        NodeType::Render.minor_name_prefix()
    ))
}

/// Open the render node with `minor` read-write and close-on-exec, and check that the amdgpu
/// driver is behind it (ACQUIRE_VM accepts only amdgpu DRM files). The caller owns the fd.
pub fn open_render_node(sys: &dyn Sys, minor: u32) -> Result<RawFd, Error> {
    if !RENDER_MINORS.contains(&minor) {
        return Err(Error::NotARenderMinor(minor));
    }
    let path = render_node_path(minor);
    let fd = sys
        .open(&path, OFlag::O_RDWR | OFlag::O_CLOEXEC)
        .map_err(|errno| Error::Open {
            path: path.clone(),
            errno,
        })?;
    match driver_version(sys, fd) {
        Ok(version) if version.name == AMDGPU_DRIVER_NAME => Ok(fd),
        Ok(version) => {
            let _ = sys.close(fd);
            Err(Error::NotAmdgpu {
                path,
                driver: version.name,
            })
        }
        Err(err) => {
            let _ = sys.close(fd);
            Err(err)
        }
    }
}

/// The render-node opener for the driver's open sequence ([`kfd::driver::OpenOptions`]):
/// [`open_render_node`], which refuses a node that amdgpu does not drive.
#[derive(Clone, Copy, Debug, Default)]
pub struct AmdgpuRenderNodes;

impl kfd::RenderNodeOpener for AmdgpuRenderNodes {
    fn open_render_node(
        &self,
        sys: &dyn Sys,
        minor: u32,
    ) -> Result<RawFd, Box<dyn std::error::Error + Send + Sync>> {
        open_render_node(sys, minor).map_err(Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_node_paths() {
        assert_eq!(render_node_path(128), PathBuf::from("/dev/dri/renderD128"));
        assert!(matches!(
            open_render_node(&kfd::Linux, 5),
            Err(Error::NotARenderMinor(5))
        ));
        let err = kfd::RenderNodeOpener::open_render_node(&AmdgpuRenderNodes, &kfd::Linux, 300)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "300 is not a DRM render-node minor (128..=255)"
        );
    }
}
