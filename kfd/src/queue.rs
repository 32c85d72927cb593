//! AQL compute queues (kfd.md §5, aql.md §2.6).
//!
//! A queue needs, as the kernel checks them at CREATE_QUEUE (kernels with
//! `kfd_queue_acquire_buffers`): a ring that is exactly one GPU mapping of `ring_size` bytes; a
//! read pointer and a write pointer, each inside a GPU mapping exactly one page long (here one
//! page holds both: the caller puts its `amd_queue_t` there and names the two fields' offsets);
//! an end-of-pipe buffer of the node's EOP size; and a context save/restore area of the node's
//! CWSR sizes. This module allocates all of them, sized from the topology, and creates the
//! queue in two steps so the caller can initialise the ring and the pointer page in between.
//!
//! This module knows nothing of AQL packets or the `amd_queue_t` layout (the `aql` crate does).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::abi::sysfs::Capability;
use crate::abi::{CreateQueueArgs, QueueType, UpdateQueueArgs};
use crate::doorbell::{Doorbell, split_doorbell_offset};
use crate::driver::Kfd;
use crate::error::{Error, Result};
use crate::ioctl::calls as ioctls;
use crate::memory::{Allocation, BufferObject, GpuMapping, MemoryKind};
use crate::queue_sizes::CwsrSizes;
use crate::retry::restarting;

/// Priority the kernel treats as normal (the middle of 0..=15; tinygrad uses 7).
pub const NORMAL_PRIORITY: u32 = 7;
/// Full time-slice share.
pub const FULL_PERCENTAGE: u32 = 100;

/// Everything a queue is made of, allocated and mapped on its GPU, before the queue exists.
#[derive(Debug)]
pub struct QueueMemory {
    kfd: Arc<Kfd>,
    gpu_id: u32,
    ring: GpuMapping,
    pointer_page: GpuMapping,
    eop: GpuMapping,
    cwsr: GpuMapping,
    cwsr_sizes: CwsrSizes,
    eop_size: u32,
}

/// How to create the queue from its memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueConfig {
    /// Byte offset of the 64-bit read index in the pointer page (for AQL,
    /// `offsetof(amd_queue_t, read_dispatch_id)`).
    pub read_pointer_offset: u64,
    /// Byte offset of the 64-bit write index in the pointer page (for AQL,
    /// `offsetof(amd_queue_t, write_dispatch_id)`).
    pub write_pointer_offset: u64,
    /// 0..=15 (the kernel refuses more with EINVAL).
    pub priority: u32,
    /// Time-slice share 0..=100 in bits 7:0 (0 suspends the queue).
    pub percentage: u32,
}

/// A live queue. Dropping it destroys the queue, then frees its memory.
#[derive(Debug)]
pub struct Queue {
    /// `Some` until drop; `None` if it must be leaked (the queue could not be destroyed).
    memory: Option<QueueMemory>,
    queue_id: u32,
    doorbell_offset: u64,
    doorbell: Doorbell,
}

impl Kfd {
    /// Allocate the memory of an AQL queue on GPU `gpu_id` with a ring of `ring_size` bytes
    /// (a power of two, at least a page) in `ring_kind` memory (host-accessible; uncached GTT
    /// is what the CP and the CPU both see coherently).
    pub fn allocate_queue_memory(
        self: &Arc<Self>,
        gpu_id: u32,
        ring_size: u32,
        ring_kind: MemoryKind,
    ) -> Result<QueueMemory> {
        self.check_process()?;
        let gpu = self.gpu(gpu_id)?;
        let version = gpu.gfx_version();
        let caps = gpu.node().properties.capability();
        if version.major < 9 || caps.doorbell_type() != Capability::DOORBELL_TYPE_2_0 {
            return Err(Error::Unsupported(format!(
                "AQL queues on {version} (doorbell type {}): only GFX9 and later with 64-bit \
                 doorbells are supported",
                caps.doorbell_type()
            )));
        }
        let page = self.address_space().page_size();
        if !ring_size.is_power_of_two() || u64::from(ring_size) < page {
            return Err(Error::InvalidArgument(format!(
                "ring size {ring_size:#x}: the kernel needs a power of two that fills whole \
                 {page:#x}-byte pages"
            )));
        }
        if !ring_kind.host_accessible()
            || matches!(ring_kind, MemoryKind::Doorbell | MemoryKind::MmioRemap)
        {
            return Err(Error::InvalidArgument(format!(
                "a ring in {ring_kind} memory: the CPU must write it"
            )));
        }
        let cwsr_sizes = gpu
            .cwsr_sizes()
            .map_err(|e| Error::Unsupported(format!("queues on GPU {gpu_id:#x}: {e}")))?;
        let eop_size = gpu.eop_buffer_size().ok_or_else(|| {
            Error::Unsupported(format!("queues on GPU {gpu_id:#x}: no EOP buffer size"))
        })?;
        let on_gpu = [gpu_id];
        // GPU-writable: kernels that enqueue work themselves write packets into the ring.
        let ring = self
            .allocate(gpu_id, Allocation::new(ring_kind, u64::from(ring_size)))?
            .map_to(&on_gpu)?;
        let pointer_page = self
            .allocate(gpu_id, Allocation::new(MemoryKind::GttUncached, page))?
            .map_to(&on_gpu)?;
        let eop = self
            .allocate(
                gpu_id,
                Allocation::new(MemoryKind::VramPrivate, u64::from(eop_size)).executable(),
            )?
            .map_to(&on_gpu)?;
        let cwsr = self
            .allocate(
                gpu_id,
                Allocation::new(MemoryKind::VramPrivate, cwsr_sizes.total_size),
            )?
            .map_to(&on_gpu)?;
        Ok(QueueMemory {
            kfd: Arc::clone(self),
            gpu_id,
            ring,
            pointer_page,
            eop,
            cwsr,
            cwsr_sizes,
            eop_size,
        })
    }
}

