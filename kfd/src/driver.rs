//! The open driver: the open sequence, the GPUs it bound, and the address space buffers are
//! placed in.
//!
//! Open (kfd.md §3): the [`ProcessBinding`] (`/dev/kfd`, GET_VERSION, refusing interfaces
//! that are too old), the topology, a render node per GPU (opened once per process),
//! GET_PROCESS_APERTURES_NEW, ACQUIRE_VM, SET_MEMORY_POLICY, the XNACK mode, RUNTIME_ENABLE
//! where the interface has it, and the event page. A [`Kfd`] is handed out as an `Arc`; every
//! buffer, mapping, queue and event made from it holds that `Arc`, so the driver outlives all of
//! them, and dropping the last reference closes it: what it created is gone by then, and what
//! the kernel ties to the process stays in the binding for the next open.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::abi::sysfs::Capability;
use crate::abi::{
    CachePolicy, GetClockCountersArgs, MINOR_AVAILABLE_MEMORY, ProcessDeviceApertures,
};
use crate::address_space::AddressSpace;
use crate::binding::{ProcessBinding, RenderFile, RuntimeState};
use crate::doorbell::{DoorbellPage, doorbell_slice_size};
use crate::error::{Error, Result};
use crate::event_page::EventPage;
use crate::ioctls;
use crate::queue_sizes::{CwsrSizeError, CwsrSizes, eop_buffer_size};
use crate::render_node::RenderNodeOpener;
use crate::retry::restarting;
use crate::sys::Sys;
use crate::topology::{GfxVersion, Node, NodeKind, TargetId, Topology};

/// How to open the driver.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// How render nodes are opened (the first open of a process only; later opens reuse the
    /// files): `drm_amdgpu::AmdgpuRenderNodes`, which also checks the DRM driver.
    pub render_nodes: Arc<dyn RenderNodeOpener>,
    /// Whether to issue RUNTIME_ENABLE (once per process, where supported).
    pub enable_runtime: bool,
}

impl OpenOptions {
    /// Open render nodes with `render_nodes`, and enable the runtime.
    pub fn new(render_nodes: Arc<dyn RenderNodeOpener>) -> Self {
        Self {
            render_nodes,
            enable_runtime: true,
        }
    }
}

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

/// Counts of what is alive under an open driver (for leak checks and diagnostics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveObjects {
    /// Buffer objects.
    pub buffers: usize,
    /// Buffer objects with a CPU mapping.
    pub cpu_mappings: usize,
    /// GPU mappings (one per buffer and GPU).
    pub gpu_mappings: usize,
    /// Queues.
    pub queues: usize,
    /// Events.
    pub events: usize,
}

#[derive(Debug, Default)]
pub(crate) struct LiveCounters {
    pub buffers: AtomicUsize,
    pub cpu_mappings: AtomicUsize,
    pub gpu_mappings: AtomicUsize,
    pub queues: AtomicUsize,
    pub events: AtomicUsize,
}

/// One GPU the driver bound.
#[derive(Debug)]
pub struct Gpu {
    node: Node,
    gpu_id: u32,
    version: GfxVersion,
    apertures: ProcessDeviceApertures,
    render: RenderFile,
    cwsr: Result<CwsrSizes, CwsrSizeError>,
    doorbell_slice_size: usize,
    doorbell_page: Mutex<Option<Arc<DoorbellPage>>>,
}

impl Gpu {
    /// The gpu_id.
    pub fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    /// Its topology node (properties, memory banks, caches, links).
    pub fn node(&self) -> &Node {
        &self.node
    }

    /// The ISA version.
    pub fn gfx_version(&self) -> GfxVersion {
        self.version
    }

