//! Launching kernels: [`Queue::launch`] checks the arguments and geometry against the kernel,
//! writes its kernarg segment into memory recycled per queue, publishes the dispatch packet and
//! returns a [`Launch`] to wait on.
//!
//! The hot path takes no system call but the doorbell, and allocates nothing for raw
//! arguments: a segment is claimed (waiting only if it is still in use), filled in place by
//! [`KernargLayout::write`](crate::kernarg::KernargLayout::write), and the packet published by
//! `aql`'s producer. A launch with typed buffer arguments ([`Arg::buffer`]) also records
//! one handle per buffer with its segment (one small vector): they are released when a wait
//! sees the kernel complete, or when the segment is next claimed (which waits for that), so
//! a buffer's memory outlives every launch that uses it.
//!
//! - `prepared`: [`Queue::prepare`], a launch checked once and issued many times with new
//!   argument values written straight into kernarg memory of its own;
//! - `command_list`: [`Queue::record`], launches and barriers recorded once and replayed with
//!   their packets and kernarg segments prebuilt (copies and fills recorded in a list are
//!   launches of the driver's blit kernels, made in `crate::blit`).

mod command_list;
mod prepared;

use std::fmt;
use std::time::Duration;

use aql::builder::{AqlPacket, DispatchBuilder};
use aql::signal::Condition;

use crate::error::{Error, Result};
use crate::kernarg::{Arg, Geometry};
use crate::kernel::Kernel;
use crate::queue::kernarg_ring::{Holds, KernargRing, SEGMENT_BYTES, Segment};
use crate::queue::{Queue, QueueState};
use crate::signal::{Signal, SignalWait, Timestamps};
pub use command_list::{
    CommandList, CommandListBuilder, DEFAULT_REPLAYS_IN_FLIGHT, RecordedLaunch, Replayed,
};
pub use prepared::{DEFAULT_IN_FLIGHT, Issued, PrepareOptions, PreparedLaunch};

/// How to launch, beyond the kernel, geometry and arguments.
#[derive(Clone, Copy, Debug, Default)]
pub struct LaunchOptions<'a> {
    /// A signal to decrement once the kernel completes (for other queues' barriers or host
    /// waits): published as a barrier-AND packet right after the dispatch.
    pub completion: Option<&'a Signal>,
    /// Set the dispatch's barrier bit: it starts only after every earlier packet of the queue
    /// has completed (the default lets it overlap with earlier dispatches).
    pub barrier: bool,
    /// Stack bytes per work-item for a kernel with a dynamic call stack
    /// ([`KernargLayout::uses_dynamic_stack`](crate::kernarg::KernargLayout::uses_dynamic_stack)),
    /// on top of its fixed private size; `None`: [`DEFAULT_STACK_BYTES`]. Ignored for other
    /// kernels.
    pub stack_bytes: Option<u32>,
}

/// Stack bytes per work-item a kernel with a dynamic call stack gets unless
/// [`LaunchOptions::stack_bytes`] says otherwise: 1 KiB, HIP's default `hipLimitStackSize`
/// on AMD GPUs (to our knowledge; the HIP runtime may round it, not checked).
pub const DEFAULT_STACK_BYTES: u32 = 1024;

/// A launched kernel. Waiting is optional: its kernarg segment is recycled once it completes
/// whether or not anyone waits.
#[derive(Clone)]
pub struct Launch {
    queue: Queue,
    segment: usize,
    number: u64,
    index: u64,
}

/// What a completed launch reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The CP's timestamps (queues with profiling on), in GPU ticks; `None` if they were not
    /// kept (the segment was reused before the wait looked).
    pub timestamps: Option<Timestamps>,
    /// The kernel's GPU time, from the timestamps and the GPU's timestamp frequency.
    pub gpu_time: Option<Duration>,
}

