//! Scenarios shared by the simulator tests and the hardware tests: the same calls, with
//! checks that hold on both.

#![allow(dead_code, reason = "each test binary uses a different part")]

use std::sync::Arc;
use std::time::Duration;

use amdgpu_sim::ResourceCounts;
use drm_amdgpu::AmdgpuRenderNodes;
use kfd::abi::EventType;
use kfd::queue::{FULL_PERCENTAGE, NORMAL_PRIORITY};
use kfd::{
    Allocation, BufferObject, Kfd, MemoryKind, OpenOptions, Queue, QueueConfig, Sys, WaitStatus,
};

/// `offsetof(amd_queue_t, read_dispatch_id)`.
pub const READ_DISPATCH_ID: u64 = 0x80;
/// `offsetof(amd_queue_t, write_dispatch_id)`.
pub const WRITE_DISPATCH_ID: u64 = 0x38;
/// A ring of 64 AQL packets.
pub const RING_BYTES: u32 = 64 * 64;

/// Open the driver the way the aqueduct layer does (render nodes checked by drm-amdgpu).
pub fn open(sys: &Arc<dyn Sys>) -> kfd::Result<Arc<Kfd>> {
    Kfd::open(sys, &OpenOptions::new(Arc::new(AmdgpuRenderNodes)))
}

/// Bytes that differ per buffer and per position.
pub fn pattern(seed: u8, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// Every memory kind on `gpu_id` (host-visible VRAM only where the GPU has a large BAR), 64 KiB
/// of each sized kind.
pub fn allocate_every_kind(kfd: &Arc<Kfd>, gpu_id: u32) -> Vec<Arc<BufferObject>> {
    let large_bar = kfd.gpu(gpu_id).unwrap().has_public_vram();
    MemoryKind::ALL
        .iter()
        .filter(|&&kind| kind != MemoryKind::VramHostVisible || large_bar)
        .map(|&kind| {
            let size = match kind {
                MemoryKind::Doorbell | MemoryKind::MmioRemap => 0,
                _ => 64 << 10,
            };
            kfd.allocate(gpu_id, Allocation::new(kind, size))
                .unwrap_or_else(|e| panic!("allocating {kind}: {e}"))
        })
        .collect()
}

/// Write a pattern through the CPU view of every host-accessible buffer (not doorbells or
/// MMIO, whose bytes are device registers) and read it back.
pub fn cpu_round_trip(buffers: &[Arc<BufferObject>]) {
    for (i, bo) in buffers.iter().enumerate() {
        match bo.kind() {
            MemoryKind::VramPrivate => {
                assert!(bo.host_ptr().is_none());
                assert!(bo.write(0, &[1]).is_err(), "private VRAM has no CPU view");
            }
            MemoryKind::Doorbell | MemoryKind::MmioRemap => assert!(bo.host_ptr().is_some()),
            _ => {
                let bytes = pattern(i as u8, bo.size() as usize);
                bo.write(0, &bytes).unwrap();
                let mut back = vec![0; bytes.len()];
                bo.read(0, &mut back).unwrap();
                assert_eq!(back, bytes, "{:?}", bo.kind());
                let mut past_end = [0u8; 2];
                assert!(bo.read(bo.size() - 1, &mut past_end).is_err());
            }
        }
    }
}

/// An AQL queue on `gpu_id` with the amd_queue_t offsets ROCr uses.
pub fn aql_queue(kfd: &Arc<Kfd>, gpu_id: u32) -> kfd::Result<Queue> {
    kfd.allocate_queue_memory(gpu_id, RING_BYTES, MemoryKind::GttUncached)?
        .create_aql_queue(&QueueConfig {
            read_pointer_offset: READ_DISPATCH_ID,
            write_pointer_offset: WRITE_DISPATCH_ID,
            priority: NORMAL_PRIORITY,
            percentage: FULL_PERCENTAGE,
        })
}

/// The whole life of an open driver: every memory kind on every GPU, mapped on one and on all
/// GPUs and unmapped, a queue per GPU, events of three types set and waited for; everything
/// dropped at the end, and the driver's own counts back to zero.
pub fn exercise(kfd: &Arc<Kfd>) {
    let gpu_ids: Vec<u32> = kfd.gpus().iter().map(kfd::Gpu::gpu_id).collect();
    for &gpu in &gpu_ids {
        let buffers = allocate_every_kind(kfd, gpu);
        cpu_round_trip(&buffers);
        for bo in &buffers {
            let own = bo.map_to(&[gpu]).unwrap();
            assert_eq!(bo.mapped_gpus(), vec![gpu]);
            if bo.kind() != MemoryKind::MmioRemap && bo.kind() != MemoryKind::Doorbell {
                let all = bo.map_to(&gpu_ids).unwrap();
                // `mapped_gpus` is in gpu_id order, the topology is not (a hive's ids are
                // hashes).
                let mut sorted = gpu_ids.clone();
                sorted.sort_unstable();
                assert_eq!(bo.mapped_gpus(), sorted);
                drop(all);
            }
            assert_eq!(bo.mapped_gpus(), vec![gpu]);
            own.unmap().unwrap();
            assert!(bo.mapped_gpus().is_empty());
        }
        let queue = aql_queue(kfd, gpu).unwrap();
        queue.update(50, NORMAL_PRIORITY).unwrap();
        queue.update(FULL_PERCENTAGE, NORMAL_PRIORITY).unwrap();
        queue.doorbell().ring(0);
        queue.destroy().unwrap();
    }
    let signal = kfd.create_signal_event(false).unwrap();
    let memory = kfd.create_event(EventType::MEMORY, false, 0).unwrap();
    let hardware = kfd.create_event(EventType::HW_EXCEPTION, false, 0).unwrap();
    assert!(signal.mailbox_address().is_some());
    assert!(memory.mailbox_address().is_none());
    assert_eq!(
        signal.wait(Some(Duration::ZERO)).unwrap().status,
        WaitStatus::Timeout
    );
    signal.set().unwrap();
    assert_eq!(
        signal.wait(Some(Duration::ZERO)).unwrap().status,
        WaitStatus::Complete
    );
    drop((signal, memory, hardware));
    assert_eq!(kfd.live_objects(), kfd::LiveObjects::default());
    assert!(kfd.take_drop_errors().is_empty());
}

/// The fds this process has open (`/proc/self/fd`).
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

/// What a process leaves in the simulated kernel once its driver is closed: the binding
/// (`/dev/kfd`, one render file per GPU, the event page with its CPU mapping) and nothing else.
pub fn binding_only(gpus: u64) -> ResourceCounts {
    ResourceCounts {
        processes: 1,
        buffer_objects: 1,
        queues: 0,
        events: 0,
        cpu_mappings: 1,
        open_files: 1 + gpus,
    }
}

/// Drop the last handle to an open driver, checking that nothing else still holds it.
pub fn close(kfd: Arc<Kfd>) {
    let weak = Arc::downgrade(&kfd);
    drop(kfd);
    assert!(weak.upgrade().is_none(), "something still holds the driver");
}