    /// The target id, with SRAM ECC from the node's capability and XNACK as given.
    pub fn target_id(&self, xnack: Option<bool>) -> TargetId {
        TargetId::new(self.version, Some(self.node.properties.sram_ecc()), xnack)
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
}

/// The open driver.
#[derive(Debug)]
pub struct Kfd {
    binding: Arc<ProcessBinding>,
    topology: Topology,
    gpus: Vec<Gpu>,
    hidden: Vec<HiddenGpu>,
    address_space: Arc<AddressSpace>,
    /// 0 off, 1 on, 2 unknown.
    xnack: AtomicU8,
    event_page_address: u64,
    event_page_handle: u64,
    pub(crate) live: LiveCounters,
    drop_errors: Mutex<Vec<Error>>,
}

const XNACK_UNKNOWN: u8 = 2;
/// Drop errors kept for [`Kfd::take_drop_errors`]; older ones are discarded.
const MAX_DROP_ERRORS: usize = 64;

impl Kfd {
    /// Open the driver behind `sys`. If it is open already in this process, that [`Kfd`] is
    /// returned (one per process and kernel); otherwise the open sequence runs, reusing the
    /// process binding of an earlier open.
    pub fn open(sys: &Arc<dyn Sys>, options: &OpenOptions) -> Result<Arc<Self>> {
        let binding = ProcessBinding::for_sys(sys)?;
        let mut state = binding.lock_state();
        if let Some(open) = state.open.upgrade() {
            return Ok(open);
        }
        let kfd_fd = binding.kfd_fd();
        let topology = Topology::read(sys.as_ref())?;

        // Render nodes: opened once per process and GPU, kept for the life of the process.
        let mut hidden = Vec::new();
        let mut usable: Vec<(Node, RenderFile)> = Vec::new();
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
            if let Err(err) = node.properties.gfx_version() {
                hidden.push(HiddenGpu {
                    node_index: node.index,
                    gpu_id: Some(gpu_id),
                    reason: format!("unknown ISA: {err}"),
                });
                continue;
            }
            if let Some(file) = state.render_files.get(&gpu_id) {
                usable.push((node.clone(), *file));
                continue;
            }
            let minor = node.properties.drm_render_minor;
            match options.render_nodes.open_render_node(sys.as_ref(), minor) {
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

        // Bind each GPU's VM to its render-node file. A file the kernel refuses is closed and
        // forgotten; a file it accepted is kept for the life of the process.
        for (node, file) in &usable {
            let gpu_id = node.gpu_id().unwrap_or_default();
            let acquired = restarting(|| ioctls::acquire_vm(sys.as_ref(), kfd_fd, file.fd, gpu_id));
            if let Err(err) = acquired {
                let newly_opened = !state.render_files.contains_key(&gpu_id);
                if newly_opened {
                    let _ = sys.close(file.fd);
                }
                for (other_node, other) in &usable {
                    let other_id = other_node.gpu_id().unwrap_or_default();
                    if other_id != gpu_id && !state.render_files.contains_key(&other_id) {
                        // Not bound yet either: close rather than leak.
                        let _ = sys.close(other.fd);
                    }
                }
                let op = if err.errno == crate::Errno::EBUSY {
                    format!(
                        "bind the VM of GPU {gpu_id:#x} to renderD{} (the GPU is bound to another \
                         render-node file in this process: did another runtime open it?)",
                        file.minor
                    )
                } else {
                    format!("bind the VM of GPU {gpu_id:#x} to renderD{}", file.minor)
                };
                return Err(binding.ioctl_error(op, err));
            }
            state.render_files.insert(gpu_id, *file);
        }

        let apertures = restarting(|| ioctls::get_process_apertures(sys.as_ref(), kfd_fd))
            .map_err(|e| binding.ioctl_error("read the process apertures", e))?;

        let page_size = sys.page_size();
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
            restarting(|| {
                ioctls::set_memory_policy(
                    sys.as_ref(),
                    kfd_fd,
                    gpu_id,
                    CachePolicy::NONCOHERENT,
                    CachePolicy::COHERENT,
                )
            })
            .map_err(|e| {
                binding.ioctl_error(format!("set the memory policy of GPU {gpu_id:#x}"), e)
            })?;
            let cwsr = CwsrSizes::for_node(&node.properties, page_size as u64);
            gpus.push(Gpu {
                gpu_id,
                version,
                apertures: aperture,
                render: file,
                cwsr,
                doorbell_slice_size: doorbell_slice_size(page_size),
                doorbell_page: Mutex::new(None),
                node,
            });
        }

        // XNACK: query only (a negative mode asks); kernels without the ioctl leave it unknown.
        let xnack = restarting(|| ioctls::set_xnack_mode(sys.as_ref(), kfd_fd, -1))
            .map_or(XNACK_UNKNOWN, |mode| u8::from(mode != 0));

        if options.enable_runtime {
            let capable = gpus.iter().all(|g| {
                g.node
                    .properties
                    .capability()
                    .contains(Capability::TRAP_DEBUG_FIRMWARE_SUPPORTED)
            });
            binding.enable_runtime(&mut state, capable);
        }

        // The GPU VA range every GPU can use: buffers are placed at one address for all.
        let lowest = gpus
            .iter()
            .map(|g| g.apertures.gpuvm_base)
            .max()
            .unwrap_or_default();
        let highest = gpus
            .iter()
            .map(|g| g.apertures.gpuvm_limit)
            .min()
            .unwrap_or_default();
        if lowest >= highest {
            return Err(Error::Kernel(format!(
                "the GPUs share no GPU VM aperture ({lowest:#x}..={highest:#x})"
            )));
        }

        // The event page: made once per process, mapped on every GPU, handed to the kernel.
        if state.event_page.is_none() {
            let owner = &gpus[0];
            state.event_page = Some(EventPage::allocate(
                sys,
                kfd_fd,
                owner.gpu_id,
                owner.render.fd,
                lowest,
                highest,
            )?);
        }
        let gpu_ids: Vec<u32> = gpus.iter().map(|g| g.gpu_id).collect();
        let (event_page_address, event_page_handle) = {
            let page = state
                .event_page
                .as_mut()
                .ok_or_else(|| Error::Kernel("event page missing".to_owned()))?;
            page.map_on(sys.as_ref(), kfd_fd, &gpu_ids)?;
            page.register(sys.as_ref(), kfd_fd)?;
            (page.address(), page.handle())
        };

        let kfd = Arc::new(Self {
            address_space: AddressSpace::new(Arc::clone(sys), lowest, highest),
            binding: Arc::clone(&binding),
            topology,
            gpus,
            hidden,
            xnack: AtomicU8::new(xnack),
            event_page_address,
            event_page_handle,
            live: LiveCounters::default(),
            drop_errors: Mutex::new(Vec::new()),
        });
        state.open = Arc::downgrade(&kfd);
        Ok(kfd)
    }

