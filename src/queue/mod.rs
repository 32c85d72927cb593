//! AQL queues: a ring the host produces packets into and a GPU's command processor consumes,
//! with the queue's error word watched by every wait on it.
//!
//! - `kernarg_ring`: the queue's kernarg segments and their completion signals, for launches;
//! - `scratch`: the queue's scratch (private segment) memory, grown before launches need it;
//! - `prepared_kernargs`: kernarg memory of prepared launches, owned by the queue so that it
//!   outlives every packet pointing at it.
//!
//! Creating a queue: the kernel's memory for it (ring, `amd_queue_t` page, EOP buffer,
//! context-save area) from `kfd`, every ring slot set INVALID, the `amd_queue_t` filled in
//! (ring, size, profiling, apertures, and an interrupt signal as `queue_inactive_signal`, which
//! the CP sets to its error word), then CREATE_QUEUE. Publishing is `aql`'s ring producer: a
//! reservation, the packet body, one release store of the header, the doorbell. A wait on the
//! queue sleeps on both the awaited signal's event and the error signal's, so an error ends it
//! at once.
//!
//! [`Queue::abort`] destroys the queue in the kernel while kernels may still run on it (what
//! a launch that timed out needs): the device stays usable, and every later call on the
//! queue fails with [`QueueError::Aborted`].

mod descriptor;
pub(crate) mod kernarg_ring;
pub(crate) mod prepared_kernargs;
pub(crate) mod scratch;

use std::any::Any;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use aql::builder::{AqlPacket, DispatchLimits};
use aql::packet::{BarrierValuePacket, KernelDispatchPacket, PacketType, RawPacket};
use aql::queue::{
    AmdQueue, HSA_QUEUE_FEATURE_KERNEL_DISPATCH, HsaQueue, HsaQueueType, QueueProperties,
    READ_DISPATCH_ID_OFFSET, WRITE_DISPATCH_ID_OFFSET,
};
use aql::ring::{RingError, RingProducer};
use aql::signal::{Condition, MemoryOrder};
use kfd::queue::{FULL_PERCENTAGE, NORMAL_PRIORITY};
use kfd::{MemoryKind, QueueConfig};
use tracing::{debug, warn};
use zerocopy::IntoBytes;

use crate::agent::GpuAgent;
use crate::device::lifetime::{Owned, Wake};
use crate::device::{Device, DeviceShared, Live, TeardownStage};
pub use crate::error::QueueError;
use crate::error::{Error, Result};
use crate::kernarg::LaunchContext;
use crate::signal::{Signal, SignalState, SignalWait};
use kernarg_ring::KernargRing;
use prepared_kernargs::PreparedKernargs;
use scratch::{Scratch, ScratchFields, ScratchIsa, ScratchShape};

/// How long a queue whose error word says "memory fault" waits for KFD's report of the
/// address, which may come after the CP's word.
const FAULT_REPORT_WAIT: Duration = Duration::from_millis(200);

/// How to make a queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueOptions {
    /// Ring size in packets: a power of two within the GPU's [`QueueLimits`].
    ///
    /// [`QueueLimits`]: crate::agent::QueueLimits
    pub packets: u32,
    /// Scheduling priority, 0 (lowest) to 15.
    pub priority: u32,
    /// Whether the CP writes start and end timestamps into completion signals.
    pub profiling: bool,
    /// CUs the queue may use (one bit per CU, 32 per word), or all.
    pub cu_mask: Option<Vec<u32>>,
}

impl Default for QueueOptions {
    fn default() -> Self {
        Self {
            packets: 1024,
            priority: NORMAL_PRIORITY,
            profiling: false,
            cu_mask: None,
        }
    }
}

/// An AQL queue on one GPU. Any number of threads may submit to it at once. Cloning gives
/// another handle to the same queue; it is destroyed when the last handle goes (or at
/// [`Device::shutdown`]).
#[derive(Clone)]
pub struct Queue {
    pub(crate) owned: Arc<Owned<QueueState>>,
    gpu_id: u32,
    queue_id: u32,
    packets: u32,
    /// What a dispatch on its GPU may ask for (from the agent).
    dispatch_limits: DispatchLimits,
    /// Set by [`Queue::abort`]; shared with the state so waits on it end.
    aborted: Arc<AtomicBool>,
    /// The copy and fill kernels (`crate::blit`), loaded at the queue's first copy or fill and
    /// shared by clones. Type-erased: the queue does not name the layers above it.
    blit_kernels: Arc<BlitKernelsSlot>,
}