impl QueueMemory {
    /// The GPU.
    pub fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    /// The ring.
    pub fn ring(&self) -> &Arc<BufferObject> {
        self.ring.buffer()
    }

    /// The one-page buffer holding the read and write indices (and, for AQL, the whole
    /// `amd_queue_t`).
    pub fn pointer_page(&self) -> &Arc<BufferObject> {
        self.pointer_page.buffer()
    }

    /// The end-of-pipe buffer.
    pub fn eop_buffer(&self) -> &Arc<BufferObject> {
        self.eop.buffer()
    }

    /// The context save/restore area.
    pub fn cwsr_area(&self) -> &Arc<BufferObject> {
        self.cwsr.buffer()
    }

    /// The CWSR sizes passed to CREATE_QUEUE.
    pub fn cwsr_sizes(&self) -> CwsrSizes {
        self.cwsr_sizes
    }

    /// CREATE_QUEUE for an AQL compute queue on this memory, then the doorbell. On failure the
    /// memory is freed.
    pub fn create_aql_queue(self, config: &QueueConfig) -> Result<Queue> {
        self.kfd.check_process()?;
        let page = self.pointer_page().size();
        for (what, offset) in [
            ("read", config.read_pointer_offset),
            ("write", config.write_pointer_offset),
        ] {
            if offset % 8 != 0 || offset.checked_add(8).is_none_or(|end| end > page) {
                return Err(Error::InvalidArgument(format!(
                    "{what} pointer offset {offset:#x} is not an aligned u64 in the \
                     {page:#x}-byte pointer page"
                )));
            }
        }
        let ring = self.ring();
        let mut args = CreateQueueArgs {
            ring_base_address: ring.va(),
            write_pointer_address: self.pointer_page().va() + config.write_pointer_offset,
            read_pointer_address: self.pointer_page().va() + config.read_pointer_offset,
            ring_size: u32::try_from(ring.size())
                .map_err(|_| Error::InvalidArgument("ring larger than 4 GiB".to_owned()))?,
            gpu_id: self.gpu_id,
            queue_type: QueueType::COMPUTE_AQL.0,
            queue_percentage: config.percentage,
            queue_priority: config.priority,
            eop_buffer_address: self.eop_buffer().va(),
            eop_buffer_size: u64::from(self.eop_size),
            ctx_save_restore_address: self.cwsr_area().va(),
            ctx_save_restore_size: self.cwsr_sizes.ctx_save_restore_size,
            ctl_stack_size: self.cwsr_sizes.ctl_stack_size,
            ..CreateQueueArgs::default()
        };
        let kfd = Arc::clone(&self.kfd);
        // SAFETY: every address names memory this QueueMemory owns and keeps mapped on the
        // GPU until after the queue is destroyed (Queue's Drop destroys it first, and leaks the
        // memory if that fails).
        restarting(|| unsafe { ioctls::create_queue(kfd.sys().as_ref(), kfd.kfd_fd(), &mut args) })
            .map_err(|e| {
                kfd.binding()
                    .ioctl_error(format!("create an AQL queue on GPU {:#x}", self.gpu_id), e)
            })?;
        kfd.live.queues.fetch_add(1, Ordering::Relaxed);
        let queue_id = args.queue_id;
        let doorbell = self.doorbell_for(args.doorbell_offset);
        let doorbell = match doorbell {
            Ok(doorbell) => doorbell,
            Err(err) => {
                let destroyed = restarting(|| {
                    ioctls::destroy_queue(kfd.sys().as_ref(), kfd.kfd_fd(), queue_id)
                });
                kfd.live.queues.fetch_sub(1, Ordering::Relaxed);
                if destroyed.is_err() {
                    // The GPU may still use the memory: never free it.
                    std::mem::forget(self);
                }
                return Err(err);
            }
        };
        Ok(Queue {
            memory: Some(self),
            queue_id,
            doorbell_offset: args.doorbell_offset,
            doorbell,
        })
    }

