//! The steps of the driver's open sequence (kfd.md §3), in the order [`crate::Kfd::open`] takes
//! them: open a render node per GPU, bind each GPU's VM to its render-node file, read the
//! process apertures, describe the GPUs (setting each one's memory policy), query XNACK, find
//! the GPU VA range every GPU shares, and make, map and register the event page.
//!
//! Each step works on the process binding's state under its lock, held by the caller across
//! the whole sequence; what the kernel ties to the process (render-node files, the event page)
//! is kept there for the next open.

use std::sync::Arc;

use crate::abi::sysfs::Capability;
use crate::abi::{CachePolicy, ProcessDeviceApertures};
use crate::binding::{BindingState, ProcessBinding, RenderFile};
use crate::error::{Error, Result};
use crate::event_page::EventPage;
use crate::gpu::{Gpu, HiddenGpu};
use crate::ioctl::calls as ioctls;
use crate::render_node::RenderNodeOpener;
use crate::retry::restarting;
use crate::sys::Sys;
use crate::topology::{Node, NodeKind, Processor, Topology};

/// XNACK mode as [`crate::Kfd`] stores it when the kernel does not report one.
pub(crate) const XNACK_UNKNOWN: u8 = 2;

/// The sequence's context: the system interface the caller opened with and its binding.
pub(crate) struct OpenSequence<'a> {
    sys: &'a Arc<dyn Sys>,
    binding: &'a ProcessBinding,
    kfd_fd: i32,
}

/// A GPU of the topology with an open render node, not bound yet.
pub(crate) type UsableGpu = (Node, RenderFile);

impl<'a> OpenSequence<'a> {
    /// The sequence on `binding`, issuing its calls through `sys`.
    pub(crate) fn new(sys: &'a Arc<dyn Sys>, binding: &'a ProcessBinding) -> Self {
        Self {
            sys,
            binding,
            kfd_fd: binding.kfd_fd(),
        }
    }

    /// Render nodes: opened once per process and GPU, kept for the life of the process. GPUs
    /// that cannot be used (unreadable gpu_id, unknown ISA, render node refused) are hidden,
    /// with the reason; none usable is an error that gives every reason.
    pub(crate) fn open_render_nodes(
        &self,
        topology: &Topology,
        render_nodes: &dyn RenderNodeOpener,
        state: &BindingState,
    ) -> Result<(Vec<UsableGpu>, Vec<HiddenGpu>)> {
        let mut hidden = Vec::new();
        let mut usable: Vec<UsableGpu> = Vec::new();
        for node in &topology.nodes {
            let gpu_id = match node.kind {
                NodeKind::Cpu => continue,
                NodeKind::Hidden(errno) => {
                    hidden.push(HiddenGpu {
                        node_index: node.index,
                        gpu_id: None,
                        reason: format!("gpu_id unreadable: {errno}"),
                    });
                    continue;
                }
                NodeKind::Gpu(id) => id,
            };
            match node.properties.gfx_version() {
                Err(err) => {
                    hidden.push(HiddenGpu {
                        node_index: node.index,
                        gpu_id: Some(gpu_id),
                        reason: format!("unknown ISA: {err}"),
                    });
                    continue;
                }
                Ok(version) if Processor::from_gfx_version(version).is_none() => {
                    hidden.push(HiddenGpu {
                        node_index: node.index,
                        gpu_id: Some(gpu_id),
                        reason: format!("unknown ISA: {version} is no processor this driver knows"),
                    });
                    continue;
                }
                Ok(_) => {}
            }
            if let Some(file) = state.render_files.get(&gpu_id) {
                usable.push((node.clone(), *file));
                continue;
            }
            let minor = node.properties.drm_render_minor;
            match render_nodes.open_render_node(self.sys.as_ref(), minor) {
                Ok(fd) => usable.push((node.clone(), RenderFile { minor, fd })),
                Err(err) => hidden.push(HiddenGpu {
                    node_index: node.index,
                    gpu_id: Some(gpu_id),
                    reason: format!("render node renderD{minor}: {err}"),
                }),
            }
        }
        if usable.is_empty() {
            let reasons: Vec<String> = hidden
                .iter()
                .map(|h| format!("node {}: {}", h.node_index, h.reason))
                .collect();
            return Err(Error::NoUsableGpu(if reasons.is_empty() {
                "the topology lists no GPU".to_owned()
            } else {
                reasons.join("; ")
            }));
        }
        Ok((usable, hidden))
    }

    /// ACQUIRE_VM: bind each GPU's VM to its render-node file. A file the kernel refuses is
    /// closed and forgotten, and so is every other file not bound yet; a file it accepted is
    /// kept for the life of the process.
    ///
    /// Whatever was bound is written to the binding's record either way, for a later copy of
    /// the driver to take over.
    pub(crate) fn bind_vms(&self, state: &mut BindingState, usable: &[UsableGpu]) -> Result<()> {
        let result = self.bind_each_vm(state, usable);
        self.binding.publish(state);
        result
    }

    fn bind_each_vm(&self, state: &mut BindingState, usable: &[UsableGpu]) -> Result<()> {
        for (node, file) in usable {
            let gpu_id = node.gpu_id().unwrap_or_default();
            let acquired =
                restarting(|| ioctls::acquire_vm(self.sys.as_ref(), self.kfd_fd, file.fd, gpu_id));
            if let Err(err) = acquired {
                let newly_opened = !state.render_files.contains_key(&gpu_id);
                if newly_opened {
                    let _ = self.sys.close(file.fd);
                }
                for (other_node, other) in usable {
                    let other_id = other_node.gpu_id().unwrap_or_default();
                    if other_id != gpu_id && !state.render_files.contains_key(&other_id) {
                        // Not bound yet either: close rather than leak.
                        let _ = self.sys.close(other.fd);
                    }
                }
                let op = if err.errno == crate::Errno::EBUSY {
                    format!(
                        "bind the VM of GPU {gpu_id:#x} to renderD{} (the GPU is bound to another \
                         render-node file in this process: did another runtime, or a copy of \
                         aqueduct that left no binding record, open it?)",
                        file.minor
                    )
                } else {
                    format!("bind the VM of GPU {gpu_id:#x} to renderD{}", file.minor)
                };
                return Err(self.binding.ioctl_error(op, err));
            }
            state.render_files.insert(gpu_id, *file);
        }
        Ok(())
    }