/// Where the blit layer keeps a queue's copy and fill kernels (for the queue and its clones,
/// for the queue's life), typed there. `None` until the first copy or fill.
pub(crate) type BlitKernelsSlot = Mutex<Option<Arc<dyn Any + Send + Sync>>>;

/// The kernel objects of a queue. Fields drop in order: the producer (nothing to do), the
/// queue (destroyed, then its memory freed), the kernarg memory of prepared launches and
/// command lists, the kernarg segments and scratch memory its kernels used, then the error
/// signal the CP wrote to.
pub(crate) struct QueueState {
    pub(crate) producer: RingProducer<QueueDoorbell>,
    queue: kfd::Queue,
    /// Kernarg memory of prepared launches (freed after the queue is destroyed).
    pub(crate) prepared: Mutex<PreparedKernargs>,
    /// Kernarg segments for launches, made at the first launch (freed after the queue is
    /// destroyed: a kernel may still be reading them).
    pub(crate) launches: OnceLock<KernargRing>,
    launches_init: Mutex<()>,
    /// Scratch memory, described in the `amd_queue_t`.
    pub(crate) scratch: Scratch,
    pub(crate) inactive: SignalState,
    /// What launches on this queue put into hidden kernel arguments.
    pub(crate) context: LaunchContext,
    /// The first error seen; every later wait reports it.
    error: OnceLock<QueueError>,
    /// Whether [`Queue::abort`] was called.
    aborted: Arc<AtomicBool>,
}

impl Wake for QueueState {
    fn wake(&self) {
        if let Some(event) = self.inactive.event() {
            let _ = event.set();
        }
        if let Some(ring) = self.launches.get() {
            let _ = ring.event.set();
        }
    }
}

/// The doorbell as `aql`'s producer rings it.
pub(crate) struct QueueDoorbell(kfd::Doorbell);

impl aql::ring::Doorbell for QueueDoorbell {
    fn ring(&self, write_index: u64) {
        self.0.ring(write_index);
    }
}

impl Device {
    /// Create an AQL queue on `gpu`.
    pub fn create_queue(&self, gpu: &GpuAgent, options: &QueueOptions) -> Result<Queue> {
        let index = self.gpu_index(gpu)?;
        let gpu = &self.shared().gpus()[index];
        let limits = gpu.queues;
        if !options.packets.is_power_of_two()
            || options.packets < limits.min_packets
            || options.packets > limits.max_packets
        {
            return Err(Error::InvalidArgument(format!(
                "a queue of {} packets: the size must be a power of two from {} to {}",
                options.packets, limits.min_packets, limits.max_packets
            )));
        }
        if options.priority > 15 {
            return Err(Error::InvalidArgument(format!(
                "queue priority {}: the kernel takes 0 to 15",
                options.priority
            )));
        }
        let aborted = Arc::new(AtomicBool::new(false));
        let state = self
            .shared()
            .with_live(|live| QueueState::create(live, gpu, options, &aborted))?;
        let queue_id = state.queue.queue_id();
        debug!(
            gpu_id = gpu.gpu_id,
            queue_id,
            packets = options.packets,
            "queue created"
        );
        Ok(Queue {
            owned: Owned::new(self.shared(), TeardownStage::Queues, state),
            gpu_id: gpu.gpu_id,
            queue_id,
            packets: options.packets,
            dispatch_limits: gpu.dispatch_limits(),
            aborted,
            blit_kernels: Arc::default(),
        })
    }
}