    fn doorbell_for(&self, doorbell_offset: u64) -> Result<Doorbell> {
        let gpu = self.kfd.gpu(self.gpu_id)?;
        let (slice_offset, in_slice) =
            split_doorbell_offset(doorbell_offset, gpu.doorbell_slice_size()).ok_or_else(|| {
                Error::Kernel(format!(
                    "CREATE_QUEUE returned doorbell offset {doorbell_offset:#x}, not a \
                         doorbell mmap offset"
                ))
            })?;
        let page = gpu.doorbell_page(self.kfd.sys(), self.kfd.kfd_fd(), slice_offset)?;
        page.doorbell(in_slice)
    }
}

impl Queue {
    fn memory(&self) -> &QueueMemory {
        // `memory` is `None` only inside Drop.
        self.memory
            .as_ref()
            .unwrap_or_else(|| unreachable!("queue memory taken before drop"))
    }

    /// The per-process queue id.
    pub fn queue_id(&self) -> u32 {
        self.queue_id
    }

    /// The GPU.
    pub fn gpu_id(&self) -> u32 {
        self.memory().gpu_id
    }

    /// The doorbell.
    pub fn doorbell(&self) -> &Doorbell {
        &self.doorbell
    }

    /// The doorbell offset CREATE_QUEUE returned.
    pub fn doorbell_offset(&self) -> u64 {
        self.doorbell_offset
    }

    /// The queue's memory.
    pub fn queue_memory(&self) -> &QueueMemory {
        self.memory()
    }

    /// UPDATE_QUEUE: new time-slice share (0 suspends) and priority, same ring.
    pub fn update(&self, percentage: u32, priority: u32) -> Result<()> {
        let memory = self.memory();
        memory.kfd.check_process()?;
        let ring = memory.ring();
        let mut args = UpdateQueueArgs {
            ring_base_address: ring.va(),
            queue_id: self.queue_id,
            ring_size: ring.size() as u32,
            queue_percentage: percentage,
            queue_priority: priority,
        };
        let kfd = &memory.kfd;
        // SAFETY: the ring is the queue's own, mapped until the queue is destroyed.
        restarting(|| unsafe { ioctls::update_queue(kfd.sys().as_ref(), kfd.kfd_fd(), &mut args) })
            .map_err(|e| {
                kfd.binding()
                    .ioctl_error(format!("update queue {}", self.queue_id), e)
            })
    }

    /// SET_CU_MASK: restrict the queue to the CUs whose bits are set (32 per word).
    pub fn set_cu_mask(&self, mask: &[u32]) -> Result<()> {
        let kfd = &self.memory().kfd;
        kfd.check_process()?;
        restarting(|| ioctls::set_cu_mask(kfd.sys().as_ref(), kfd.kfd_fd(), self.queue_id, mask))
            .map_err(|e| {
                kfd.binding()
                    .ioctl_error(format!("set the CU mask of queue {}", self.queue_id), e)
            })
    }

    /// Destroy the queue now and report failure (dropping does the same but can only record
    /// the error). If the kernel refuses, the queue's memory is never freed, since the GPU may
    /// still use it.
    pub fn destroy(mut self) -> Result<()> {
        let Some(memory) = self.memory.take() else {
            return Ok(());
        };
        match destroy_queue(&memory, self.queue_id) {
            Ok(()) => Ok(()),
            Err(error) => {
                std::mem::forget(memory);
                Err(error)
            }
        }
    }
}

/// DESTROY_QUEUE (nothing in a fork child: the queue is the parent's). The caller frees the
/// memory on success and leaks it on failure.
fn destroy_queue(memory: &QueueMemory, queue_id: u32) -> Result<()> {
    let kfd = &memory.kfd;
    kfd.live.queues.fetch_sub(1, Ordering::Relaxed);
    if !kfd.binding().is_owner_process() {
        return Ok(());
    }
    restarting(|| ioctls::destroy_queue(kfd.sys().as_ref(), kfd.kfd_fd(), queue_id)).map_err(|e| {
        kfd.binding()
            .ioctl_error(format!("destroy queue {queue_id}"), e)
    })
}

impl Drop for Queue {
    fn drop(&mut self) {
        let Some(memory) = self.memory.take() else {
            return;
        };
        // On success dropping `memory` unmaps and frees ring, pointer page, EOP and CWSR.
        if let Err(error) = destroy_queue(&memory, self.queue_id) {
            let kfd = Arc::clone(&memory.kfd);
            std::mem::forget(memory);
            kfd.record_drop_error(error);
        }
    }
}
