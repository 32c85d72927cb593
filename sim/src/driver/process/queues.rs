//! User-mode queues: CREATE_QUEUE, DESTROY_QUEUE, UPDATE_QUEUE, SET_CU_MASK,
//! GET_QUEUE_WAVE_STATE and ALLOC_QUEUE_GWS, with the argument checks of
//! `set_queue_properties_from_user`, the buffer checks of `kfd_queue_acquire_buffers` and the
//! limits of `pqm_create_queue` (kfd.md §5, §10, §11.1–3, §11.5).
//!
//! Compute queues (AQL and PM4) get a command processor from the machine's [`QueueEngine`],
//! told which format their ring holds; SDMA queues a copy engine from its SDMA engine (on the
//! engine and queue `allocate_sdma_queue` picks, with that queue's fixed doorbell).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use kfd::Errno;
use kfd::abi::mmap_offset::{DOORBELL_SIZE, DOORBELL_SLICE_SIZE, MmapType, encode};
use kfd::abi::{
    CreateQueueArgs, GetQueueWaveStateArgs, KFD_MAX_QUEUE_PERCENTAGE, KFD_MAX_QUEUE_PRIORITY,
    KFD_MIN_QUEUE_RING_SIZE, QueueType, SetCuMaskArgs, UpdateQueueArgs,
};

use super::doorbell::{QueueRunner, allocate_index, release_index};
use super::memory::adjust_queue_refs;
use super::{Pdd, Process, lowest_free};
use crate::driver::device::Device;
use crate::driver::gpu_vm::BoKey;
use crate::driver::user_memory;
use crate::gpu::queue::{QueueSpec, RingFormat};

/// `KFD_MAX_NUM_OF_QUEUES_PER_PROCESS`: queue ids are slots of a per-process bitmap this big.
const MAX_QUEUES_PER_PROCESS: u32 = 1024;
/// The end of the user address space (`TASK_SIZE_MAX` for 4-level paging on x86-64), which
/// `access_ok` checks against.
const USER_ADDRESS_END: u64 = 0x7FFF_FFFF_F000;

/// What kind of queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueueKind {
    ComputeAql,
    ComputePm4,
    Sdma,
    SdmaXgmi,
    SdmaByEngine,
}

impl QueueKind {
    fn is_compute(self) -> bool {
        matches!(self, Self::ComputeAql | Self::ComputePm4)
    }

    /// The engines an SDMA queue of this kind takes a slot on (SDMA_BY_ENG_ID: those of the
    /// engine asked for).
    fn sdma_engines(self, engine_id: u32, pcie_engines: u32) -> Option<SdmaEngines> {
        match self {
            Self::Sdma => Some(SdmaEngines::Pcie),
            Self::SdmaByEngine if engine_id < pcie_engines => Some(SdmaEngines::Pcie),
            Self::SdmaXgmi | Self::SdmaByEngine => Some(SdmaEngines::Xgmi),
            Self::ComputeAql | Self::ComputePm4 => None,
        }
    }
}

/// The two kinds of SDMA engine, each with its own queue slots per device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SdmaEngines {
    Pcie,
    Xgmi,
}

/// Where an SDMA queue runs: its engine (PCIe engines first, then XGMI ones, as
/// `sdma_engine_id` counts them) and its queue on that engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SdmaSlot {
    engines: SdmaEngines,
    /// `sdma_id`: the bit of the device's bitmap.
    id: u32,
    engine: u32,
    queue: u32,
}