    /// GET_PROCESS_APERTURES_NEW: every GPU's apertures in this process.
    pub(crate) fn read_apertures(&self) -> Result<Vec<ProcessDeviceApertures>> {
        restarting(|| ioctls::get_process_apertures(self.sys.as_ref(), self.kfd_fd))
            .map_err(|e| self.binding.ioctl_error("read the process apertures", e))
    }

    /// Describe each bound GPU (apertures, ISA, queue buffer sizes) and set its memory policy
    /// (SET_MEMORY_POLICY: non-coherent default, coherent alternate).
    pub(crate) fn describe_gpus(
        &self,
        usable: Vec<UsableGpu>,
        apertures: &[ProcessDeviceApertures],
    ) -> Result<Vec<Gpu>> {
        let page_size = self.sys.page_size();
        let mut gpus = Vec::with_capacity(usable.len());
        for (node, file) in usable {
            let gpu_id = node.gpu_id().unwrap_or_default();
            let aperture = apertures
                .iter()
                .find(|a| a.gpu_id == gpu_id)
                .copied()
                .ok_or_else(|| {
                    Error::Kernel(format!("no process apertures for GPU {gpu_id:#x}"))
                })?;
            let version = node.properties.gfx_version().map_err(|e| {
                Error::Unsupported(format!("GPU {gpu_id:#x} (node {}): {e}", node.index))
            })?;
            let processor = Processor::from_gfx_version(version).ok_or_else(|| {
                Error::Unsupported(format!(
                    "GPU {gpu_id:#x} (node {}): {version} is no processor this driver knows",
                    node.index
                ))
            })?;
            restarting(|| {
                ioctls::set_memory_policy(
                    self.sys.as_ref(),
                    self.kfd_fd,
                    gpu_id,
                    CachePolicy::NONCOHERENT,
                    CachePolicy::COHERENT,
                )
            })
            .map_err(|e| {
                self.binding
                    .ioctl_error(format!("set the memory policy of GPU {gpu_id:#x}"), e)
            })?;
            gpus.push(Gpu::new(
                node, gpu_id, version, processor, aperture, file, page_size,
            ));
        }
        Ok(gpus)
    }

    /// XNACK: query only (a negative mode asks); kernels without the ioctl leave it unknown.
    pub(crate) fn query_xnack(&self) -> u8 {
        restarting(|| ioctls::set_xnack_mode(self.sys.as_ref(), self.kfd_fd, -1))
            .map_or(XNACK_UNKNOWN, |mode| u8::from(mode != 0))
    }

    /// The event page: made once per process, mapped on every GPU, handed to the kernel
    /// (and written to the binding's record, whatever the outcome). Returns its address and
    /// BO handle.
    pub(crate) fn event_page(
        &self,
        state: &mut BindingState,
        gpus: &[Gpu],
        range: (u64, u64),
    ) -> Result<(u64, u64)> {
        let result = self.make_event_page(state, gpus, range);
        self.binding.publish(state);
        result
    }

    fn make_event_page(
        &self,
        state: &mut BindingState,
        gpus: &[Gpu],
        (lowest, highest): (u64, u64),
    ) -> Result<(u64, u64)> {
        if state.event_page.is_none() {
            let owner = gpus
                .first()
                .ok_or_else(|| Error::Kernel("no GPU to own the event page".to_owned()))?;
            state.event_page = Some(EventPage::allocate(
                self.sys,
                self.kfd_fd,
                owner.gpu_id(),
                owner.render_fd(),
                lowest,
                highest,
            )?);
        }
        let gpu_ids: Vec<u32> = gpus.iter().map(Gpu::gpu_id).collect();
        let page = state
            .event_page
            .as_mut()
            .ok_or_else(|| Error::Kernel("event page missing".to_owned()))?;
        page.map_on(self.sys.as_ref(), self.kfd_fd, &gpu_ids)?;
        page.register(self.sys.as_ref(), self.kfd_fd)?;
        Ok((page.address(), page.handle()))
    }
}

/// Whether every GPU has debugger-capable firmware (RUNTIME_ENABLE needs it, as in libhsakmt).
pub(crate) fn debugger_capable(gpus: &[Gpu]) -> bool {
    gpus.iter().all(|g| {
        g.node()
            .properties
            .capability()
            .contains(Capability::TRAP_DEBUG_FIRMWARE_SUPPORTED)
    })
}

/// The GPU VA range every GPU can use (buffers are placed at one address for all): the
/// intersection of their GPUVM apertures: the highest base and the lowest limit.
pub(crate) fn shared_gpuvm_range(gpus: &[Gpu]) -> Result<(u64, u64)> {
    let lowest = gpus
        .iter()
        .map(|g| g.apertures().gpuvm_base)
        .max()
        .unwrap_or_default();
    let highest = gpus
        .iter()
        .map(|g| g.apertures().gpuvm_limit)
        .min()
        .unwrap_or_default();
    if lowest >= highest {
        return Err(Error::Kernel(format!(
            "the GPUs share no GPU VM aperture ({lowest:#x}..={highest:#x})"
        )));
    }
    Ok((lowest, highest))
}
