//! SDMA (copy-engine) queues: CREATE_QUEUE of type SDMA or SDMA_XGMI with the buffers the kernel
//! checks (a ring mapping of exactly the ring size, read and write pointers in a one-page
//! mapping), the queue's fixed doorbell, and the producer side of the ring as ROCr's
//! `BlitSdmaV4` drives it on GFX9: 64-bit byte write and read pointers that only grow, packets
//! written at `wptr & (size - 1)`, the new write pointer stored to the queue's write-pointer
//! word and then to the doorbell; the engine writes its read pointer back.
//!
//! This module knows nothing of packet contents: callers hand it dwords (the `aqueduct` crate
//! builds the SDMA packets). A submission never straddles the ring's end: the rest of the ring
//! is padded with NOPs (zero dwords are one-dword NOPs), as ROCr's `PadRingToEnd` does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::abi::{CreateQueueArgs, QueueType};
use crate::doorbell::{Doorbell, split_doorbell_offset};
use crate::driver::Kfd;
use crate::error::{Error, Result};
use crate::ioctl::calls as ioctls;
use crate::memory::{Allocation, GpuMapping, MemoryKind};
use crate::queue::FULL_PERCENTAGE;
use crate::retry::restarting;

/// Byte offset of the write pointer in the pointer page.
const WRITE_POINTER_OFFSET: u64 = 0;
/// Byte offset of the read pointer the engine writes back.
const READ_POINTER_OFFSET: u64 = 8;
/// `KFD_MAX_QUEUE_PRIORITY`: ROCr creates its blit queues at `HSA_QUEUE_PRIORITY_MAXIMUM`.
const MAXIMUM_PRIORITY: u32 = 15;

/// Which engines a copy queue is placed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SdmaEngines {
    /// The PCIe SDMA engines (`KFD_IOC_QUEUE_TYPE_SDMA`): host ↔ device and device ↔ device.
    Pcie,
    /// The XGMI SDMA engines (`KFD_IOC_QUEUE_TYPE_SDMA_XGMI`): peer copies in a hive.
    Xgmi,
}

/// Why a submission was not written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitRefusal {
    /// The packets do not fit in the ring at all.
    TooLarge,
    /// Not enough room until the engine reads further.
    Full,
}

/// One SDMA queue. Dropping it destroys the queue (DESTROY_QUEUE stops the engine mid-packet),
/// then frees its ring and pointer page.
#[derive(Debug)]
pub struct SdmaQueue {
    kfd: Arc<Kfd>,
    gpu_id: u32,
    /// Ring and pointer page; taken (and leaked) only when DESTROY_QUEUE fails.
    buffers: Option<(GpuMapping, GpuMapping)>,
    ring_bytes: u64,
    queue_id: u32,
    doorbell: Doorbell,
    /// The producer's write pointer; the lock also serialises submissions.
    write_pointer: Mutex<u64>,
}

impl Kfd {
    /// Create an SDMA queue on GPU `gpu_id` whose ring holds `ring_bytes` (a power of two,
    /// whole pages). Fails with the kernel's ENOMEM when every queue of those engines is in
    /// use.
    pub fn create_sdma_queue(
        self: &Arc<Self>,
        gpu_id: u32,
        ring_bytes: u32,
        engines: SdmaEngines,
    ) -> Result<SdmaQueue> {
        self.check_process()?;
        let gpu = self.gpu(gpu_id)?;
        let page = self.address_space().page_size();
        if !ring_bytes.is_power_of_two() || u64::from(ring_bytes) < page {
            return Err(Error::InvalidArgument(format!(
                "SDMA ring size {ring_bytes:#x}: the kernel needs a power of two that fills \
                 whole {page:#x}-byte pages"
            )));
        }
        let on_gpu = [gpu_id];
        let ring = self
            .allocate(
                gpu_id,
                Allocation::new(MemoryKind::GttUncached, u64::from(ring_bytes)),
            )?
            .map_to(&on_gpu)?;
        let pointers = self
            .allocate(gpu_id, Allocation::new(MemoryKind::GttUncached, page))?
            .map_to(&on_gpu)?;
        let queue_type = match engines {
            SdmaEngines::Pcie => QueueType::SDMA,
            SdmaEngines::Xgmi => QueueType::SDMA_XGMI,
        };
        let mut args = CreateQueueArgs {
            ring_base_address: ring.va(),
            write_pointer_address: pointers.va() + WRITE_POINTER_OFFSET,
            read_pointer_address: pointers.va() + READ_POINTER_OFFSET,
            ring_size: ring_bytes,
            gpu_id,
            queue_type: queue_type.0,
            queue_percentage: FULL_PERCENTAGE,
            queue_priority: MAXIMUM_PRIORITY,
            ..CreateQueueArgs::default()
        };
        let kfd = Arc::clone(self);
        restarting(|| {
            // SAFETY: the ring and the pointer page are live GPU-mapped BOs owned by the
            // queue being built; they outlive the queue (dropped after DESTROY_QUEUE).
            unsafe { ioctls::create_queue(kfd.sys().as_ref(), kfd.kfd_fd(), &mut args) }
        })
        .map_err(|e| {
            kfd.binding()
                .ioctl_error(format!("create an SDMA queue on GPU {gpu_id:#x}"), e)
        })?;
        kfd.live.queues.fetch_add(1, Ordering::Relaxed);
        let queue_id = args.queue_id;
        let doorbell = split_doorbell_offset(args.doorbell_offset, gpu.doorbell_slice_size())
            .ok_or_else(|| {
                Error::Kernel(format!(
                    "CREATE_QUEUE returned doorbell offset {:#x}, not a doorbell mmap offset",
                    args.doorbell_offset
                ))
            })
            .and_then(|(slice, in_slice)| {
                gpu.doorbell_page(kfd.sys(), kfd.kfd_fd(), slice)?
                    .doorbell(in_slice)
            });
        let doorbell = match doorbell {
            Ok(doorbell) => doorbell,
            Err(error) => {
                kfd.live.queues.fetch_sub(1, Ordering::Relaxed);
                let destroyed = restarting(|| {
                    ioctls::destroy_queue(kfd.sys().as_ref(), kfd.kfd_fd(), queue_id)
                });
                if destroyed.is_err() {
                    // The engine may still read the ring: never free it.
                    std::mem::forget(ring);
                    std::mem::forget(pointers);
                }
                return Err(error);
            }
        };
        Ok(SdmaQueue {
            kfd,
            gpu_id,
            buffers: Some((ring, pointers)),
            ring_bytes: u64::from(ring_bytes),
            queue_id,
            doorbell,
            write_pointer: Mutex::new(0),
        })
    }
}