impl QueueState {
    fn create(
        live: &Live,
        gpu: &GpuAgent,
        options: &QueueOptions,
        aborted: &Arc<AtomicBool>,
    ) -> Result<Self> {
        let gpu_id = gpu.gpu_id;
        live.check_gpu_running(gpu_id)?;
        let what = || format!("a queue of {} packets on GPU {gpu_id:#x}", options.packets);
        let memory = live
            .kfd
            .allocate_queue_memory(gpu_id, options.packets * 64, MemoryKind::GttFine)
            .map_err(|e| Error::driver(what, e))?;
        // Every slot INVALID: the CP stalls there until a producer publishes.
        let mut invalid = RawPacket::default();
        invalid.0[0] = u64::from(PacketType::INVALID.0);
        for slot in 0..u64::from(options.packets) {
            memory
                .ring()
                .write(slot * 64, invalid.as_bytes())
                .map_err(|e| Error::driver(what, e))?;
        }
        let inactive = SignalState::create(live, 0, true)?;
        let kfd_gpu = live.kfd.gpu(gpu_id).map_err(|e| Error::driver(what, e))?;
        let apertures = *kfd_gpu.apertures();
        let node_properties = &kfd_gpu.node().properties;
        let scratch_shape = ScratchShape::new(
            gpu.compute_units,
            node_properties.max_slots_scratch_cu,
            gpu.xccs,
            node_properties.shader_engines().unwrap_or(1) / gpu.xccs.max(1),
            ScratchIsa::for_major(kfd_gpu.gfx_version().major),
        );
        let mut properties = QueueProperties::IS_PTR64;
        if options.profiling {
            properties |= QueueProperties::ENABLE_PROFILING;
        }
        let descriptor = AmdQueue {
            hsa_queue: HsaQueue {
                r#type: HsaQueueType::MULTI.0,
                features: HSA_QUEUE_FEATURE_KERNEL_DISPATCH,
                base_address: memory.ring().va(),
                size: options.packets,
                ..HsaQueue::default()
            },
            group_segment_aperture_base_hi: (apertures.lds_base >> 32) as u32,
            private_segment_aperture_base_hi: (apertures.scratch_base >> 32) as u32,
            read_dispatch_id_field_base_byte_offset: READ_DISPATCH_ID_OFFSET as u32,
            queue_properties: properties.bits(),
            queue_inactive_signal: inactive.view().handle(),
            ..AmdQueue::default()
        };
        memory
            .pointer_page()
            .write(0, descriptor.as_bytes())
            .map_err(|e| Error::driver(what, e))?;
        let ring = memory.ring().host_ptr();
        let descriptor_ptr = memory.pointer_page().host_ptr();
        let queue = memory
            .create_aql_queue(&QueueConfig {
                read_pointer_offset: READ_DISPATCH_ID_OFFSET as u64,
                write_pointer_offset: WRITE_DISPATCH_ID_OFFSET as u64,
                priority: options.priority,
                percentage: FULL_PERCENTAGE,
            })
            .map_err(|e| Error::driver(what, e))?;
        if let Some(mask) = &options.cu_mask {
            queue
                .set_cu_mask(mask)
                .map_err(|e| Error::driver(|| "the queue's CU mask".to_owned(), e))?;
        }
        let (Some(ring), Some(descriptor_ptr)) = (ring, descriptor_ptr) else {
            return Err(Error::Driver(kfd::Error::Kernel(
                "a queue's ring or descriptor has no CPU mapping".to_owned(),
            )));
        };
        // SAFETY: `ring` is the CPU view of the ring buffer of `packets * 64` bytes
        // (page-aligned, hence 64-aligned) and `descriptor_ptr` that of the page holding the
        // amd_queue_t just written; both belong to `queue`, which this state owns and which
        // is dropped after the producer; `packets` is a power of two and every slot is
        // INVALID.
        let producer = unsafe {
            RingProducer::new(
                ring,
                options.packets,
                descriptor_ptr.cast(),
                QueueDoorbell(queue.doorbell().clone()),
            )
        };
        let context = LaunchContext {
            queue_address: queue.queue_memory().pointer_page().va(),
            private_aperture_base: apertures.scratch_base,
            shared_aperture_base: apertures.lds_base,
            lds_limit: gpu.lds_bytes,
            ..LaunchContext::default()
        };
        Ok(Self {
            producer,
            prepared: Mutex::new(PreparedKernargs::default()),
            launches: OnceLock::new(),
            launches_init: Mutex::new(()),
            queue,
            scratch: Scratch::new(gpu_id, scratch_shape),
            inactive,
            context,
            error: OnceLock::new(),
            aborted: Arc::clone(aborted),
        })
    }

    /// The kernarg ring, made on first use.
    pub(crate) fn kernarg_ring(&self, device: &DeviceShared, gpu_id: u32) -> Result<&KernargRing> {
        if let Some(ring) = self.launches.get() {
            return Ok(ring);
        }
        let _init = self
            .launches_init
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(ring) = self.launches.get() {
            return Ok(ring);
        }
        let ring =
            device.with_live(|live| KernargRing::new(live, gpu_id, self.producer.slots()))?;
        Ok(self.launches.get_or_init(|| ring))
    }

