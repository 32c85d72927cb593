//! The KFD process: all state the kernel keeps per process (per address space), never per file.
//!
//! As in the kernel, closing `/dev/kfd` destroys nothing; a second open finds this same process
//! with its queues, BOs, events, event page and acquired VMs. The state is guarded by two locks,
//! mirroring `p->mutex` (everything but events) and `p->event_mutex` (events); when both are
//! needed, the state lock is taken first. No lock is held while a command processor is stopped
//! (a processor may be reporting an interrupt that needs a lock at that moment).

mod doorbell;
mod events;
mod interrupts;
mod memory;
mod queues;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};

use kfd::Errno;
use kfd::abi::{
    AcquireVmArgs, CachePolicy, GetAvailableMemoryArgs, GetClockCountersArgs,
    GetProcessAperturesNewArgs, KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK, ProcessDeviceApertures,
    RuntimeEnableArgs, SetMemoryPolicyArgs, SetScratchBackingVaArgs, SetTrapHandlerArgs,
    SetXnackModeArgs,
};
use zerocopy::IntoBytes;

pub(crate) use doorbell::{CachedDoorbell, DoorbellSlice};
pub(crate) use events::EventTable;
pub(crate) use interrupts::ProcessInterrupts;
pub(crate) use memory::Bo;
pub(crate) use queues::Queue;

use crate::driver::device::Device;
use crate::driver::drm_file::DrmFile;
use crate::driver::gpu_vm::{GPU_VM_MAX, PageTable};
use crate::driver::host_memory::Backing;
use crate::driver::shared::Shared;
use crate::driver::user_memory;

/// `KMALLOC_MAX_SIZE` on x86-64 (order-10 pages): larger kernel-side arrays fail with ENOMEM.
pub(crate) const KMALLOC_MAX_SIZE: u64 = 4 << 20;

/// Apertures of GFX9+ (kfd_flat_memory.c): LDS at 1<<48, scratch at 2<<48, each 4 GiB; the
/// GPUVM aperture from [`VmLayout::gpuvm_base`] to 2^47 - 1.
const LDS_BASE: u64 = 1 << 48;
const SCRATCH_BASE: u64 = 2 << 48;
const GPUVM_LIMIT: u64 = (1 << 47) - 1;

/// The first KFD interface minor version whose kernels use the layout of Linux 6.9, commit
/// 34a1de0f7935 "drm/amdkfd: Relocate TBA/TMA to opposite side of VM hole".
///
/// Linux 6.9 reports 1.15 ("Enable managing mappings in compute VMs with GEM_VA ioctl"), and
/// 1.14 ("Update kfd_event_data") is what 6.8 reports. How sure: fairly, not certain — both
/// the 1.15 bump and the relocation were posted to amd-gfx in January 2024 and, as far as the
/// sources at hand show, merged for the 6.9 window; neither was checked against a tagged 6.9
/// tree. A kernel that reports 1.15 without the relocation (a distribution backport of one
/// and not the other) is possible and not modelled.
pub(crate) const MINOR_TRAP_AT_TOP: u32 = 15;

/// `KFD_CWSR_TBA_TMA_SIZE` (kfd_priv.h): two pages, the trap handler's code (TBA) and its
/// memory (TMA).
const CWSR_TBA_TMA_SIZE: u64 = 2 * 4096;

/// Where the kernel puts a process' GPU address-space pieces, by interface version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct VmLayout {
    /// The start of the GPUVM aperture GET_PROCESS_APERTURES_NEW reports.
    pub gpuvm_base: u64,
    /// `qpd.cwsr_base`: where ACQUIRE_VM maps the CWSR trap handler (TBA/TMA, two pages).
    pub cwsr_base: u64,
    /// `qpd.ib_base`: a page for kernel IBs (older kernels only; 0 for none).
    pub ib_base: u64,
}