impl SdmaQueue {
    /// The process-local queue id.
    pub fn queue_id(&self) -> u32 {
        self.queue_id
    }

    /// The GPU.
    pub fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    /// Ring size in bytes.
    pub fn ring_bytes(&self) -> u64 {
        self.ring_bytes
    }

    fn host_base(&self, pointers: bool) -> std::ptr::NonNull<u8> {
        let (ring, page) = self
            .buffers
            .as_ref()
            .unwrap_or_else(|| unreachable!("the buffers live until drop"));
        let mapping = if pointers { page } else { ring };
        mapping
            .buffer()
            .host_ptr()
            .unwrap_or_else(|| unreachable!("GTT buffers are always CPU-mapped"))
    }

    fn pointer(&self, offset: u64) -> &AtomicU64 {
        let base = self.host_base(true);
        // SAFETY: the pointer page is a live, page-aligned CPU mapping owned by this queue;
        // `offset` is 8-aligned inside it; the engine writes it with 64-bit stores.
        unsafe { AtomicU64::from_ptr(base.as_ptr().add(offset as usize).cast()) }
    }

    /// The read pointer the engine last wrote back (bytes consumed since creation).
    pub fn read_pointer(&self) -> u64 {
        self.pointer(READ_POINTER_OFFSET).load(Ordering::Acquire)
    }

    /// The write pointer: bytes submitted since creation.
    pub fn write_pointer(&self) -> u64 {
        *self
            .write_pointer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the engine has consumed everything submitted.
    pub fn is_idle(&self) -> bool {
        self.read_pointer() == self.write_pointer()
    }

    /// Write `dwords` (whole packets) into the ring and ring the doorbell; returns the write
    /// pointer after them (the engine has executed them once the read pointer reaches it).
    /// Refuses without writing anything when the ring lacks room.
    pub fn submit(&self, dwords: &[u32]) -> std::result::Result<u64, SubmitRefusal> {
        let bytes = 4 * dwords.len() as u64;
        if bytes == 0 || bytes >= self.ring_bytes {
            return Err(SubmitRefusal::TooLarge);
        }
        let mut write = self
            .write_pointer
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mask = self.ring_bytes - 1;
        let to_end = self.ring_bytes - (*write & mask);
        let pad = if bytes > to_end { to_end } else { 0 };
        // The ring is full when all but one byte would be written (ROCr's rule).
        if *write + pad + bytes - self.read_pointer() >= self.ring_bytes {
            return Err(SubmitRefusal::Full);
        }
        let ring = self.host_base(false);
        let mut at = *write;
        for dw in std::iter::repeat_n(0u32, (pad / 4) as usize).chain(dwords.iter().copied()) {
            // SAFETY: `at & mask` is a dword offset inside the live CPU mapping of the ring;
            // the engine reads only up to the write pointer, which has not moved over it.
            // The ring is page-aligned and `at` a multiple of 4, so the u32 is aligned.
            #[allow(clippy::cast_ptr_alignment)]
            unsafe {
                ring.as_ptr()
                    .add((at & mask) as usize)
                    .cast::<u32>()
                    .write_volatile(dw);
            }
            at += 4;
        }
        *write = at;
        self.pointer(WRITE_POINTER_OFFSET)
            .store(at, Ordering::Release);
        self.doorbell.ring(at);
        Ok(at)
    }
}

impl Drop for SdmaQueue {
    fn drop(&mut self) {
        self.kfd.live.queues.fetch_sub(1, Ordering::Relaxed);
        if !self.kfd.binding().is_owner_process() {
            return;
        }
        let destroyed = restarting(|| {
            ioctls::destroy_queue(self.kfd.sys().as_ref(), self.kfd.kfd_fd(), self.queue_id)
        });
        if let Err(e) = destroyed {
            let error = self
                .kfd
                .binding()
                .ioctl_error(format!("destroy SDMA queue {}", self.queue_id), e);
            self.kfd.record_drop_error(error);
            // The engine may still touch the ring and pointers: leak them.
            std::mem::forget(self.buffers.take());
        }
    }
}