/// The doorbell of SDMA queue `queue` on `engine`: fixed per engine (`allocate_doorbell`:
/// the engine's doorbell, the queue's pair index, odd queues in the +512 mirror). The per-engine
/// bases are Vega20's layout (`AMDGPU_VEGA20_DOORBELL_sDMA_ENGINE0` = 0x100, engines 0xA
/// apart), used for GC 9.4.2 and, as far as read, 9.4.3; unconfirmed on hardware. They lie in
/// the reserved range compute queues never get.
fn sdma_doorbell_index(engine: u32, queue: u32) -> u32 {
    const SDMA_ENGINE0_DOORBELL: u32 = 0x100;
    const SDMA_ENGINE_DOORBELL_STRIDE: u32 = 0xA;
    const MIRROR_OFFSET: u32 = 512;
    SDMA_ENGINE0_DOORBELL
        + engine * SDMA_ENGINE_DOORBELL_STRIDE
        + (queue >> 1)
        + (queue & 1) * MIRROR_OFFSET
}

/// Take a queue slot on the device's `engines` (`allocate_sdma_queue`): the lowest free
/// `sdma_id` (engine = id % engines, queue = id / engines), or one on `only_engine` for
/// SDMA_BY_ENG_ID; ENOMEM when every queue of every such engine is in use.
fn claim_sdma_slot(
    device: &Device,
    engines: SdmaEngines,
    only_engine: Option<u32>,
) -> Result<SdmaSlot, Errno> {
    let mut slots = device.sdma.lock();
    let pcie = device.config.sdma_engines;
    let (used, engine_count, first_engine) = match engines {
        SdmaEngines::Pcie => (&mut slots.pcie_used, pcie, 0),
        SdmaEngines::Xgmi => (&mut slots.xgmi_used, device.config.sdma_xgmi_engines, pcie),
    };
    let total = (engine_count * device.config.sdma_queues_per_engine).min(128);
    let id = (0..total)
        .filter(|&id| only_engine.is_none_or(|e| first_engine + id % engine_count == e))
        .find(|&id| *used & (1u128 << id) == 0)
        .ok_or(Errno::ENOMEM)?;
    *used |= 1u128 << id;
    Ok(SdmaSlot {
        engines,
        id,
        engine: first_engine + id % engine_count,
        queue: id / engine_count,
    })
}

/// Give a slot taken by [`claim_sdma_slot`] back.
fn release_sdma_slot(device: &Device, slot: SdmaSlot) {
    let mut slots = device.sdma.lock();
    let used = match slot.engines {
        SdmaEngines::Pcie => &mut slots.pcie_used,
        SdmaEngines::Xgmi => &mut slots.xgmi_used,
    };
    *used &= !(1u128 << slot.id);
}

/// One queue.
pub(crate) struct Queue {
    pub device: usize,
    pub kind: QueueKind,
    pub ring_va: u64,
    pub ring_size: u64,
    pub percentage: u32,
    pub priority: u32,
    pub doorbell_index: u32,
    /// The SDMA engine and queue an SDMA queue holds.
    sdma: Option<SdmaSlot>,
    /// BO mappings the queue holds (`kfd_queue_acquire_buffers`): they cannot be unmapped.
    buffers: Vec<BoKey>,
    runner: Option<Arc<QueueRunner>>,
    pub cu_mask: Vec<u32>,
    /// `ctl_stack_size` and `ctx_save_restore_size` as CREATE_QUEUE got them (the MQD's
    /// control-stack size and the per-XCC stride of the save area).
    ctl_stack_size: u32,
    cwsr_area_size: u32,
    /// DESTROY_QUEUE is stopping the processor; the queue is gone for every other ioctl.
    destroying: bool,
}

impl Queue {
    /// QUEUE_IS_ACTIVE: a ring, a size and a non-zero percentage.
    fn is_active(&self) -> bool {
        self.ring_va != 0 && self.ring_size != 0 && self.percentage > 0
    }

    /// The percentage the command processor runs with (0 while inactive or evicted).
    fn effective_percentage(&self, evicted: bool) -> u32 {
        if self.is_active() && !evicted {
            self.percentage
        } else {
            0
        }
    }

    /// The processor, to stop it (process teardown); an SDMA queue's engine slot goes back
    /// to `devices[queue.device]` first.
    pub(crate) fn into_runner(self, devices: &[Arc<Device>]) -> Option<Arc<QueueRunner>> {
        if let (Some(slot), Some(device)) = (self.sdma, devices.get(self.device)) {
            release_sdma_slot(device, slot);
        }
        self.runner
    }
}

