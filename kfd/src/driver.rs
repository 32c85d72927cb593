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

use crate::abi::{GetClockCountersArgs, MINOR_AVAILABLE_MEMORY};
use crate::address_space::AddressSpace;
use crate::binding::{ProcessBinding, RuntimeState};
use crate::error::{Error, Result};
pub use crate::gpu::{Gpu, HiddenGpu};
use crate::ioctl::calls as ioctls;
use crate::open_sequence::{self, OpenSequence};
use crate::render_node::RenderNodeOpener;
use crate::retry::restarting;
use crate::sys::Sys;
use crate::topology::Topology;

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

/// Drop errors kept for [`Kfd::take_drop_errors`]; older ones are discarded.
const MAX_DROP_ERRORS: usize = 64;

impl Kfd {
    /// Open the driver behind `sys`. If it is open already in this process, that [`Kfd`] is
    /// returned (one per process and kernel); otherwise the open sequence runs, reusing the
    /// process binding of an earlier open.
    pub fn open(sys: &Arc<dyn Sys>, options: &OpenOptions) -> Result<Arc<Self>> {
        let binding = ProcessBinding::for_sys(sys)?;
        let mut state = binding.lock_state();
        if let Some(open) = state.open.get::<Self>() {
            return Ok(open);
        }
        let step = OpenSequence::new(sys, &binding);
        let topology = Topology::read(sys.as_ref())?;
        let (usable, hidden) =
            step.open_render_nodes(&topology, options.render_nodes.as_ref(), &state)?;
        step.bind_vms(&mut state, &usable)?;
        let apertures = step.read_apertures()?;
        let gpus = step.describe_gpus(usable, &apertures)?;
        let xnack = step.query_xnack();
        if options.enable_runtime {
            binding.enable_runtime(&mut state, open_sequence::debugger_capable(&gpus));
        }
        let (lowest, highest) = open_sequence::shared_gpuvm_range(&gpus)?;
        let (event_page_address, event_page_handle) =
            step.event_page(&mut state, &gpus, (lowest, highest))?;

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
        state.open.set(&kfd);
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
            .find(|g| g.gpu_id() == gpu_id)
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

    /// Close the driver now if this is its last handle (otherwise do nothing), reporting what
    /// a drop cannot: a doorbell page or an address-space reservation the operating system
    /// would not unmap (the first such error; everything is attempted). What the kernel ties
    /// to the process stays in the binding, as after a drop.
    pub fn close(self: Arc<Self>) -> Result<()> {
        let Some(kfd) = Arc::into_inner(self) else {
            return Ok(());
        };
        let mut result = Ok(());
        for gpu in &kfd.gpus {
            result = result.and(gpu.unmap_doorbell_page());
        }
        result.and(kfd.address_space.unmap_reservations())
    }
}
