//! Undefined references of a code object, resolved against the exports (functions,
//! variables, kernel descriptors) of executables loaded earlier on the same GPU, where the
//! user asks for it ([`LoadOptions::link_with`]). This goes beyond ROCr, which resolves only
//! host-defined variables (code-objects.md §9, §10).
//!
//! [`LoadOptions::link_with`]: super::LoadOptions::link_with

use std::sync::Arc;

use amdgpu_loader::ExternalSymbols;

use super::Executable;
use crate::device::DeviceShared;
use crate::error::{Error, Result};

/// The executables a load links against, checked to live on its device and GPU.
pub(crate) struct Links<'a> {
    executables: &'a [Executable],
}

impl<'a> Links<'a> {
    /// Check that every executable in `executables` is loaded on `gpu_id` of `device` and
    /// still alive.
    pub(crate) fn new(
        device: &Arc<DeviceShared>,
        gpu_id: u32,
        executables: &'a [Executable],
    ) -> Result<Self> {
        for executable in executables {
            if !Arc::ptr_eq(executable.core.owned.device(), device) {
                return Err(Error::InvalidArgument(
                    "an executable to link with belongs to another device".to_owned(),
                ));
            }
            if executable.core.gpu_id != gpu_id {
                return Err(Error::InvalidArgument(format!(
                    "an executable to link with is loaded on GPU {:#x}, not on GPU {gpu_id:#x}",
                    executable.core.gpu_id
                )));
            }
            // Fails if it was shut down: its addresses would point at freed memory.
            executable.core.owned.with(|_| Ok(()))?;
        }
        Ok(Self { executables })
    }

    /// The image bases of the linked executables, in order: what makes two loads of the same
    /// bytes relocate alike.
    pub(crate) fn bases(&self) -> Vec<u64> {
        self.executables
            .iter()
            .map(|e| e.core.image.base())
            .collect()
    }
}

impl ExternalSymbols for Links<'_> {
    fn resolve(&self, name: &str) -> Option<u64> {
        self.executables.iter().find_map(|executable| {
            executable
                .core
                .image
                .exports()
                .find(|(export, _)| *export == name)
                .map(|(_, address)| address)
        })
    }
}