fn access_ok(address: u64, len: u64) -> bool {
    address
        .checked_add(len)
        .is_some_and(|end| end <= USER_ADDRESS_END)
}

/// The checks CREATE_QUEUE and UPDATE_QUEUE share, in the kernel's order (it repeats them in
/// `set_queue_properties_from_user` and `kfd_ioctl_update_queue`): the percentage in bits 7:0,
/// the priority, the ring's address, a ring size that is a power of two or 0. A smaller ring
/// than `KFD_MIN_QUEUE_RING_SIZE` is raised to it in place (and copied back to the caller).
fn check_share_and_ring(
    percentage: u32,
    priority: u32,
    ring_base_address: u64,
    ring_size: &mut u32,
) -> Result<(), Errno> {
    if percentage & 0xFF > KFD_MAX_QUEUE_PERCENTAGE || priority > KFD_MAX_QUEUE_PRIORITY {
        return Err(Errno::EINVAL);
    }
    if ring_base_address != 0 && !access_ok(ring_base_address, 8) {
        return Err(Errno::EFAULT);
    }
    if !ring_size.is_power_of_two() && *ring_size != 0 {
        return Err(Errno::EINVAL);
    }
    *ring_size = (*ring_size).max(KFD_MIN_QUEUE_RING_SIZE);
    Ok(())
}

/// The properties CREATE_QUEUE validates before looking at the GPU
/// (`set_queue_properties_from_user`).
fn validate_create_args(args: &mut CreateQueueArgs, kfd_minor: u32) -> Result<QueueKind, Errno> {
    check_share_and_ring(
        args.queue_percentage,
        args.queue_priority,
        args.ring_base_address,
        &mut args.ring_size,
    )?;
    if !access_ok(args.read_pointer_address, 4) || !access_ok(args.write_pointer_address, 4) {
        return Err(Errno::EFAULT);
    }
    if args.eop_buffer_address != 0 && !access_ok(args.eop_buffer_address, 4) {
        return Err(Errno::EFAULT);
    }
    if args.ctx_save_restore_address != 0 && !access_ok(args.ctx_save_restore_address, 4) {
        return Err(Errno::EFAULT);
    }
    match QueueType(args.queue_type) {
        QueueType::COMPUTE_AQL => Ok(QueueKind::ComputeAql),
        QueueType::COMPUTE => Ok(QueueKind::ComputePm4),
        QueueType::SDMA => Ok(QueueKind::Sdma),
        QueueType::SDMA_XGMI => Ok(QueueKind::SdmaXgmi),
        QueueType::SDMA_BY_ENG_ID if kfd_minor >= 17 => Ok(QueueKind::SdmaByEngine),
        _ => Err(Errno::ENOTSUPP),
    }
}

/// `kfd_queue_acquire_buffers`: the BO mappings the queue's buffers must be.
fn acquire_buffers(
    pdd: &Pdd,
    args: &CreateQueueArgs,
    kind: QueueKind,
) -> Result<Vec<BoKey>, Errno> {
    let page = 4096;
    let mut buffers = vec![
        pdd.queue_buffer(args.write_pointer_address, page)?,
        pdd.queue_buffer(args.read_pointer_address, page)?,
        pdd.queue_buffer(args.ring_base_address, u64::from(args.ring_size))?,
    ];
    if !kind.is_compute() {
        return Ok(buffers);
    }
    let sizes = pdd.device.sizes;
    if args.eop_buffer_address != 0 {
        if args.eop_buffer_size != u64::from(sizes.eop_buffer_size) {
            return Err(Errno::EINVAL);
        }
        buffers.push(pdd.queue_buffer(args.eop_buffer_address, args.eop_buffer_size)?);
    }
    if args.ctl_stack_size != sizes.ctl_stack_size {
        return Err(Errno::EINVAL);
    }
    if args.ctx_save_restore_size < sizes.cwsr_size {
        return Err(Errno::EINVAL);
    }
    let total = sizes
        .cwsr_mapping_size(args.ctx_save_restore_size)
        .ok_or(Errno::EINVAL)?;
    // The SVM fallback (a GPU_ALWAYS_MAPPED range) does not exist in the simulator.
    buffers.push(pdd.queue_buffer(args.ctx_save_restore_address, u64::from(total))?);
    Ok(buffers)
}