    /// Fail if the CP has stopped the queue with an error.
    pub(crate) fn check(&self, live: &Live, gpu_id: u32, queue_id: u32) -> Result<()> {
        let to_error = |cause: &QueueError| Error::Queue {
            gpu_id,
            queue_id,
            cause: cause.clone(),
        };
        if self.aborted.load(Ordering::Acquire) {
            return Err(to_error(&QueueError::Aborted));
        }
        if let Some(cause) = self.error.get() {
            return Err(to_error(cause));
        }
        let word = self.inactive.view().load(MemoryOrder::Acquire);
        let fault = if word & aql::queue::queue_error::MEMORY_VIOLATION != 0 {
            live.memory_fault(gpu_id, FAULT_REPORT_WAIT)
        } else {
            None
        };
        match QueueError::from_word(word, fault) {
            // No error of its own; but a memory fault on the GPU stops every queue there.
            None => live.check_gpu_running(gpu_id),
            Some(cause) => {
                let cause = self.error.get_or_init(|| {
                    warn!(gpu_id, queue_id, %cause, "queue error");
                    cause
                });
                Err(to_error(cause))
            }
        }
    }

    /// Write the scratch fields of the `amd_queue_t` (the queue is idle and nothing is
    /// published meanwhile: see [`Scratch::grow`]).
    fn write_scratch_fields(&self, fields: &ScratchFields) -> Result<()> {
        use std::mem::offset_of;
        let page = self.queue.queue_memory().pointer_page();
        let writes: [(usize, &[u8]); 5] = [
            (
                offset_of!(AmdQueue, compute_tmpring_size),
                fields.tmpring.as_bytes(),
            ),
            (
                offset_of!(AmdQueue, scratch_resource_descriptor),
                fields.resource_descriptor.as_bytes(),
            ),
            (
                offset_of!(AmdQueue, scratch_backing_memory_location),
                fields.location.as_bytes(),
            ),
            (
                offset_of!(AmdQueue, scratch_backing_memory_byte_size),
                fields.byte_size.as_bytes(),
            ),
            (
                offset_of!(AmdQueue, scratch_wave64_lane_byte_size),
                fields.wave64_lane_byte_size.as_bytes(),
            ),
        ];
        for (offset, bytes) in writes {
            page.write(offset as u64, bytes)
                .map_err(|e| Error::driver(|| "the queue's scratch fields".to_owned(), e))?;
        }
        Ok(())
    }
}

impl Queue {
    /// The slot for this queue's blit kernels (see [`BlitKernelsSlot`]).
    pub(crate) fn blit_kernels(&self) -> &BlitKernelsSlot {
        &self.blit_kernels
    }

    /// What a dispatch on this queue's GPU may ask for ([`GpuAgent::dispatch_limits`]): what
    /// [`Queue::launch`] checks, and what a packet built with `aql::builder` for
    /// [`Queue::dispatch`] should be checked against.
    pub fn dispatch_limits(&self) -> &DispatchLimits {
        &self.dispatch_limits
    }

    /// The GPU it runs on.
    pub fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    /// The kernel's id of the queue.
    pub fn queue_id(&self) -> u32 {
        self.queue_id
    }

    /// Ring size in packets.
    pub fn packets(&self) -> u32 {
        self.packets
    }

    /// Publish `packet` (its header word last) and ring the doorbell; returns its index.
    /// Waits while the ring is full; fails at once if the queue has stopped with an error or
    /// the device was shut down.
    pub fn submit<P: AqlPacket>(&self, packet: &P) -> Result<u64> {
        self.submit_until(&packet.to_raw(), None)
    }

    /// Publish a packet given as its 64 bytes (the first 32-bit word last), giving up on a
    /// full ring at `deadline` (`None`: wait for room as long as the queue works).
    pub fn submit_until(&self, packet: &RawPacket, deadline: Option<Instant>) -> Result<u64> {
        self.with_state_fast(|state| self.publish(state, packet, deadline))
    }

    /// Publish `packet` with the state held (see [`Queue::submit_until`]).
    pub(crate) fn publish(
        &self,
        state: &QueueState,
        packet: &RawPacket,
        deadline: Option<Instant>,
    ) -> Result<u64> {
        let device = self.owned.device();
        let abandon = || abandon_reason(device, state);
        // A queue the CP stopped (or that was aborted, or whose device closed) takes no more
        // packets, full ring or not: the caller hears its error now rather than at a wait.
        if let Some(reason) = abandon() {
            return Err(self.ring_error(device, state, RingError::Abandoned(reason)));
        }
        state
            .producer
            .submit(packet, deadline, &abandon)
            .map_err(|error| self.ring_error(device, state, error))
    }

