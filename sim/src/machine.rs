//! A simulated machine: the kernel driver model of a host with its GPUs, behind [`kfd::Sys`].
//!
//! Every machine is independent (tests build one each); [`crate::default_machine`] is the
//! process-wide one `Device::open()` uses when no GPU exists. Idle machines use no CPU: the
//! driver model has no threads of its own, and the queue engine parks idle processors.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kfd::abi::{HwExceptionData, MemoryExceptionData, MemoryExceptionFailure};

use crate::config::MachineConfig;
use crate::driver::accounting::SystemPool;
use crate::driver::device::{Device, FIRST_SIMD_ID_BASE};
use crate::driver::fork_gate;
use crate::driver::host_memory::MemoryFile;
use crate::driver::injection::FaultInjection;
use crate::driver::os_kernel::Kernel;
use crate::driver::process::Process;
use crate::driver::shared::Shared;
use crate::driver::topology::Topology;
use crate::error::SimError;
use crate::gpu::dispatch::InterruptSink;
use crate::gpu::vm::{GpuVm, MemoryFault};

static NEXT_MACHINE_ID: AtomicU64 = AtomicU64::new(1);

/// A simulated machine: a cheap handle, `Clone`, usable as a [`kfd::Sys`].
#[derive(Clone)]
pub struct Machine {
    pub(crate) inner: Arc<Kernel>,
}

impl std::fmt::Debug for Machine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Machine")
            .field("id", &self.inner.shared.id)
            .field("description", &self.inner.shared.description)
            .finish_non_exhaustive()
    }
}

/// Counts of live kernel objects, for leak checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResourceCounts {
    /// KFD processes (opened `/dev/kfd` and not exited).
    pub processes: u64,
    /// Buffer objects (allocated and not freed).
    pub buffer_objects: u64,
    /// Queues.
    pub queues: u64,
    /// Events (without the reserved id 0).
    pub events: u64,
    /// CPU mappings the simulator made through `mmap` on sim fds and that were not unmapped
    /// through `munmap`.
    pub cpu_mappings: u64,
    /// Sim fds opened through `open` and not closed through `close`.
    pub open_files: u64,
}

/// What caused a simulated GPU reset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResetCause {
    /// A hang (`KFD_HW_EXCEPTION_GPU_HANG`).
    Hang,
    /// An uncorrectable ECC error (`KFD_HW_EXCEPTION_ECC`): MEMORY events are set too.
    Ecc,
}

/// One GPU as the machine reports it (for tests and tools).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuInfo {
    /// KFD's gpu_id.
    pub gpu_id: u32,
    /// Topology node number.
    pub node: u32,
    /// Render node minor (`/dev/dri/renderD<minor>`).
    pub render_minor: u32,
    /// The ISA.
    pub target: crate::gpu::target::GfxTarget,
    /// Active CUs.
    pub compute_units: u32,
    /// XCCs.
    pub xccs: u32,
    /// VRAM bytes.
    pub vram_bytes: u64,
    /// The queue buffer sizes CREATE_QUEUE demands.
    pub queue_buffers: crate::driver::cwsr::QueueBufferSizes,
    /// Queues one process may create on this GPU.
    pub max_queues_per_process: u32,
    /// PCI revision id.
    pub pci_revision: u32,
}

impl Machine {
    /// Build a machine.
    pub fn new(config: MachineConfig) -> Result<Self, SimError> {
        config.validate()?;
        fork_gate::install();
        let memory = MemoryFile::new()?;
        let id = NEXT_MACHINE_ID.fetch_add(1, Ordering::Relaxed);
        let hive_id = if config.xgmi_hive && config.gpus.len() > 1 {
            0x4849_5645_0000_0000 | id
        } else {
            0
        };
        let mut devices: Vec<Device> = Vec::with_capacity(config.gpus.len());
        let mut simd_id_base = FIRST_SIMD_ID_BASE;
        for (index, gpu) in config.gpus.iter().enumerate() {
            let taken: Vec<u32> = devices.iter().map(|d| d.gpu_id).collect();
            let device = Device::build(
                index,
                gpu,
                &taken,
                simd_id_base,
                hive_id,
                config.system_memory_bytes,
                &memory,
            )?;
            simd_id_base = device.next_simd_id_base();
            devices.push(device);
        }
        let topology = Topology::build(&config, &devices);
        let description = format!(
            "{} x {} ({}, {} CUs)",
            devices.len(),
            config.gpus[0].marketing_name,
            config.gpus[0].target.name(),
            config.gpus[0].compute_units
        );
        let shared = Arc::new(Shared {
            id,
            devices: devices.into_iter().map(Arc::new).collect(),
            memory,
            system: Arc::new(SystemPool::new(config.system_memory_bytes)),
            engine: config.engine,
            sdma_engine: config.sdma_engine,
            injection: FaultInjection::default(),
            kfd_minor: config.kfd_minor_version,
            description,
        });
        Ok(Self {
            inner: Arc::new(Kernel::new(shared, topology)),
        })
    }