impl VmLayout {
    /// The layout of a kernel that reports KFD interface 1.`kfd_minor`, for a GFX9 dGPU with a
    /// 48-bit VM (`max_pfn << 12` = 2^48).
    ///
    /// From 1.15 (Linux 6.9, `kfd_init_apertures_v9` in kfd_flat_memory.c):
    /// `gpuvm_base = AMDGPU_VA_RESERVED_BOTTOM` = 1 << 16, and `cwsr_base =
    /// AMDGPU_VA_RESERVED_TRAP_START(adev)` (amdgpu_vm.h) = top − CSA (2 MiB) − SEQ64 (2 MiB) −
    /// TRAP (`2 << 12`) = 2^48 − 4 MiB − 8 KiB, beyond the VM hole; no IB page.
    ///
    /// Before (Linux ≤ 6.8, same function and `kfd_init_apertures`): `gpuvm_base =
    /// SVM_USER_BASE` = 16 MiB; the low 16 MiB belong to the kernel: `cwsr_base =
    /// SVM_CWSR_BASE` = SVM_USER_BASE − KFD_CWSR_TBA_TMA_SIZE, `ib_base = SVM_IB_BASE` =
    /// SVM_CWSR_BASE − one page (`kfd_process_device_reserve_ib_mem` maps it; unsure whether
    /// every older kernel does).
    pub(crate) fn for_minor(kfd_minor: u32) -> Self {
        const SVM_USER_BASE: u64 = 0x100_0000;
        const AMDGPU_VA_RESERVED_BOTTOM: u64 = 1 << 16;
        const CSA_SIZE: u64 = 2 << 20;
        const SEQ64_SIZE: u64 = 2 << 20;
        const TRAP_SIZE: u64 = 2 << 12;
        if kfd_minor >= MINOR_TRAP_AT_TOP {
            Self {
                gpuvm_base: AMDGPU_VA_RESERVED_BOTTOM,
                cwsr_base: GPU_VM_MAX - CSA_SIZE - SEQ64_SIZE - TRAP_SIZE,
                ib_base: 0,
            }
        } else {
            let cwsr_base = SVM_USER_BASE - CWSR_TBA_TMA_SIZE;
            Self {
                gpuvm_base: SVM_USER_BASE,
                cwsr_base,
                ib_base: cwsr_base - 4096,
            }
        }
    }
}

/// Per-device data of a process (the kernel's `kfd_process_device`).
pub(crate) struct Pdd {
    pub device: Arc<Device>,
    /// The DRM file given to ACQUIRE_VM; `None` until then (the GPU is not bound).
    pub drm_file: Option<Arc<DrmFile>>,
    /// The GPU page table of this process on this device.
    pub vm: Arc<PageTable>,
    pub bos: std::collections::BTreeMap<u32, Bo>,
    pub doorbells: Option<Arc<DoorbellSlice>>,
    pub doorbell_bitmap: [u64; 16],
    pub queue_count: u32,
    /// Queues were evicted by a VM fault or a GPU reset and stay stopped.
    pub evicted: bool,
    pub interrupts: Arc<ProcessInterrupts>,
    pub trap_handler: (u64, u64),
    pub scratch_backing_va: u64,
    pub memory_policy: (u32, u32, u32),
    /// The CWSR trap-handler pages (RESERVED_MEM mmap), allocated on first mmap.
    pub reserved_memory: Option<Arc<Backing>>,
}

impl Pdd {
    fn bound(&self) -> bool {
        self.drm_file.is_some()
    }
}

/// Whether the runtime has announced itself to the debugger (RUNTIME_ENABLE; the `r_debug`
/// address and TTMP setup are only of use to a debugger, which the simulator has not).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RuntimeState {
    pub enabled: bool,
}

/// Everything guarded by `p->mutex`.
pub(crate) struct ProcessState {
    pub pdds: Vec<Pdd>,
    pub queues: std::collections::BTreeMap<u32, Queue>,
    pub xnack_enabled: bool,
    pub runtime: RuntimeState,
    /// Handle of the user BO used as event page (it may not be freed: EPERM).
    pub signal_handle: u64,
}

/// Live objects of a process, for leak accounting.
#[derive(Debug, Default)]
pub(crate) struct ProcessCounters {
    pub bos: AtomicU64,
    pub queues: AtomicU64,
    pub events: AtomicU64,
}

/// One KFD process.
pub(crate) struct Process {
    pub pid: i32,
    pub shared: Arc<Shared>,
    state: Mutex<ProcessState>,
    events: Mutex<EventTable>,
    event_wake: Condvar,
    exited: AtomicBool,
    pub counters: ProcessCounters,
}

