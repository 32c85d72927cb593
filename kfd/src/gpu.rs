//! The GPUs of an open driver: each one it bound (node, gpu_id, ISA, apertures, render-node
//! file, queue buffer sizes, doorbell page), and each one of the topology it left out.

use std::sync::{Arc, Mutex, PoisonError};

use crate::abi::ProcessDeviceApertures;
use crate::binding::RenderFile;
use crate::doorbell::{DoorbellPage, doorbell_slice_size};
use crate::error::{Error, Result};
use crate::queue_sizes::{CwsrSizeError, CwsrSizes, eop_buffer_size};
use crate::sys::Sys;
use crate::topology::{GfxVersion, Node, Processor, TargetId};

/// A GPU of the topology that the open driver does not use, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HiddenGpu {
    /// Its topology node.
    pub node_index: u32,
    /// Its gpu_id, if readable.
    pub gpu_id: Option<u32>,
    /// Why it is not used.
    pub reason: String,
}

/// One GPU the driver bound.
#[derive(Debug)]
pub struct Gpu {
    node: Node,
    gpu_id: u32,
    version: GfxVersion,
    processor: &'static Processor,
    apertures: ProcessDeviceApertures,
    render: RenderFile,
    cwsr: Result<CwsrSizes, CwsrSizeError>,
    doorbell_slice_size: usize,
    doorbell_page: Mutex<Option<Arc<DoorbellPage>>>,
}

impl Gpu {
    /// A GPU bound by the open sequence: its VM acquired on `render`, its memory policy set.
    pub(crate) fn new(
        node: Node,
        gpu_id: u32,
        version: GfxVersion,
        processor: &'static Processor,
        apertures: ProcessDeviceApertures,
        render: RenderFile,
        page_size: usize,
    ) -> Self {
        Self {
            cwsr: CwsrSizes::for_node(&node.properties, page_size as u64),
            gpu_id,
            version,
            processor,
            apertures,
            render,
            doorbell_slice_size: doorbell_slice_size(page_size),
            doorbell_page: Mutex::new(None),
            node,
        }
    }

    /// The gpu_id.
    pub fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    /// Its topology node (properties, memory banks, links; caches on demand through
    /// `Topology::read_caches`).
    pub fn node(&self) -> &Node {
        &self.node
    }

    /// The ISA version.
    pub fn gfx_version(&self) -> GfxVersion {
        self.version
    }

    /// The processor its ISA version names.
    pub fn processor(&self) -> &'static Processor {
        self.processor
    }

    /// The target id, with SRAM ECC from the node's capability and XNACK as given (`None`:
    /// unknown, "any").
    pub fn target_id(&self, xnack: Option<bool>) -> TargetId {
        TargetId::of_agent(self.processor, xnack, Some(self.node.properties.sram_ecc()))
    }

    /// This process' apertures on the GPU.
    pub fn apertures(&self) -> &ProcessDeviceApertures {
        &self.apertures
    }

    /// The render-node fd bound with ACQUIRE_VM.
    pub fn render_fd(&self) -> i32 {
        self.render.fd
    }

    /// The render-node minor.
    pub fn drm_render_minor(&self) -> u32 {
        self.render.minor
    }

    /// The context save/restore sizes CREATE_QUEUE demands, or why there are none.
    pub fn cwsr_sizes(&self) -> Result<CwsrSizes, CwsrSizeError> {
        self.cwsr
    }

    /// The EOP buffer size CREATE_QUEUE demands.
    pub fn eop_buffer_size(&self) -> Option<u32> {
        eop_buffer_size(self.node.properties.gfx_target_version)
    }

    /// Bytes of this process' doorbell slice.
    pub fn doorbell_slice_size(&self) -> usize {
        self.doorbell_slice_size
    }

    /// Whether the host can map all of the GPU's VRAM (large BAR).
    pub fn has_public_vram(&self) -> bool {
        self.node.has_public_vram()
    }

    /// The doorbell page, mapped on first use from a queue's doorbell mmap offset.
    pub(crate) fn doorbell_page(
        &self,
        sys: &Arc<dyn Sys>,
        kfd_fd: i32,
        mmap_offset: u64,
    ) -> Result<Arc<DoorbellPage>> {
        let mut page = self
            .doorbell_page
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = page.as_ref() {
            if existing.mmap_offset() != mmap_offset {
                return Err(Error::Kernel(format!(
                    "GPU {:#x} returned doorbell slice offset {mmap_offset:#x}, not {:#x}",
                    self.gpu_id,
                    existing.mmap_offset()
                )));
            }
            return Ok(Arc::clone(existing));
        }
        let mapped = Arc::new(DoorbellPage::map(
            sys,
            kfd_fd,
            self.gpu_id,
            mmap_offset,
            self.doorbell_slice_size,
        )?);
        *page = Some(Arc::clone(&mapped));
        Ok(mapped)
    }

    /// Unmap the doorbell page now unless a doorbell still holds it, reporting failure
    /// ([`crate::Kfd::close`]).
    pub(crate) fn unmap_doorbell_page(&self) -> Result<()> {
        let page = self
            .doorbell_page
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        match page.and_then(Arc::into_inner) {
            Some(page) => page.unmap(),
            None => Ok(()),
        }
    }
}