impl Queue {
    /// Launch `kernel` on this queue over `geometry` with explicit arguments `args` (hidden
    /// arguments are filled in). Errors in the arguments or geometry are found before
    /// anything is written to the GPU.
    ///
    /// ```
    /// # if aqueduct::backend::choose().ok() != Some(aqueduct::backend::BackendChoice::Simulator) { return Ok(()); }
    /// use aqueduct::kernarg::{Arg, Geometry};
    /// use aqueduct::{Device, MemoryLocation, QueueOptions};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/bin/gfx90a/vector_add.co5");
    /// let device = Device::open()?;
    /// let gpu = &device.gpus()?[0];
    /// let code = std::fs::read(path).expect("a committed code object");
    /// // The executable must outlive the launches of its kernels.
    /// let executable = device.load_code_object(gpu, &code)?;
    /// let kernel = executable.kernel("vector_add")?;
    /// let n = 1000u32;
    /// let [a, b, c] = [1i32, 2, 0].map(|v| {
    ///     let buffer = device.alloc(gpu, MemoryLocation::Device, 4 * n as usize).unwrap();
    ///     buffer.write(0, &vec![v; n as usize]).unwrap();
    ///     buffer
    /// });
    /// let queue = device.create_queue(gpu, &QueueOptions::default())?;
    /// // Typed: the launch keeps the buffers' memory alive until the kernel has completed.
    /// let args = [Arg::buffer(&a), Arg::buffer(&b), Arg::buffer(&c), Arg::u32(n)];
    /// let launch = queue.launch(&kernel, &Geometry::d1(n, 64), &args)?;
    /// launch.wait(None)?;
    /// assert!(c.to_vec::<i32>()?.iter().all(|&x| x == 3));
    /// # Ok::<(), aqueduct::Error>(())
    /// ```
    pub fn launch(&self, kernel: &Kernel, geometry: &Geometry, args: &[Arg<'_>]) -> Result<Launch> {
        self.launch_with(kernel, geometry, args, &LaunchOptions::default())
    }

    /// [`Queue::launch`] with options.
    pub fn launch_with(
        &self,
        kernel: &Kernel,
        geometry: &Geometry,
        args: &[Arg<'_>],
        options: &LaunchOptions<'_>,
    ) -> Result<Launch> {
        self.check_kernel(kernel)?;
        if kernel.layout.reserved_size() as usize > SEGMENT_BYTES {
            return Err(Error::Unsupported(format!(
                "kernel `{}` takes {} bytes of kernel arguments; launches carry at most {SEGMENT_BYTES}",
                kernel.name,
                kernel.layout.reserved_size()
            )));
        }
        let private_bytes = prepared::private_bytes(kernel, options.stack_bytes);
        let device = self.owned.device();
        // What this launch keeps alive until it completes: the memory of its typed arguments
        // (no allocation when there are none).
        let holds: Holds = args
            .iter()
            .filter_map(|arg| match arg {
                Arg::Memory(memory) => Some(memory.keep_alive()),
                _ => None,
            })
            .collect();
        let (segment, number, index, previous) = self.with_state_fast(|state| {
            // The scratch this launch needs stays in place until its packet is published.
            let _scratch = loop {
                if let Some(held) = state.scratch.hold(private_bytes) {
                    break held;
                }
                self.ensure_scratch(state, private_bytes)?;
            };
            let ring = state.kernarg_ring(device, self.gpu_id())?;
            let claim =
                ring.claim(|segment| self.wait_segment(state, ring, segment, None).map(drop))?;
            let built = kernel
                .layout
                .write(claim.bytes, geometry, args, &state.context)
                .map_err(Error::from)
                .and_then(|shape| {
                    DispatchBuilder::new(kernel.kernel_object, claim.gpu_address)
                        .geometry(shape.dimensions, shape.grid_size, shape.workgroup_size)
                        .group_segment_size(shape.group_segment_size)
                        .private_segment_size(private_bytes)
                        .completion_signal(ring.segments[claim.index].signal.view().handle())
                        .barrier(options.barrier)
                        .build(self.dispatch_limits())
                        .map_err(|e| {
                            Error::InvalidArgument(format!("kernel `{}`: {e}", kernel.name))
                        })
                });
            // A launch that fails before its packet is out gives its segment back.
            match built.and_then(|packet| self.publish(state, &packet.to_raw(), None)) {
                Ok(index) => {
                    let previous = ring.hold(claim.index, holds);
                    Ok((claim.index, claim.launch, index, previous))
                }
                Err(error) => {
                    ring.release(&claim);
                    Err(error)
                }
            }
        })?;
        // The segment's previous launch completed (the claim waited for it): what it kept goes
        // now, outside the queue's state.
        drop(previous);
        if let Some(signal) = options.completion {
            let marker = aql::builder::barrier_and(&[], signal.handle())
                .map_err(|e| Error::InvalidArgument(e.to_string()))?
                .barrier(true);
            self.submit(&marker)?;
        }
        Ok(Launch {
            queue: self.clone(),
            segment,
            number,
            index,
        })
    }

    /// Wait until `segment`'s signal is 0 (its launch completed), sleeping on the ring's event.
    /// The caller holds the queue's state (never take its lock again here: a shutdown may be
    /// queued for it).
    fn wait_segment(
        &self,
        state: &QueueState,
        ring: &KernargRing,
        segment: &Segment,
        timeout: Option<Duration>,
    ) -> Result<i64> {
        let device = self.owned.device();
        device.with_live(|live| {
            let check = || state.check(live, self.gpu_id(), self.queue_id());
            SignalWait {
                device,
                live,
                view: segment.signal.view(),
                events: [Some(&ring.event), state.inactive.event()],
                check: &check,
            }
            .run(Condition::Eq, 0, timeout)
        })
    }
}

impl Launch {
    /// The packet's index in the queue's ring.
    pub fn packet_index(&self) -> u64 {
        self.index
    }

    /// The queue it runs on.
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// Whether the kernel has completed (a queue error is returned as an error).
    pub fn is_complete(&self) -> Result<bool> {
        let device = self.queue.owned.device();
        self.queue.with_state(|state| {
            let ring = state.kernarg_ring(device, self.queue.gpu_id())?;
            if ring.completed(self.segment, self.number).is_some() {
                return Ok(true);
            }
            device
                .with_live(|live| state.check(live, self.queue.gpu_id(), self.queue.queue_id()))?;
            Ok(false)
        })
    }

    /// Wait until the kernel has completed, at most `timeout`; a queue error (a fault in the
    /// kernel) or a shutdown ends the wait with that error.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<Completion> {
        let device = self.queue.owned.device();
        let frequency = device
            .gpus()
            .iter()
            .find(|g| g.gpu_id == self.queue.gpu_id())
            .map_or(0, |g| g.timestamp_frequency_hz);
        let deadline = timeout.and_then(|t| std::time::Instant::now().checked_add(t));
        loop {
            let (done, released) = self.queue.with_state(|state| {
                let ring = state.kernarg_ring(device, self.queue.gpu_id())?;
                if let Some(times) = ring.completed(self.segment, self.number) {
                    return Ok((Some(times), ring.release_holds(self.segment, self.number)));
                }
                let remaining =
                    deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
                self.queue
                    .wait_segment(state, ring, &ring.segments[self.segment], remaining)?;
                let done = ring.completed(self.segment, self.number);
                let released = if done.is_some() {
                    ring.release_holds(self.segment, self.number)
                } else {
                    Vec::new()
                };
                Ok((done, released))
            })?;
            // The kernel has completed: the memory it used may go (outside the queue's state).
            drop(released);
            if let Some(timestamps) = done {
                let timestamps = timestamps.filter(|t| t.start != 0);
                return Ok(Completion {
                    timestamps,
                    gpu_time: timestamps.and_then(|t| t.duration(frequency)),
                });
            }
        }
    }

    /// [`Launch::wait`], and if the kernel has not completed within `timeout`, abort its
    /// queue ([`Queue::abort`]) and return the timeout error: the hung kernel is stopped, the
    /// device stays usable (make a new queue), and every later call on this queue fails with
    /// [`QueueError::Aborted`](crate::QueueError::Aborted).
    pub fn wait_or_abort(&self, timeout: Duration) -> Result<Completion> {
        match self.wait(Some(timeout)) {
            Err(timeout @ Error::Timeout { .. }) => {
                self.queue.abort()?;
                Err(timeout)
            }
            other => other,
        }
    }
}

impl fmt::Debug for Launch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Launch")
            .field("queue", &self.queue.queue_id())
            .field("packet_index", &self.index)
            .finish_non_exhaustive()
    }
}
