//! The process-wide [`Device`]: opened once, shared by every caller, torn down completely and
//! opened again as often as a program likes.
//!
//! - [`registry`]: while a device is open, every `open()` in the process gets the same one;
//! - [`lifetime`]: the handles it gives out, and how a shutdown empties them;
//! - [`fork`]: telling a fork child from its parent cheaply;
//! - `signal_pool`: signal memory and events, recycled (owned by the open device, used by
//!   signals, queues and kernarg rings);
//! - [`unload`]: what a copy of the library gives back when the plugin that embeds it is
//!   unloaded.
//!
//! What the kernel ties to the process for its whole life (the `/dev/kfd` file, the render
//! files, the event page) is kept by `kfd`'s process binding and reused by the next open;
//! everything else (queues, events, buffers, mappings) belongs to one open device and is
//! destroyed with it.

mod faults;
pub(crate) mod fork;
pub(crate) mod lifetime;
mod registry;
pub use faults::MemoryFault;
pub(crate) mod signal_pool;
mod staging;
pub(crate) mod unload;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::Duration;

use drm_amdgpu::AmdgpuRenderNodes;
use kfd::abi::{EventType, MemoryExceptionData};
use kfd::{EventException, WaitStatus};
use kfd::{Kfd, OpenOptions, Sys};
use tracing::{debug, info_span, warn};

use crate::agent::{self, CpuAgent, GpuAgent};
use crate::backend;
use crate::error::{Error, Result};
use lifetime::ObjectTable;
pub(crate) use lifetime::Stage as TeardownStage;
use registry::Registry;
use signal_pool::SignalPool;

/// A handle to the process-wide device: every GPU and CPU agent the kernel driver offers.
///
/// Cloning is cheap. The device stays open while any handle to it (or to anything made from
/// it: buffers, queues, signals) exists; when the last one goes, everything is torn down except
/// what the kernel binds to the process for its life, and the next [`Device::open`] starts
/// from zero. [`Device::shutdown`] tears down at once, even while handles remain.
///
/// ```
/// # if aqueduct::backend::choose().ok() != Some(aqueduct::backend::BackendChoice::Simulator) { return Ok(()); }
/// let device = aqueduct::Device::open()?;
/// let gpu = &device.gpus()?[0];
/// println!("{}: {} CUs, wave{}", gpu.target_id, gpu.compute_units, gpu.wavefront_size);
/// let buffer = device.alloc(gpu, aqueduct::MemoryLocation::Device, 4096)?;
/// buffer.write(0, &[1u32, 2, 3])?;
/// let mut back = [0u32; 3];
/// buffer.read(0, &mut back)?;
/// assert_eq!(back, [1, 2, 3]);
/// # Ok::<(), aqueduct::Error>(())
/// ```
#[derive(Clone)]
pub struct Device {
    shared: Arc<DeviceShared>,
}

/// What one open device is. Handles hold it through an `Arc`.
pub(crate) struct DeviceShared {
    sys: Arc<dyn Sys>,
    description: String,
    simulated: bool,
    owner_pid: i32,
    fork_epoch: u64,
    closed: AtomicBool,
    gpus: Vec<GpuAgent>,
    cpus: Vec<CpuAgent>,
    live: RwLock<Option<Live>>,
    objects: Mutex<ObjectTable>,
}

/// What a shutdown destroys besides the handed-out objects.
pub(crate) struct Live {
    /// The open driver.
    pub(crate) kfd: Arc<Kfd>,
    /// KFD sets every memory event of the process on a GPU page fault, with the address.
    pub(crate) memory_faults: kfd::Event,
    /// Signal memory and events, recycled.
    pub(crate) signals: Arc<Mutex<SignalPool>>,
    /// Memory faults seen on the event so far (each wait consumes a firing).
    faults: Mutex<Vec<MemoryExceptionData>>,
    /// Host access to memory the CPU cannot map: a copy queue per GPU, made on first need.
    pub(crate) staged: staging::StagedCopies,
}

impl Live {
    /// The address of the latest memory fault KFD reported on `gpu_id`, waiting up to
    /// `patience` for a report if none has come yet (the CP's error word and KFD's fault
    /// report race). `None`: no fault on that GPU, or none could be read (logged).
    pub(crate) fn memory_fault(&self, gpu_id: u32, patience: Duration) -> Option<u64> {
        self.read_memory_faults(gpu_id, patience)
            .unwrap_or_else(|error| {
                warn!(%error, "reading the memory-fault event");
                None
            })
            .or_else(|| self.latest_fault(gpu_id))
    }