    /// Publish `packets` in consecutive slots (one reservation, each packet's header last)
    /// and ring the doorbell once, with the state held; returns the first packet's index.
    /// Waits for room for all of them as [`Queue::submit_until`] waits for one.
    pub(crate) fn publish_all(
        &self,
        state: &QueueState,
        packets: &[RawPacket],
        deadline: Option<Instant>,
    ) -> Result<u64> {
        let device = self.owned.device();
        let abandon = || abandon_reason(device, state);
        if let Some(reason) = abandon() {
            return Err(self.ring_error(device, state, RingError::Abandoned(reason)));
        }
        let producer = &state.producer;
        let first = producer
            .reserve(packets.len() as u64, deadline, &abandon)
            .map_err(|error| self.ring_error(device, state, error))?;
        for (index, packet) in (first..).zip(packets) {
            producer.write(index, packet);
        }
        producer.ring_doorbell(first + packets.len() as u64 - 1);
        Ok(first)
    }

    /// Run `f` on the queue's state; after [`Queue::abort`] fail with
    /// [`QueueError::Aborted`].
    pub(crate) fn with_state<R>(&self, f: impl FnOnce(&QueueState) -> Result<R>) -> Result<R> {
        self.owned.with(f).map_err(|e| self.aborted_error(e))
    }

    /// [`Queue::with_state`] for hot paths (see `Owned::with_fast`).
    pub(crate) fn with_state_fast<R>(&self, f: impl FnOnce(&QueueState) -> Result<R>) -> Result<R> {
        self.owned.with_fast(f).map_err(|e| self.aborted_error(e))
    }

    /// A closed queue state after an abort is the abort's error.
    fn aborted_error(&self, error: Error) -> Error {
        match error {
            Error::Closed if self.aborted.load(Ordering::Acquire) => Error::Queue {
                gpu_id: self.gpu_id,
                queue_id: self.queue_id,
                cause: QueueError::Aborted,
            },
            other => other,
        }
    }

    /// Destroy the queue now, even with kernels running on it (the kernel stops them): the
    /// way out of a hung kernel. The device and its other queues stay usable; every later
    /// call on this queue (and waits already sleeping on it) fails with
    /// [`QueueError::Aborted`]. Aborting twice is not an error.
    pub fn abort(&self) -> Result<()> {
        if self.aborted.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        warn!(
            gpu_id = self.gpu_id,
            queue_id = self.queue_id,
            "aborting the queue"
        );
        // Wake sleepers on the queue so they see the flag and let go of the state.
        match self.owned.with(|state| {
            state.wake();
            Ok(())
        }) {
            Ok(()) | Err(Error::Closed) => {}
            Err(other) => return Err(other),
        }
        // DESTROY_QUEUE (the kernel preempts running waves), then the memory is freed.
        if let Some(state) = self.owned.take() {
            let QueueState { queue, .. } = state;
            queue
                .destroy()
                .map_err(|e| Error::driver(|| "destroying an aborted queue".to_owned(), e))?;
        }
        Ok(())
    }

    /// Whether [`Queue::abort`] was called on this queue.
    pub fn is_aborted(&self) -> bool {
        self.aborted.load(Ordering::Acquire)
    }

    /// Make the queue provide at least `bytes` of scratch (private segment) memory per
    /// work-item, for dispatch packets published with [`Queue::dispatch`] or
    /// [`Queue::submit`] whose `private_segment_size` is that large ([`Queue::launch`] does
    /// this itself). Waits until the queue has completed every packet published so far if
    /// the memory must grow.
    pub fn reserve_scratch(&self, bytes: u32) -> Result<()> {
        self.with_state(|state| self.ensure_scratch(state, bytes))
    }