impl Process {
    /// CREATE_QUEUE.
    pub(crate) fn create_queue(&self, args: &mut CreateQueueArgs) -> Result<(), Errno> {
        let kind = validate_create_args(args, self.shared.kfd_minor)?;
        let mut state = self.state();
        let index = self.device_index(args.gpu_id).ok_or(Errno::EINVAL)?;
        let pdd = &mut state.pdds[index];
        if !pdd.bound() {
            return Err(Errno::ESRCH);
        }
        let device = pdd.device.clone();
        if kind == QueueKind::SdmaByEngine {
            let max = device.config.sdma_engines + device.config.sdma_xgmi_engines;
            if args.sdma_engine_id >= max {
                return Err(Errno::EINVAL);
            }
        }
        let slice = pdd.doorbell_slice(&self.shared.memory)?;
        let buffers = acquire_buffers(pdd, args, kind)?;
        // pqm_create_queue.
        if pdd.queue_count >= device.max_queues_per_process {
            return Err(Errno::ENOSPC);
        }
        let queue_id = lowest_free(&state.queues, 0)
            .filter(|&id| id < MAX_QUEUES_PER_PROCESS)
            .ok_or(Errno::ENOMEM)?;
        let sdma = match kind.sdma_engines(args.sdma_engine_id, device.config.sdma_engines) {
            Some(engines) => {
                let only = (kind == QueueKind::SdmaByEngine).then_some(args.sdma_engine_id);
                Some(claim_sdma_slot(&device, engines, only)?)
            }
            None => None,
        };
        let pdd = &mut state.pdds[index];
        let doorbell_index = match sdma {
            Some(slot) => sdma_doorbell_index(slot.engine, slot.queue),
            None => allocate_index(&mut pdd.doorbell_bitmap)?,
        };
        let evicted = pdd.evicted;
        let mut queue = Queue {
            device: index,
            kind,
            ring_va: args.ring_base_address,
            ring_size: u64::from(args.ring_size),
            percentage: args.queue_percentage & 0xFF,
            priority: args.queue_priority,
            doorbell_index,
            sdma,
            buffers,
            runner: None,
            cu_mask: Vec::new(),
            ctl_stack_size: args.ctl_stack_size,
            cwsr_area_size: args.ctx_save_restore_size,
            destroying: false,
        };
        let engine = match kind {
            QueueKind::ComputeAql | QueueKind::ComputePm4 => &self.shared.engine,
            QueueKind::Sdma | QueueKind::SdmaXgmi | QueueKind::SdmaByEngine => {
                &self.shared.sdma_engine
            }
        };
        let format = match kind {
            QueueKind::ComputePm4 => RingFormat::Pm4,
            _ => RingFormat::Aql,
        };
        {
            let spec = QueueSpec {
                queue_id,
                gpu_id: device.gpu_id,
                target: device.target(),
                format,
                lds_bytes_per_workgroup: device.lds_bytes_per_workgroup(),
                xccs: device.layout.xccs,
                ring_va: queue.ring_va,
                ring_bytes: queue.ring_size,
                read_pointer_va: args.read_pointer_address,
                write_pointer_va: args.write_pointer_address,
                doorbell: slice.doorbell_ptr(doorbell_index),
                percentage: queue.effective_percentage(evicted),
                priority: queue.priority,
                vm: pdd.vm.clone(),
                interrupts: pdd.interrupts.clone(),
                shader: device.config.shader.clone(),
            };
            // Starting a processor does not wait for it, so it may happen under the lock.
            let runner = Arc::new(QueueRunner::new(engine.start(spec)));
            slice.attach(doorbell_index, runner.clone());
            queue.runner = Some(runner);
        }
        pdd.queue_count += 1;
        for key in queue.buffers.clone() {
            adjust_queue_refs(&mut state.pdds, index, key, 1);
        }
        state.queues.insert(queue_id, queue);
        self.counters.queues.fetch_add(1, Ordering::AcqRel);
        drop(state);
        args.queue_id = queue_id;
        args.doorbell_offset = encode(
            MmapType::Doorbell,
            args.gpu_id,
            (doorbell_index as usize * DOORBELL_SIZE % DOORBELL_SLICE_SIZE) as u64,
        );
        Ok(())
    }