    /// The default machine (one MI210).
    pub fn mi210() -> Result<Self, SimError> {
        Self::new(MachineConfig::mi210())
    }

    /// A one-line description (`1 x AMD Instinct MI210 (gfx90a, 104 CUs)`).
    pub fn description(&self) -> &str {
        &self.inner.shared.description
    }

    /// The GPUs, in topology order.
    pub fn gpus(&self) -> Vec<GpuInfo> {
        self.inner
            .shared
            .devices
            .iter()
            .map(|d| GpuInfo {
                gpu_id: d.gpu_id,
                node: d.node,
                render_minor: d.render_minor,
                target: d.config.target,
                compute_units: d.layout.total_cus(),
                xccs: d.layout.xccs,
                vram_bytes: d.config.vram_bytes,
                queue_buffers: d.sizes,
                max_queues_per_process: d.max_queues_per_process,
                pci_revision: d.config.pci_revision,
            })
            .collect()
    }

    /// Fault injection controls.
    pub fn inject(&self) -> &FaultInjection {
        &self.inner.shared.injection
    }

    /// Live objects of the whole machine.
    pub fn counts(&self) -> ResourceCounts {
        let processes = self.inner.touchable_processes();
        let mut counts = ResourceCounts {
            cpu_mappings: self.inner.cpu_mappings.count(None),
            open_files: self.inner.files.open_fds(None),
            ..ResourceCounts::default()
        };
        for p in processes.iter().filter(|p| !p.has_exited()) {
            counts.processes += 1;
            counts.buffer_objects += p.counters.bos.load(Ordering::Acquire);
            counts.queues += p.counters.queues.load(Ordering::Acquire);
            counts.events += p.counters.events.load(Ordering::Acquire);
        }
        counts
    }

    /// Live objects of process `pid`.
    pub fn process_counts(&self, pid: i32) -> ResourceCounts {
        let mut counts = ResourceCounts {
            cpu_mappings: self.inner.cpu_mappings.count(Some(pid)),
            open_files: self.inner.files.open_fds(Some(pid)),
            ..ResourceCounts::default()
        };
        if let Some(p) = self.inner.process_by_pid(pid).filter(|p| !p.has_exited()) {
            counts.processes = 1;
            counts.buffer_objects = p.counters.bos.load(Ordering::Acquire);
            counts.queues = p.counters.queues.load(Ordering::Acquire);
            counts.events = p.counters.events.load(Ordering::Acquire);
        }
        counts
    }

    /// How many WAIT_EVENTS callers of process `pid` are asleep on event `event_id` and not
    /// yet woken (0 for an unknown process or event). Tests wait for this to become non-zero
    /// before they signal, so that the "a sleeping waiter is woken" path really runs.
    pub fn sleeping_event_waiters(&self, pid: i32, event_id: u32) -> usize {
        self.inner
            .process_by_pid(pid)
            .map_or(0, |p| p.sleeping_waiters(event_id))
    }

    /// Look at the doorbells of every queue of the calling process (of every process, in the
    /// process that built the machine) and wake the command processors whose doorbell was
    /// stored to since the last look. Returns how many were woken.
    ///
    /// The in-process way in tells the simulator of each doorbell store
    /// ([`kfd::Sys::notify_doorbell`]); a program served through the LD_PRELOAD interposer only
    /// stores to the mapped doorbell, as on hardware, and the interposer calls this from a
    /// polling thread instead.
    pub fn poll_doorbells(&self) -> usize {
        let mut woken = 0;
        for process in self.inner.touchable_processes() {
            if process.has_exited() {
                continue;
            }
            let slices: Vec<_> = process
                .state()
                .pdds
                .iter()
                .filter_map(|pdd| pdd.doorbells.clone())
                .collect();
            woken += slices.iter().map(|slice| slice.poll()).sum::<usize>();
        }
        woken
    }

