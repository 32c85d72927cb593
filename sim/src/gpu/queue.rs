//! The contract between the kernel-driver model, which creates and destroys queues, and the
//! command processor, which runs one processor per queue.

use std::ptr::NonNull;
use std::sync::Arc;

use crate::gpu::dispatch::{InterruptSink, ShaderCore};
use crate::gpu::target::GfxTarget;
use crate::gpu::vm::GpuVm;

/// What a compute queue's ring holds (the queue type of CREATE_QUEUE).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RingFormat {
    /// 64-byte AQL packets; read and write pointers count packets (`KFD_IOC_QUEUE_TYPE_COMPUTE_AQL`,
    /// and every SDMA queue, whose engine reads its own format).
    #[default]
    Aql,
    /// A PM4 command stream: a ring of dwords whose read and write pointers count dwords
    /// (`KFD_IOC_QUEUE_TYPE_COMPUTE`).
    Pm4,
}

/// Everything a command processor needs to run one queue, fixed at CREATE_QUEUE.
#[derive(Clone)]
pub struct QueueSpec {
    /// The process-local queue id.
    pub queue_id: u32,
    /// The GPU.
    pub gpu_id: u32,
    /// Its ISA.
    pub target: GfxTarget,
    /// What the ring holds.
    pub format: RingFormat,
    /// LDS bytes available to one workgroup.
    pub lds_bytes_per_workgroup: u32,
    /// The XCCs the queue runs on (every XCC of the GPU: KFD maps a compute queue on each XCC
    /// of its partition); PM4 `PRED_EXEC` selects among them.
    pub xccs: u32,
    /// GPU address of the ring.
    pub ring_va: u64,
    /// Ring size in bytes (a power of two, ≥ 1024).
    pub ring_bytes: u64,
    /// GPU address of the 64-bit read index (`&amd_queue_t.read_dispatch_id` for AQL).
    pub read_pointer_va: u64,
    /// GPU address of the 64-bit write index (`&amd_queue_t.write_dispatch_id`).
    pub write_pointer_va: u64,
    /// The queue's doorbell in the process doorbell page (host memory the driver maps).
    pub doorbell: NonNull<u64>,
    /// `queue_percentage` (0 suspends the queue).
    pub percentage: u32,
    /// `queue_priority`.
    pub priority: u32,
    /// The process' VM on this GPU.
    pub vm: Arc<dyn GpuVm>,
    /// Where interrupts go.
    pub interrupts: Arc<dyn InterruptSink>,
    /// The GPU's shader core.
    pub shader: Arc<dyn ShaderCore>,
}

// SAFETY: `doorbell` points into the simulator's doorbell page, which outlives every queue and is
// only accessed with atomic operations.
unsafe impl Send for QueueSpec {}
// SAFETY: as above.
unsafe impl Sync for QueueSpec {}

impl std::fmt::Debug for QueueSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueSpec")
            .field("queue_id", &self.queue_id)
            .field("gpu_id", &self.gpu_id)
            .field("target", &self.target)
            .field(
                "ring",
                &format_args!("{:#x}+{:#x}", self.ring_va, self.ring_bytes),
            )
            .finish_non_exhaustive()
    }
}

/// How far a processor has got in looking at its queue: what a test waits for before it checks
/// that something did *not* happen (that the processor has looked since and decided to wait).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessorProgress {
    /// Looks begun: each time the processor starts a fresh look at the queue's state and
    /// memory (doorbell, configuration, ring, a barrier's signals).
    pub looks: u64,
    /// While the processor sleeps: the number of looks begun when it went to sleep; `None`
    /// while it runs (or has been woken and is about to run). Once this is `Some(n)` with `n`
    /// greater than [`looks`](Self::looks) as read at some moment, the processor has looked
    /// at everything after that moment and found nothing it can do yet.
    pub asleep_after_look: Option<u64>,
    /// The processor sleeps until an event (a doorbell, UPDATE_QUEUE, DESTROY_QUEUE): no
    /// change to memory alone can make it do anything (an idle ring, a suspended or dead
    /// queue), so it has done all it will about the state as it is.
    pub asleep_until_event: bool,
}

/// A running command processor for one queue.
pub trait RunningQueue: Send + Sync {
    /// The driver stored `value` to this queue's doorbell: wake up and process.
    fn doorbell_rung(&self, value: u64);

    /// UPDATE_QUEUE: new ring, percentage and priority (percentage 0 suspends).
    fn update(&self, ring_va: u64, ring_bytes: u64, percentage: u32, priority: u32);

    /// DESTROY_QUEUE: stop processing, abort a running kernel, and return once the processor
    /// touches no queue memory any more.
    fn stop(&self);

    /// Where the processor is in its polling (see [`ProcessorProgress`]); `None` for an engine
    /// that does not count.
    fn progress(&self) -> Option<ProcessorProgress> {
        None
    }
}

/// Starts command processors: the kernel-driver model calls it at CREATE_QUEUE.
pub trait QueueEngine: Send + Sync {
    /// Start processing `spec`'s ring. The processor stays idle (parked, using no CPU) until
    /// its doorbell rings.
    fn start(&self, spec: QueueSpec) -> Box<dyn RunningQueue>;
}