    /// [`Live::memory_fault`], failing if the memory-fault event cannot be read.
    fn read_memory_faults(&self, gpu_id: u32, patience: Duration) -> Result<Option<u64>> {
        let mut faults = self.faults.lock().unwrap_or_else(PoisonError::into_inner);
        let mut timeout = if faults.iter().any(|f| f.gpu_id == gpu_id) {
            Duration::ZERO
        } else {
            patience
        };
        // Each firing of the (auto-reset) event carries the latest fault: collect them all.
        loop {
            let outcome = self
                .memory_faults
                .wait(Some(timeout))
                .map_err(|e| Error::driver(|| "reading the memory-fault event".to_owned(), e))?;
            if outcome.status != WaitStatus::Complete {
                break;
            }
            if let Some(Some(EventException::Memory(data))) = outcome.exceptions.first() {
                warn!(gpu_id = data.gpu_id, va = data.va, "GPU memory fault");
                faults.push(*data);
            }
            timeout = Duration::ZERO;
        }
        Ok(faults
            .iter()
            .rev()
            .find(|f| f.gpu_id == gpu_id)
            .map(|f| f.va))
    }

    /// The latest memory fault on `gpu_id` seen so far, without asking the kernel.
    fn latest_fault(&self, gpu_id: u32) -> Option<u64> {
        let faults = self.faults.lock().unwrap_or_else(PoisonError::into_inner);
        faults
            .iter()
            .rev()
            .find(|f| f.gpu_id == gpu_id)
            .map(|f| f.va)
    }

    /// Fail if a memory fault on `gpu_id` made the kernel stop this process' queues, or if
    /// the kernel's fault report cannot be read (a check that cannot look must not pass).
    pub(crate) fn check_gpu_running(&self, gpu_id: u32) -> Result<()> {
        match self.read_memory_faults(gpu_id, Duration::ZERO)? {
            None => Ok(()),
            Some(address) => Err(Error::GpuStopped {
                gpu_id,
                fault_address: Some(address),
            }),
        }
    }
}

impl Device {
    /// Open the device of the chosen backend ([`backend::choose`]): `/dev/kfd` where it exists,
    /// the built-in simulator otherwise (`AQUEDUCT_BACKEND=hw|sim` forces one). While a device
    /// is open in this process, returns a handle to it.
    pub fn open() -> Result<Self> {
        Self::open_on(backend::system()?)
    }

    /// Open the device behind `sys` (the real kernel, or a simulated machine of your own).
    /// While a device on the same kernel is open in this process, returns a handle to it.
    pub fn open_on(sys: Arc<dyn Sys>) -> Result<Self> {
        unload::register_release_at_unload();
        let pid = sys.process_id();
        let mut registry = Registry::lock();
        if let Some(shared) = registry.find(sys.kernel_id(), pid) {
            return Ok(Self { shared });
        }
        let span = info_span!("aqueduct::open", kernel = sys.kernel_id());
        let _enter = span.enter();
        let shared = Arc::new(DeviceShared::open(sys)?);
        registry.insert(shared.sys.kernel_id(), pid, &shared);
        debug!(gpus = shared.gpus.len(), "device open");
        Ok(Self { shared })
    }

    /// The GPU agents, in topology order.
    pub fn gpus(&self) -> Result<&[GpuAgent]> {
        self.shared.check()?;
        Ok(&self.shared.gpus)
    }

    /// The CPU agents (NUMA nodes), in topology order.
    pub fn cpus(&self) -> Result<&[CpuAgent]> {
        self.shared.check()?;
        Ok(&self.shared.cpus)
    }

    /// Whether this device is the built-in (or another in-process) simulator.
    pub fn is_simulated(&self) -> bool {
        self.shared.simulated
    }

    /// What the device is: `/dev/kfd`, or the simulated machine.
    pub fn description(&self) -> &str {
        &self.shared.description
    }

    /// The KFD interface version the kernel speaks.
    pub fn kfd_interface_version(&self) -> Result<(u32, u32)> {
        self.shared
            .with_live(|live| Ok(live.kfd.interface_version()))
    }

    /// Kernel objects alive under this device (buffers, mappings, queues, events), for leak
    /// checks.
    pub fn live_objects(&self) -> Result<kfd::LiveObjects> {
        self.shared.with_live(|live| Ok(live.kfd.live_objects()))
    }

    /// The open driver underneath, for research code that needs the raw `kfd` layer. Objects
    /// made with it are not torn down by [`Device::shutdown`].
    pub fn kfd(&self) -> Result<Arc<Kfd>> {
        self.shared.with_live(|live| Ok(Arc::clone(&live.kfd)))
    }

    /// Tear the device down now, even while handles remain: queues are destroyed, then
    /// signals, executables and buffers freed; waits in progress return [`Error::Closed`];
    /// every later call on any handle of this device fails with [`Error::Closed`]. The next
    /// [`Device::open`] opens a fresh device. Returns the first error the kernel reported while
    /// destroying objects (everything is destroyed regardless); shutting down twice is a no-op.
    pub fn shutdown(&self) -> Result<()> {
        self.shared.check_process()?;
        self.shared.shutdown()
    }

    /// Whether [`Device::shutdown`] was called on this device.
    pub fn is_closed(&self) -> bool {
        self.shared.is_closed()
    }

    pub(crate) fn from_shared(shared: Arc<DeviceShared>) -> Self {
        Self { shared }
    }

    pub(crate) fn shared(&self) -> &Arc<DeviceShared> {
        &self.shared
    }