    /// Serve the CP's request for scratch: if it halted this queue on a dispatch needing more
    /// scratch than the queue provides (`queue_inactive_signal` holds the recoverable
    /// insufficient-scratch word), grow the scratch to what that packet asks for and store 0
    /// so the CP fetches the packet again (ROCr's `DynamicScratchHandler`). For programs that
    /// write dispatch packets into the ring themselves, with no scratch size known at queue
    /// creation. Returns whether the queue was halted for scratch.
    pub fn serve_scratch_request(&self) -> Result<bool> {
        let device = Arc::clone(self.owned.device());
        self.with_state(|state| {
            let word = state.inactive.view().load(MemoryOrder::Acquire);
            let halted_for_scratch = word == aql::queue::queue_error::SCRATCH_WAVE64
                || word == aql::queue::queue_error::SCRATCH_WAVE32;
            if !halted_for_scratch {
                return Ok(false);
            }
            // The halted packet is the one at the read index; its private_segment_size
            // (hsa_kernel_dispatch_packet_t offset 24) is what the CP checked.
            let slot = state.producer.read_index() % u64::from(state.producer.slots());
            let mut size = [0u8; 4];
            state
                .queue
                .queue_memory()
                .ring()
                .read(slot * 64 + 24, &mut size)
                .map_err(|e| Error::driver(|| "the halted dispatch packet".to_owned(), e))?;
            let bytes = u32::from_le_bytes(size);
            debug!(
                gpu_id = self.gpu_id,
                queue_id = self.queue_id,
                bytes,
                "CP asks for scratch"
            );
            device.with_live(|live| {
                state
                    .scratch
                    .grow_halted(live, bytes, |fields| state.write_scratch_fields(fields))
            })?;
            state.inactive.view().store(0, MemoryOrder::Release);
            Ok(true)
        })
    }

    /// Grow scratch to `bytes` per work-item if it is smaller, with the state held.
    pub(crate) fn ensure_scratch(&self, state: &QueueState, bytes: u32) -> Result<()> {
        if state.scratch.provided() >= bytes {
            return Ok(());
        }
        let device = self.owned.device();
        device.with_live(|live| {
            state.scratch.grow(
                live,
                bytes,
                || self.drain(live, state),
                |fields| state.write_scratch_fields(fields),
            )
        })
    }

    /// Wait until every packet published so far has completed: a barrier-AND packet with
    /// the barrier bit and a completion signal, published with the state held.
    fn drain(&self, live: &Live, state: &QueueState) -> Result<()> {
        let done = SignalState::create(live, 1, true)?;
        let packet = aql::builder::barrier_and(&[], done.view().handle())
            .map_err(|e| Error::InvalidArgument(e.to_string()))?
            .barrier(true);
        self.publish(state, &packet.to_raw(), None)?;
        let check = || state.check(live, self.gpu_id, self.queue_id);
        SignalWait {
            device: self.owned.device(),
            live,
            view: done.view(),
            events: [done.event(), state.inactive.event()],
            check: &check,
        }
        .run(Condition::Eq, 0, None)
        .map(drop)
    }

    /// Publish a kernel-dispatch packet.
    pub fn dispatch(&self, packet: &KernelDispatchPacket) -> Result<u64> {
        self.submit(packet)
    }

    /// A barrier-AND packet: later packets wait until every signal in `deps` (at most 5) is
    /// 0; `completion` is decremented when it is done.
    pub fn barrier_and(&self, deps: &[&Signal], completion: Option<&Signal>) -> Result<u64> {
        let packet =
            aql::builder::barrier_and(&handles(deps), completion.map_or(0, Signal::handle))
                .map_err(|e| Error::InvalidArgument(e.to_string()))?;
        self.submit(&packet)
    }

    /// A barrier-OR packet: later packets wait until any signal in `deps` (at most 5) is 0.
    pub fn barrier_or(&self, deps: &[&Signal], completion: Option<&Signal>) -> Result<u64> {
        let packet = aql::builder::barrier_or(&handles(deps), completion.map_or(0, Signal::handle))
            .map_err(|e| Error::InvalidArgument(e.to_string()))?;
        self.submit(&packet)
    }

    /// A barrier-value packet: later packets wait until `(signal & mask) <condition> value`.
    pub fn barrier_value(
        &self,
        signal: &Signal,
        condition: Condition,
        value: i64,
        mask: i64,
        completion: Option<&Signal>,
    ) -> Result<u64> {
        let packet: BarrierValuePacket = aql::builder::barrier_value(
            signal.handle(),
            condition,
            value,
            mask,
            completion.map_or(0, Signal::handle),
        );
        self.submit(&packet)
    }