impl std::fmt::Debug for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Process")
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every critical section leaves the state consistent before it can panic (errors are
    // returned, not unwound), so a poisoned lock is still usable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The IDR allocation rule: the lowest free id at or above `start`.
pub(crate) fn lowest_free<V>(map: &std::collections::BTreeMap<u32, V>, start: u32) -> Option<u32> {
    let mut candidate = start;
    for &id in map.range(start..).map(|(k, _)| k) {
        if id != candidate {
            break;
        }
        candidate = candidate.checked_add(1)?;
    }
    Some(candidate)
}

impl Process {
    /// `kfd_create_process`: a PDD for every GPU, an empty event table (id 0 reserved).
    pub(crate) fn new(pid: i32, shared: Arc<Shared>) -> Arc<Self> {
        Arc::new_cyclic(|weak: &Weak<Self>| {
            let pdds = shared
                .devices
                .iter()
                .map(|device| Pdd {
                    device: device.clone(),
                    drm_file: None,
                    vm: Arc::new(PageTable::default()),
                    bos: std::collections::BTreeMap::new(),
                    doorbells: None,
                    doorbell_bitmap: doorbell::initial_bitmap(device.target()),
                    queue_count: 0,
                    evicted: false,
                    interrupts: Arc::new(ProcessInterrupts::new(weak.clone(), device.index)),
                    trap_handler: (0, 0),
                    scratch_backing_va: 0,
                    memory_policy: (0, 0, 0),
                    reserved_memory: None,
                })
                .collect();
            Self {
                pid,
                shared,
                state: Mutex::new(ProcessState {
                    pdds,
                    queues: std::collections::BTreeMap::new(),
                    xnack_enabled: false,
                    runtime: RuntimeState::default(),
                    signal_handle: 0,
                }),
                events: Mutex::new(EventTable::new()),
                event_wake: Condvar::new(),
                exited: AtomicBool::new(false),
                counters: ProcessCounters::default(),
            }
        })
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, ProcessState> {
        lock(&self.state)
    }

    pub(crate) fn events(&self) -> MutexGuard<'_, EventTable> {
        lock(&self.events)
    }

    /// Whether the process has exited (its files answer EBADF).
    pub(crate) fn has_exited(&self) -> bool {
        self.exited.load(Ordering::Acquire)
    }

    /// The index of the GPU with `gpu_id` (`kfd_process_device_data_by_id`).
    pub(crate) fn device_index(&self, gpu_id: u32) -> Option<usize> {
        self.shared.devices.iter().position(|d| d.gpu_id == gpu_id)
    }

    /// The process' page table on GPU `index`.
    pub(crate) fn page_table(&self, index: usize) -> Option<Arc<PageTable>> {
        self.state().pdds.get(index).map(|p| p.vm.clone())
    }

    /// The interrupt sink of GPU `index`.
    pub(crate) fn interrupt_sink(&self, index: usize) -> Option<Arc<ProcessInterrupts>> {
        self.state().pdds.get(index).map(|p| p.interrupts.clone())
    }

    /// ACQUIRE_VM. `drm` is the result of looking up `args.drm_fd` (`fget`): the file's DRM
    /// state, `None` if it is not a render-node file.
    pub(crate) fn acquire_vm(
        &self,
        args: AcquireVmArgs,
        drm: Result<Option<Arc<DrmFile>>, Errno>,
    ) -> Result<(), Errno> {
        // fget() failing is EINVAL, checked before anything else.
        let drm = drm.map_err(|_| Errno::EINVAL)?;
        let mut state = self.state();
        let index = self.device_index(args.gpu_id).ok_or(Errno::EINVAL)?;
        let pdd = &mut state.pdds[index];
        if let Some(bound) = &pdd.drm_file {
            return match &drm {
                Some(file) if file.id == bound.id => Ok(()),
                _ => Err(Errno::EBUSY),
            };
        }
        // amdgpu_file_to_fpriv: only an amdgpu DRM file will do (any GPU's, §11.9).
        let file = drm.ok_or(Errno::EINVAL)?;
        // A VM that is already some process' compute VM cannot be acquired again.
        file.claim_compute_vm(self.pid, index)?;
        pdd.drm_file = Some(file);
        // kfd_process_device_init_vm: the kernel maps its trap handler (CWSR is enabled by
        // default: kfd_process_device_init_cwsr_dgpu) and, on older kernels, its IB page into
        // the new compute VM. A user mapping over them fails in amdgpu_vm_bo_map (EINVAL).
        let layout = VmLayout::for_minor(self.shared.kfd_minor);
        pdd.vm
            .reserve_for_kernel(layout.cwsr_base, CWSR_TBA_TMA_SIZE);
        if layout.ib_base != 0 {
            pdd.vm.reserve_for_kernel(layout.ib_base, 4096);
        }
        Ok(())
    }

    /// GET_PROCESS_APERTURES_NEW.
    pub(crate) fn get_process_apertures_new(
        &self,
        args: &mut GetProcessAperturesNewArgs,
    ) -> Result<(), Errno> {
        let n_pdds = self.shared.devices.len() as u32;
        if args.num_of_nodes == 0 {
            args.num_of_nodes = n_pdds;
            return Ok(());
        }
        let bytes = u64::from(args.num_of_nodes) * size_of::<ProcessDeviceApertures>() as u64;
        if bytes > KMALLOC_MAX_SIZE {
            return Err(Errno::ENOMEM);
        }
        let filled = n_pdds.min(args.num_of_nodes);
        let apertures: Vec<ProcessDeviceApertures> = self.shared.devices[..filled as usize]
            .iter()
            .map(|d| apertures_of(d, self.shared.kfd_minor))
            .collect();
        args.num_of_nodes = filled;
        user_memory::write_bytes(args.kfd_process_device_apertures_ptr, apertures.as_bytes())
    }

    /// The deprecated GET_PROCESS_APERTURES: at most 7 entries, in the struct itself.
    pub(crate) fn get_process_apertures_old(&self, data: &mut [u8]) {
        const MAX_NODES: usize = 7;
        let entry = size_of::<ProcessDeviceApertures>();
        let mut count = 0u32;
        for device in self.shared.devices.iter().take(MAX_NODES) {
            let at = count as usize * entry;
            data[at..at + entry]
                .copy_from_slice(apertures_of(device, self.shared.kfd_minor).as_bytes());
            count += 1;
        }
        let at = MAX_NODES * entry;
        data[at..at + 4].copy_from_slice(&count.to_ne_bytes());
    }

    /// SET_MEMORY_POLICY.
    pub(crate) fn set_memory_policy(&self, args: &SetMemoryPolicyArgs) -> Result<(), Errno> {
        let valid = |p: u32| p == CachePolicy::COHERENT.0 || p == CachePolicy::NONCOHERENT.0;
        if !valid(args.default_policy) || !valid(args.alternate_policy) {
            return Err(Errno::EINVAL);
        }
        let mut state = self.state();
        let index = self.device_index(args.gpu_id).ok_or(Errno::EINVAL)?;
        let pdd = &mut state.pdds[index];
        if !pdd.bound() {
            return Err(Errno::ESRCH);
        }
        let misc = if self.shared.kfd_minor >= 18 {
            args.misc_process_flag
        } else {
            0
        };
        // On GFX9+ the aperture arguments program nothing; the policy is recorded.
        pdd.memory_policy = (args.default_policy, args.alternate_policy, misc);
        Ok(())
    }

    /// SET_XNACK_MODE. GC 9.4.2 and 9.4.3 support XNACK per process; the default is off
    /// (amdgpu's `noretry` defaults to 1 on these parts).
    pub(crate) fn set_xnack_mode(&self, args: &mut SetXnackModeArgs) -> Result<(), Errno> {
        let mut state = self.state();
        if args.xnack_enabled < 0 {
            args.xnack_enabled = i32::from(state.xnack_enabled);
            return Ok(());
        }
        if !state.queues.is_empty() {
            return Err(Errno::EBUSY);
        }
        state.xnack_enabled = args.xnack_enabled != 0;
        Ok(())
    }

    /// RUNTIME_ENABLE: only records the runtime's state (no debugger is ever attached).
    pub(crate) fn runtime_enable(&self, args: &RuntimeEnableArgs) -> Result<(), Errno> {
        let mut state = self.state();
        if args.mode_mask & KFD_RUNTIME_ENABLE_MODE_ENABLE_MASK != 0 {
            if state.runtime.enabled {
                return Err(Errno::EBUSY);
            }
            if state.pdds.iter().any(|p| p.queue_count > 0) {
                return Err(Errno::EEXIST);
            }
            state.runtime = RuntimeState { enabled: true };
        } else {
            state.runtime = RuntimeState::default();
        }
        Ok(())
    }

    /// GET_CLOCK_COUNTERS: an unknown gpu_id is not an error (GPU counter 0).
    pub(crate) fn get_clock_counters(&self, args: &mut GetClockCountersArgs) {
        args.gpu_clock_counter = if self.device_index(args.gpu_id).is_some() {
            crate::gpu::clock::gpu_timestamp()
        } else {
            0
        };
        args.cpu_clock_counter = crate::gpu::clock::monotonic_raw_ns();
        args.system_clock_counter = crate::gpu::clock::boottime_ns();
        args.system_clock_freq = 1_000_000_000;
    }

    /// SET_TRAP_HANDLER (recorded; the simulated waves run without a trap handler).
    pub(crate) fn set_trap_handler(&self, args: &SetTrapHandlerArgs) -> Result<(), Errno> {
        let mut state = self.state();
        let index = self.device_index(args.gpu_id).ok_or(Errno::EINVAL)?;
        let pdd = &mut state.pdds[index];
        if !pdd.bound() {
            return Err(Errno::ESRCH);
        }
        pdd.trap_handler = (args.tba_addr, args.tma_addr);
        Ok(())
    }

    /// SET_SCRATCH_BACKING_VA (recorded; with HWS the kernel programs nothing).
    pub(crate) fn set_scratch_backing_va(
        &self,
        args: &SetScratchBackingVaArgs,
    ) -> Result<(), Errno> {
        let mut state = self.state();
        let index = self.device_index(args.gpu_id).ok_or(Errno::EINVAL)?;
        let pdd = &mut state.pdds[index];
        if !pdd.bound() {
            return Err(Errno::ENODEV);
        }
        pdd.scratch_backing_va = args.va_addr;
        Ok(())
    }

    /// AVAILABLE_MEMORY.
    pub(crate) fn available_memory(&self, args: &mut GetAvailableMemoryArgs) -> Result<(), Errno> {
        let index = self.device_index(args.gpu_id).ok_or(Errno::EINVAL)?;
        args.available = self.shared.devices[index].vram.available();
        Ok(())
    }

    /// The simulated process exits: everything the kernel frees at mm release is freed
    /// (queues stopped and destroyed, BOs unmapped and freed, events destroyed with their
    /// waiters woken, DRM file references dropped).
    pub(crate) fn exit(&self) {
        self.exited.store(true, Ordering::Release);
        let runners = {
            let mut state = self.state();
            let queues = std::mem::take(&mut state.queues);
            queues
                .into_values()
                .filter_map(|queue| queue.into_runner(&self.shared.devices))
                .collect::<Vec<_>>()
        };
        for runner in &runners {
            runner.stop();
        }
        drop(runners);
        let (bos, files) = {
            let mut state = self.state();
            let mut bos = Vec::new();
            let mut files = Vec::new();
            for pdd in &mut state.pdds {
                pdd.vm.clear();
                bos.extend(std::mem::take(&mut pdd.bos).into_values());
                files.extend(pdd.drm_file.take());
                pdd.doorbells = None;
                pdd.queue_count = 0;
                pdd.reserved_memory = None;
            }
            state.signal_handle = 0;
            (bos, files)
        };
        for bo in &bos {
            bo.revoke();
        }
        for file in &files {
            file.release_compute_vm();
        }
        drop((bos, files));
        self.events().destroy_all();
        self.event_wake.notify_all();
        self.counters.bos.store(0, Ordering::Release);
        self.counters.queues.store(0, Ordering::Release);
        self.counters.events.store(0, Ordering::Release);
    }
}

fn apertures_of(device: &Device, kfd_minor: u32) -> ProcessDeviceApertures {
    ProcessDeviceApertures {
        lds_base: LDS_BASE,
        lds_limit: LDS_BASE | 0xFFFF_FFFF,
        scratch_base: SCRATCH_BASE,
        scratch_limit: SCRATCH_BASE | 0xFFFF_FFFF,
        gpuvm_base: VmLayout::for_minor(kfd_minor).gpuvm_base,
        gpuvm_limit: GPUVM_LIMIT,
        gpu_id: device.gpu_id,
        pad: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn idr_hands_out_the_lowest_free_id() {
        let mut map: BTreeMap<u32, u8> = BTreeMap::new();
        assert_eq!(lowest_free(&map, 0), Some(0));
        map.insert(0, 0u8);
        map.insert(1, 0);
        map.insert(3, 0);
        assert_eq!(lowest_free(&map, 0), Some(2));
        assert_eq!(lowest_free(&map, 1), Some(2));
        assert_eq!(lowest_free(&map, 3), Some(4));
        assert_eq!(lowest_free(&map, 10), Some(10));
    }
}