    /// DESTROY_QUEUE: stops the processor (outside every lock), then releases the queue's
    /// doorbell and buffers.
    pub(crate) fn destroy_queue(&self, queue_id: u32) -> Result<(), Errno> {
        let runner = {
            let mut state = self.state();
            let queue = state
                .queues
                .get_mut(&queue_id)
                .filter(|q| !q.destroying)
                .ok_or(Errno::EINVAL)?;
            queue.destroying = true;
            queue.runner.clone()
        };
        if let Some(runner) = &runner {
            runner.stop();
        }
        let mut state = self.state();
        let Some(queue) = state.queues.remove(&queue_id) else {
            return Ok(());
        };
        let pdd = &mut state.pdds[queue.device];
        pdd.queue_count = pdd.queue_count.saturating_sub(1);
        if let Some(slice) = &pdd.doorbells {
            slice.detach(queue.doorbell_index);
        }
        match queue.sdma {
            Some(slot) => release_sdma_slot(&pdd.device, slot),
            None => release_index(&mut pdd.doorbell_bitmap, queue.doorbell_index),
        }
        for key in &queue.buffers {
            adjust_queue_refs(&mut state.pdds, queue.device, *key, -1);
        }
        self.counters.queues.fetch_sub(1, Ordering::AcqRel);
        drop(state);
        drop(runner);
        Ok(())
    }

    /// UPDATE_QUEUE.
    pub(crate) fn update_queue(&self, args: &mut UpdateQueueArgs) -> Result<(), Errno> {
        check_share_and_ring(
            args.queue_percentage,
            args.queue_priority,
            args.ring_base_address,
            &mut args.ring_size,
        )?;
        let (runner, ring, size, percentage, priority) = {
            let mut state = self.state();
            let queue = state
                .queues
                .get(&args.queue_id)
                .filter(|q| !q.destroying)
                .ok_or(Errno::EFAULT)?;
            let device = queue.device;
            // A NULL ring disables the queue; otherwise the new ring must be a GPU mapping
            // of exactly ring_size bytes (EFAULT, §11.5).
            let new_ring = if args.ring_base_address != 0 {
                let key = state.pdds[device]
                    .queue_buffer(args.ring_base_address, u64::from(args.ring_size))
                    .map_err(|_| Errno::EFAULT)?;
                Some(key)
            } else {
                None
            };
            let evicted = state.pdds[device].evicted;
            let queue = state.queues.get_mut(&args.queue_id).ok_or(Errno::EFAULT)?;
            let mut swap = None;
            if let Some(key) = new_ring {
                // The ring is the third buffer (after wptr and rptr).
                if let Some(old) = queue.buffers.get_mut(2) {
                    swap = Some((*old, key));
                    *old = key;
                }
            }
            queue.ring_va = args.ring_base_address;
            queue.ring_size = u64::from(args.ring_size);
            queue.percentage = args.queue_percentage & 0xFF;
            queue.priority = args.queue_priority;
            let out = (
                queue.runner.clone(),
                queue.ring_va,
                queue.ring_size,
                queue.effective_percentage(evicted),
                queue.priority,
            );
            if let Some((old, new)) = swap {
                adjust_queue_refs(&mut state.pdds, device, new, 1);
                adjust_queue_refs(&mut state.pdds, device, old, -1);
            }
            out
        };
        if let Some(runner) = runner {
            runner.update(ring, size, percentage, priority);
        }
        Ok(())
    }