    /// The process binding.
    pub fn binding(&self) -> &Arc<ProcessBinding> {
        &self.binding
    }

    /// The system interface.
    pub fn sys(&self) -> &Arc<dyn Sys> {
        self.binding.sys()
    }

    /// The `/dev/kfd` fd.
    pub fn kfd_fd(&self) -> i32 {
        self.binding.kfd_fd()
    }

    /// The kernel's interface version `(major, minor)`.
    pub fn interface_version(&self) -> (u32, u32) {
        self.binding.interface_version()
    }

    /// The topology snapshot taken at open.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The GPUs in use, in node order.
    pub fn gpus(&self) -> &[Gpu] {
        &self.gpus
    }

    /// The GPU with `gpu_id`.
    pub fn gpu(&self, gpu_id: u32) -> Result<&Gpu> {
        self.gpus
            .iter()
            .find(|g| g.gpu_id == gpu_id)
            .ok_or(Error::NoSuchGpu(gpu_id))
    }

    /// GPUs of the topology left out, with the reason.
    pub fn hidden_gpus(&self) -> &[HiddenGpu] {
        &self.hidden
    }

    /// The address space buffers are placed in.
    pub fn address_space(&self) -> &Arc<AddressSpace> {
        &self.address_space
    }

    /// The address of the event page (the same for the CPU and every GPU).
    pub fn event_page_address(&self) -> u64 {
        self.event_page_address
    }