    /// Wait until `signal <condition> compare`, at most `timeout`: like [`Signal::wait`],
    /// but fails with the queue's error as soon as the CP stops this queue.
    pub fn wait(
        &self,
        signal: &Signal,
        condition: Condition,
        compare: i64,
        timeout: Option<Duration>,
    ) -> Result<i64> {
        let device = Arc::clone(self.owned.device());
        self.with_state(|state| {
            device.with_live(|live| {
                state.check(live, self.gpu_id, self.queue_id)?;
                let check = || state.check(live, self.gpu_id, self.queue_id);
                let outcome =
                    signal.wait_with(condition, compare, timeout, state.inactive.event(), &check);
                // An error that stopped the queue wins over the wait's own outcome.
                state.check(live, self.gpu_id, self.queue_id)?;
                outcome
            })
        })
    }

    /// Wait until every packet submitted so far has completed (a barrier-AND with a
    /// completion signal, then a wait on it).
    pub fn finish(&self, timeout: Option<Duration>) -> Result<()> {
        let device = Device::from_shared(Arc::clone(self.owned.device()));
        let done = device.signal(1)?;
        self.barrier_and(&[], Some(&done))?;
        self.wait(&done, Condition::Eq, 0, timeout).map(drop)
    }

    /// The error the CP stopped this queue with, if any.
    pub fn error(&self) -> Result<Option<QueueError>> {
        let device = Arc::clone(self.owned.device());
        self.with_state(|state| {
            device.with_live(|live| match state.check(live, self.gpu_id, self.queue_id) {
                Ok(()) => Ok(None),
                Err(Error::Queue { cause, .. }) => Ok(Some(cause)),
                Err(other) => Err(other),
            })
        })
    }

    /// The CP's read index (`read_dispatch_id`): packets below it have been consumed.
    pub fn read_index(&self) -> Result<u64> {
        self.with_state_fast(|state| Ok(state.producer.read_index()))
    }

    /// The write index (`write_dispatch_id`): packets below it have been reserved.
    pub fn write_index(&self) -> Result<u64> {
        self.with_state_fast(|state| Ok(state.producer.write_index()))
    }

    /// Change the queue's priority (0..=15) and time-slice share (0..=100; 0 suspends it).
    pub fn update(&self, percentage: u32, priority: u32) -> Result<()> {
        if percentage > 100 || priority > 15 {
            return Err(Error::InvalidArgument(format!(
                "percentage {percentage} (0..=100), priority {priority} (0..=15)"
            )));
        }
        self.with_state(|state| {
            state
                .queue
                .update(percentage, priority)
                .map_err(|e| Error::driver(|| "updating a queue".to_owned(), e))
        })
    }

    /// Restrict the queue to the CUs whose bits are set (32 per word).
    pub fn set_cu_mask(&self, mask: &[u32]) -> Result<()> {
        self.with_state(|state| {
            state
                .queue
                .set_cu_mask(mask)
                .map_err(|e| Error::driver(|| "setting a queue's CU mask".to_owned(), e))
        })
    }

    fn ring_error(&self, device: &DeviceShared, state: &QueueState, error: RingError) -> Error {
        match error {
            RingError::Abandoned(_) if device.is_closed() => Error::Closed,
            RingError::Abandoned(reason) => device
                .with_live(|live| state.check(live, self.gpu_id, self.queue_id))
                .err()
                .unwrap_or(Error::InvalidArgument(reason)),
            RingError::Timeout { .. } => Error::Timeout {
                what: format!("room in queue {} ({error})", self.queue_id),
                after: Duration::ZERO,
            },
            RingError::InvalidCount { .. } => Error::InvalidArgument(error.to_string()),
        }
    }
}

fn handles(signals: &[&Signal]) -> Vec<u64> {
    signals.iter().map(|s| s.handle()).collect()
}

impl fmt::Debug for Queue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue")
            .field("gpu_id", &format_args!("{:#x}", self.gpu_id))
            .field("queue_id", &self.queue_id)
            .field("packets", &self.packets)
            .finish_non_exhaustive()
    }
}

/// Why a queue takes no more packets, if it does not: its device closed, it was aborted, or
/// the CP stopped it with an error. Checked before a publish and while one waits for room.
fn abandon_reason(device: &DeviceShared, state: &QueueState) -> Option<String> {
    if device.is_closed() {
        Some("the device was shut down".to_owned())
    } else if state.aborted.load(Ordering::Relaxed) {
        Some("the queue was aborted".to_owned())
    } else if state.inactive.view().load(MemoryOrder::Relaxed) != 0 {
        Some("the queue stopped with an error".to_owned())
    } else {
        None
    }
}