    /// A `MAP_FIXED` mapping the host made, not through this machine, replaced
    /// `[addr, addr + len)` in the calling process: the simulator does what the kernel's
    /// `mmap_region` does to the mappings it replaced, without touching memory (the new
    /// mapping is already in place). Userptr BOs over the range lose their GPU mappings (the
    /// MMU notifier), and the simulator forgets its CPU mappings there, so a render-node
    /// mapping no longer keeps a freed BO alive.
    ///
    /// [`kfd::Sys::mmap`] on the machine does this itself; this is for a way in that makes
    /// the program's own mappings with libc (the LD_PRELOAD interposer, where libhsakmt and
    /// ROCr give a buffer's range back by mapping anonymous `PROT_NONE` memory over it).
    /// Cheap when the range holds nothing the simulator tracks: a few uncontended locks.
    pub fn host_mapping_replaced(&self, addr: std::ptr::NonNull<std::ffi::c_void>, len: usize) {
        let start = addr.as_ptr() as usize;
        let len = len.next_multiple_of(crate::driver::host_memory::PAGE_SIZE as usize);
        self.inner.notify_unmap(start, len);
        self.inner.cpu_mappings.remove(start, len);
    }

    /// Simulate process `pid` exiting (its mm going away): everything the kernel frees at mm
    /// release is freed, its `/dev/kfd` files answer EBADF, and the next open of `/dev/kfd` by
    /// that pid creates a fresh KFD process (as after `exec`).
    pub fn exit_process(&self, pid: i32) -> Result<(), SimError> {
        let process = self
            .inner
            .processes
            .lock()
            .remove(&pid)
            .ok_or(SimError::UnknownProcess(pid))?;
        process.exit();
        Ok(())
    }

    fn device_index(&self, gpu_id: u32) -> Result<usize, SimError> {
        self.inner
            .shared
            .devices
            .iter()
            .position(|d| d.gpu_id == gpu_id)
            .ok_or(SimError::UnknownGpu(gpu_id))
    }

    fn process(&self, pid: i32) -> Result<Arc<Process>, SimError> {
        self.inner
            .process_by_pid(pid)
            .filter(|p| !p.has_exited())
            .ok_or(SimError::UnknownProcess(pid))
    }

    /// Process `pid`'s GPU address space on `gpu_id`: the device's view of memory, for tests
    /// that check what the GPU sees.
    pub fn gpu_vm(&self, pid: i32, gpu_id: u32) -> Result<Arc<dyn GpuVm>, SimError> {
        let index = self.device_index(gpu_id)?;
        let vm = self
            .process(pid)?
            .page_table(index)
            .ok_or(SimError::UnknownGpu(gpu_id))?;
        Ok(vm)
    }

    /// The interrupt sink of process `pid` on `gpu_id` (what that process' queues report to).
    pub fn interrupt_sink(
        &self,
        pid: i32,
        gpu_id: u32,
    ) -> Result<Arc<dyn InterruptSink>, SimError> {
        let index = self.device_index(gpu_id)?;
        let sink = self
            .process(pid)?
            .interrupt_sink(index)
            .ok_or(SimError::UnknownGpu(gpu_id))?;
        Ok(sink)
    }

    /// Raise a GPU VM fault for process `pid` on `gpu_id`, as if one of its queues faulted:
    /// its queues on that GPU are evicted and its MEMORY events set.
    pub fn inject_vm_fault(
        &self,
        pid: i32,
        gpu_id: u32,
        fault: MemoryFault,
    ) -> Result<(), SimError> {
        self.interrupt_sink(pid, gpu_id)?.vm_fault(fault);
        Ok(())
    }

    /// Simulate a whole-GPU reset of `gpu_id` (`kfd_signal_reset_event`): every process'
    /// queues on it are evicted, its HW_EXCEPTION events are set with `memory_lost`, and for an
    /// ECC cause its MEMORY events too.
    pub fn inject_gpu_reset(&self, gpu_id: u32, cause: ResetCause) -> Result<(), SimError> {
        let index = self.device_index(gpu_id)?;
        let hw = HwExceptionData {
            reset_type: kfd::abi::exception::WHOLE_GPU_RESET,
            reset_cause: match cause {
                ResetCause::Hang => kfd::abi::exception::GPU_HANG,
                ResetCause::Ecc => kfd::abi::exception::ECC,
            },
            memory_lost: 1,
            gpu_id,
        };
        let memory = (cause == ResetCause::Ecc).then_some(MemoryExceptionData {
            failure: MemoryExceptionFailure {
                imprecise: 1,
                ..MemoryExceptionFailure::default()
            },
            va: 0,
            gpu_id,
            error_type: kfd::abi::exception::MEM_ERR_SRAM_ECC,
        });
        for process in self.inner.touchable_processes() {
            if process.has_exited() {
                continue;
            }
            process.evict_queues(index);
            process.signal_reset(hw, memory);
        }
        Ok(())
    }
}