    /// SET_CU_MASK (recorded; the command-processor contract has no CU mask).
    pub(crate) fn set_cu_mask(&self, args: &SetCuMaskArgs) -> Result<(), Errno> {
        const MAX_CU_MASK_BITS: u32 = 1024;
        if args.num_cu_mask % 32 != 0 || args.num_cu_mask == 0 {
            return Err(Errno::EINVAL);
        }
        let bits = args.num_cu_mask.min(MAX_CU_MASK_BITS);
        let raw = user_memory::read_bytes(args.cu_mask_ptr, (bits / 32 * 4) as usize)?;
        let mask: Vec<u32> = raw
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let mut state = self.state();
        let queue = state
            .queues
            .get_mut(&args.queue_id)
            .filter(|q| !q.destroying)
            .ok_or(Errno::EFAULT)?;
        queue.cu_mask = mask;
        Ok(())
    }

    /// GET_QUEUE_WAVE_STATE (`get_wave_state` of the DQM and the v9 MQD manager): only for a
    /// compute queue that is not active (suspended, evicted or without a ring; an active
    /// queue's MQD is the CP's, EINVAL). For each XCC the 16-byte `wave_state` part of
    /// `kfd_context_save_area_header` goes to `ctl_stack_address` + XCC × the save-area size.
    /// The simulator never saves waves, so every control stack is empty: its offset is the
    /// control-stack size (the MQD's initial value) and both used sizes are 0.
    pub(crate) fn get_queue_wave_state(
        &self,
        args: &mut GetQueueWaveStateArgs,
    ) -> Result<(), Errno> {
        let state = self.state();
        let queue = state
            .queues
            .get(&args.queue_id)
            .filter(|q| !q.destroying)
            .ok_or(Errno::EFAULT)?;
        let pdd = &state.pdds[queue.device];
        if !queue.kind.is_compute() || queue.effective_percentage(pdd.evicted) != 0 {
            return Err(Errno::EINVAL);
        }
        let offset = queue.ctl_stack_size;
        // control_stack_offset, control_stack_size, wave_state_offset, wave_state_size.
        let header = [offset, 0, offset, 0];
        for xcc in 0..u64::from(pdd.device.sizes.xccs) {
            let at = args
                .ctl_stack_address
                .wrapping_add(xcc * u64::from(queue.cwsr_area_size));
            user_memory::write(at, &header)?;
        }
        args.ctl_stack_used_size = 0;
        args.save_area_used_size = 0;
        Ok(())
    }

    /// ALLOC_QUEUE_GWS: the simulated GPUs have no global wave sync resources.
    pub(crate) fn alloc_queue_gws(&self, queue_id: u32) -> Result<(), Errno> {
        let state = self.state();
        state
            .queues
            .get(&queue_id)
            .filter(|q| !q.destroying)
            .ok_or(Errno::EINVAL)?;
        Err(Errno::ENODEV)
    }

    /// Stop the queues of GPU `device` without destroying them (`kfd_dqm_evict_pasid`); they
    /// stay stopped.
    pub(crate) fn evict_queues(&self, device: usize) {
        let runners: Vec<(Arc<QueueRunner>, u64, u64, u32)> = {
            let mut state = self.state();
            if let Some(pdd) = state.pdds.get_mut(device) {
                pdd.evicted = true;
            }
            state
                .queues
                .values()
                .filter(|q| q.device == device)
                .filter_map(|q| {
                    q.runner
                        .clone()
                        .map(|r| (r, q.ring_va, q.ring_size, q.priority))
                })
                .collect()
        };
        for (runner, ring, size, priority) in runners {
            runner.update(ring, size, 0, priority);
        }
    }
}