    /// The BO handle of the event page (the kernel refuses to free it: EPERM).
    pub fn event_page_handle(&self) -> u64 {
        self.event_page_handle
    }

    /// What RUNTIME_ENABLE did for this process.
    pub fn runtime_state(&self) -> RuntimeState {
        self.binding.runtime_state()
    }

    /// The process' XNACK mode, if the kernel reports it.
    pub fn xnack_enabled(&self) -> Option<bool> {
        match self.xnack.load(Ordering::Relaxed) {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    /// SET_XNACK_MODE: turn XNACK (retry on GPU page faults) on or off for the process. The
    /// kernel refuses while any queue exists (EBUSY) and where a GPU cannot (EPERM).
    pub fn set_xnack_mode(&self, enabled: bool) -> Result<()> {
        self.binding.check_process()?;
        let mode = restarting(|| {
            ioctls::set_xnack_mode(self.sys().as_ref(), self.kfd_fd(), i32::from(enabled))
        })
        .map_err(|e| {
            self.binding.ioctl_error(
                format!("turn XNACK {}", if enabled { "on" } else { "off" }),
                e,
            )
        })?;
        self.xnack.store(u8::from(mode != 0), Ordering::Relaxed);
        Ok(())
    }

    /// AVAILABLE_MEMORY (1.9): VRAM bytes this process may still allocate on a GPU.
    pub fn available_memory(&self, gpu_id: u32) -> Result<u64> {
        self.binding.check_process()?;
        if !self.binding.has_minor(MINOR_AVAILABLE_MEMORY) {
            return Err(Error::Unsupported(format!(
                "AVAILABLE_MEMORY needs KFD interface 1.{MINOR_AVAILABLE_MEMORY}; the kernel has \
                 1.{}",
                self.interface_version().1
            )));
        }
        restarting(|| ioctls::available_memory(self.sys().as_ref(), self.kfd_fd(), gpu_id)).map_err(
            |e| {
                self.binding
                    .ioctl_error(format!("query available memory of GPU {gpu_id:#x}"), e)
            },
        )
    }

    /// GET_CLOCK_COUNTERS for a GPU.
    pub fn clock_counters(&self, gpu_id: u32) -> Result<GetClockCountersArgs> {
        self.binding.check_process()?;
        restarting(|| ioctls::get_clock_counters(self.sys().as_ref(), self.kfd_fd(), gpu_id))
            .map_err(|e| {
                self.binding
                    .ioctl_error(format!("read the clock counters of GPU {gpu_id:#x}"), e)
            })
    }

    /// What is alive under this driver now.
    pub fn live_objects(&self) -> LiveObjects {
        LiveObjects {
            buffers: self.live.buffers.load(Ordering::Relaxed),
            cpu_mappings: self.live.cpu_mappings.load(Ordering::Relaxed),
            gpu_mappings: self.live.gpu_mappings.load(Ordering::Relaxed),
            queues: self.live.queues.load(Ordering::Relaxed),
            events: self.live.events.load(Ordering::Relaxed),
        }
    }

    /// Errors that happened while destroying objects in `Drop` (which cannot return them),
    /// oldest first; taking them clears the list.
    pub fn take_drop_errors(&self) -> Vec<Error> {
        std::mem::take(
            &mut *self
                .drop_errors
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    pub(crate) fn record_drop_error(&self, error: Error) {
        let mut errors = self
            .drop_errors
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if errors.len() == MAX_DROP_ERRORS {
            errors.remove(0);
        }
        errors.push(error);
    }

    /// Fail unless this is the process that opened the driver.
    pub fn check_process(&self) -> Result<()> {
        self.binding.check_process()
    }
}