    /// The agent of `gpu` on this device (callers may hold an agent of an older device).
    /// Fails first if the device is closed or this is a fork child.
    pub(crate) fn gpu_index(&self, gpu: &GpuAgent) -> Result<usize> {
        self.shared.check()?;
        self.shared
            .gpus
            .iter()
            .position(|g| g.gpu_id == gpu.gpu_id)
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "GPU {:#x} is not an agent of this device",
                    gpu.gpu_id
                ))
            })
    }
}

/// Two handles are equal when they are handles to the same open device.
impl PartialEq for Device {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }
}

impl Eq for Device {}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("description", &self.shared.description)
            .field("gpus", &self.shared.gpus.len())
            .field("closed", &self.shared.is_closed())
            .finish_non_exhaustive()
    }
}

impl DeviceShared {
    fn open(sys: Arc<dyn Sys>) -> Result<Self> {
        let fork_epoch = fork::epoch();
        let kfd = Kfd::open(&sys, &OpenOptions::new(Arc::new(AmdgpuRenderNodes)))
            .map_err(|e| Error::driver(|| "opening the device".to_owned(), e))?;
        let gpus = agent::gpus(&kfd);
        let cpus = agent::cpus(kfd.topology());
        let memory_faults = kfd
            .create_event(EventType::MEMORY, true, 0)
            .map_err(|e| Error::driver(|| "the memory-fault event".to_owned(), e))?;
        let (description, simulated) = match sys.backend() {
            kfd::Backend::Linux => (kfd::abi::sysfs::KFD_DEVICE_PATH.to_owned(), false),
            kfd::Backend::Simulator(machine) => (format!("simulator: {machine}"), true),
        };
        Ok(Self {
            owner_pid: kfd.binding().pid(),
            sys,
            description,
            simulated,
            fork_epoch,
            closed: AtomicBool::new(false),
            gpus,
            cpus,
            live: RwLock::new(Some(Live {
                kfd,
                memory_faults,
                signals: Arc::new(Mutex::new(SignalPool::default())),
                faults: Mutex::new(Vec::new()),
                staged: staging::StagedCopies::default(),
            })),
            objects: Mutex::new(ObjectTable::default()),
        })
    }

    /// Fail in a fork child (compares pids: catches raw `clone` children too).
    pub(crate) fn check_process(&self) -> Result<()> {
        let me = self.sys.process_id();
        if me == self.owner_pid && fork::epoch() == self.fork_epoch {
            Ok(())
        } else {
            Err(Error::ForkedChild {
                parent: self.owner_pid,
                child: me,
            })
        }
    }

    /// Fail in a fork child or after a shutdown.
    pub(crate) fn check(&self) -> Result<()> {
        self.check_process()?;
        if self.is_closed() {
            return Err(Error::Closed);
        }
        Ok(())
    }

    /// [`DeviceShared::check`] without a system call: the fork epoch only.
    pub(crate) fn check_fast(&self) -> Result<()> {
        if fork::epoch() != self.fork_epoch {
            return Err(Error::ForkedChild {
                parent: self.owner_pid,
                child: self.sys.process_id(),
            });
        }
        if self.is_closed() {
            return Err(Error::Closed);
        }
        Ok(())
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Run `f` with the device's live state.
    pub(crate) fn with_live<R>(&self, f: impl FnOnce(&Live) -> Result<R>) -> Result<R> {
        self.check()?;
        let live = self.live.read().unwrap_or_else(PoisonError::into_inner);
        match live.as_ref() {
            Some(live) => f(live),
            None => Err(Error::Closed),
        }
    }

    pub(crate) fn objects(&self) -> MutexGuard<'_, ObjectTable> {
        self.objects.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn gpus(&self) -> &[GpuAgent] {
        &self.gpus
    }

    fn shutdown(self: &Arc<Self>) -> Result<()> {
        let mut registry = Registry::lock();
        if self.closed.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        registry.remove(self);
        drop(registry);
        let span = info_span!("aqueduct::shutdown", objects = self.objects().len());
        let _enter = span.enter();
        // Wake sleepers first: they see the device closed and let go of their objects.
        let live_objects = self.objects().live();
        for object in &live_objects {
            object.wake();
        }
        drop(live_objects);
        let ordered = self.objects().drain_in_stage_order();
        for object in ordered {
            object.teardown();
        }
        let live = self
            .live
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let mut first_error = None;
        if let Some(live) = live {
            let kfd = Arc::clone(&live.kfd);
            drop(live);
            let mut errors = kfd.take_drop_errors();
            // The last handle, unless something the kernel would not destroy keeps it.
            if let Err(error) = kfd.close() {
                errors.push(error);
            }
            for error in &errors {
                warn!(%error, "while tearing down");
            }
            first_error = errors.into_iter().next();
        }
        debug!("device shut down");
        match first_error {
            Some(error) => Err(Error::Driver(error)),
            None => Ok(()),
        }
    }
}

impl Drop for DeviceShared {
    fn drop(&mut self) {
        let _span = info_span!("aqueduct::teardown").entered();
        // Every handle is gone (each held this device), so every object is destroyed already;
        // what remains is the device's own state.
        let live = self
            .live
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(live);
        debug!("device torn down");
    }
}
