//! Prepared launches: a launch checked once, then issued many times with new argument values.
//!
//! [`Queue::prepare`] does everything [`Queue::launch`] checks and computes that does not
//! depend on the argument values: the kernel against the queue's GPU, the geometry against the
//! kernel, the argument kinds and sizes against its metadata, the LDS, the hidden arguments,
//! the scratch the kernel needs, and one dispatch packet per kernarg segment. It sets up a
//! block of kernarg segments of its own (owned by the queue, see
//! `queue::prepared_kernargs`), each with its own completion signal, and writes the whole
//! segment image (hidden arguments included) into every one of them.
//!
//! [`PreparedLaunch::issue`] then only
//! 1. checks each value's kind and size against the prepared kinds (no allocation unless it
//!    returns an error),
//! 2. takes the next segment in turn, which is free once its signal is back at 0 (one acquire
//!    load; the previous launch in that segment has completed; if not, it sleeps on the
//!    queue's kernarg event like [`Queue::launch`] does),
//! 3. writes the explicit argument values into it (a few stores; the rest of the segment is
//!    already in place), arms its signal (1; the CP decrements it when the kernel completes),
//! 4. publishes the segment's prebuilt packet through `aql`'s producer and rings the doorbell.
//!
//! Nothing is allocated and no system call is made but the doorbell. Two shared reads guard
//! the path: the queue's state (held shared so that a shutdown cannot free the ring and the
//! kernarg memory under it; an uncontended read lock) and, for kernels with a private
//! segment only, the queue's scratch (so it cannot be replaced while the packet is published).
//! `issue` takes `&mut self`: a prepared launch is issued from one thread at a time, so its
//! segments need no lock of their own.
//!
//! Typed buffer arguments ([`Arg::buffer`]) are kept alive per segment, in places set aside at
//! preparation: a buffer lives until its segment's next launch (which waits for this one to
//! complete) or until the prepared launch goes, whose segments then stay with the queue until
//! their kernels have completed.

use std::any::Any;
use std::fmt;
use std::ptr::NonNull;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use aql::builder::{AqlPacket, DispatchBuilder};
use aql::packet::RawPacket;
use aql::signal::{Condition, MemoryOrder, SignalRef};

use super::DEFAULT_STACK_BYTES;
use crate::error::{Error, Result};
use crate::kernarg::{Arg, ArgKind, Geometry, KernargError};
use crate::kernel::Kernel;
use crate::queue::kernarg_ring::Holds;
use crate::queue::{Queue, QueueState};
use crate::signal::SignalWait;

/// Kernarg segments a prepared launch sets up unless [`PrepareOptions::in_flight`] says
/// otherwise (fewer on smaller queues): how many of its launches may be in flight at once.
pub const DEFAULT_IN_FLIGHT: u32 = 64;

/// How to prepare a launch, beyond the kernel, geometry and argument kinds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrepareOptions {
    /// Set the dispatch's barrier bit on every launch (see
    /// [`LaunchOptions::barrier`](super::LaunchOptions::barrier)).
    pub barrier: bool,
    /// Stack bytes per work-item for a kernel with a dynamic call stack (see
    /// [`LaunchOptions::stack_bytes`](super::LaunchOptions::stack_bytes)).
    pub stack_bytes: Option<u32>,
    /// Launches that may be in flight at once (kernarg segments set up); `0`: the smaller of
    /// [`DEFAULT_IN_FLIGHT`] and the queue's size. At most the queue's size.
    pub in_flight: u32,
}

/// How one explicit argument is written at each issue.
#[derive(Clone, Copy, Debug)]
enum Param {
    /// A device address at `offset`; `hold` is its place among the segment's holds.
    Pointer { offset: u32, hold: usize },
    /// `size` bytes at `offset`.
    Value { offset: u32, size: u32 },
    /// A `__local` area of `bytes`, fixed at preparation (its offset and the LDS size are in
    /// the prepared segment and packet).
    Local { bytes: u32 },
}

/// One kernarg segment of a prepared launch.
struct PreparedSegment {
    /// CPU address of the segment (inside the queue's prepared kernarg memory).
    host: NonNull<u8>,
    /// Its completion signal: 0 when free, 1 while its launch is in flight.
    signal: SignalRef,
    /// The dispatch packet pointing at this segment and signal.
    packet: RawPacket,
    /// The number of the issue using it now (issues count from 1; 0: none yet).
    issue: u64,
    /// What that issue keeps alive (one place per pointer argument).
    holds: Box<[Option<Arc<dyn Any + Send + Sync>>]>,
}

/// A launch checked once and issued many times ([`Queue::prepare`]). Dropping it is always
/// safe: segments still in flight stay with the queue until their kernels complete.
pub struct PreparedLaunch {
    queue: Queue,
    /// Keeps the code loaded, names the kernel in errors.
    kernel: Kernel,
    /// The queue's key for this launch's kernarg memory.
    key: u64,
    params: Box<[Param]>,
    segments: Box<[PreparedSegment]>,
    /// Scratch bytes per work-item the packets ask for (0: none, so no scratch to hold).
    private_bytes: u32,
    /// The next issue's number.
    next: u64,
}

// SAFETY: the raw pointers (each segment's `host`) address memory the queue owns (its
// prepared kernarg memory, kept until this launch is dropped, or the queue is destroyed);
// they are dereferenced only while the queue's state is held, and written only through
// `&mut self`, so moving or sharing the handle between threads is sound.
unsafe impl Send for PreparedLaunch {}
// SAFETY: as above; `&self` methods only read signals atomically.
unsafe impl Sync for PreparedLaunch {}

/// One issue of a prepared launch, to wait on or ask about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Issued {
    number: u64,
    index: u64,
}

impl Issued {
    /// The packet's index in the queue's ring.
    pub fn packet_index(&self) -> u64 {
        self.index
    }
}

impl Queue {
    /// Prepare launches of `kernel` over `geometry` on this queue: everything
    /// [`Queue::launch`] checks is checked here once, with `args` giving the arguments' kinds
    /// and sizes (their values are only examples; each [`PreparedLaunch::issue`] gives its
    /// own). `Arg::local` sizes are fixed here.
    ///
    /// ```
    /// # if aqueduct::backend::choose().ok() != Some(aqueduct::backend::BackendChoice::Simulator) { return Ok(()); }
    /// use aqueduct::kernarg::{Arg, Geometry};
    /// use aqueduct::{Device, MemoryLocation, QueueOptions};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/bin/gfx90a/vector_add.co5");
    /// let device = Device::open()?;
    /// let gpu = &device.gpus()?[0];
    /// let executable = device.load_code_object(gpu, &std::fs::read(path).expect("code"))?;
    /// let kernel = executable.kernel("vector_add")?;
    /// let n = 256u32;
    /// let [a, b, c] = [1i32, 2, 0].map(|v| {
    ///     let buffer = device.alloc(gpu, MemoryLocation::Device, 4 * n as usize).unwrap();
    ///     buffer.write(0, &vec![v; n as usize]).unwrap();
    ///     buffer
    /// });
    /// let queue = device.create_queue(gpu, &QueueOptions::default())?;
    /// let kinds = [Arg::ptr(0), Arg::ptr(0), Arg::ptr(0), Arg::u32(0)];
    /// let mut add = queue.prepare(&kernel, &Geometry::d1(n, 64), &kinds)?;
    /// // c = a + b, then a = c + b: new values straight into kernarg memory.
    /// add.issue(&[Arg::buffer(&a), Arg::buffer(&b), Arg::buffer(&c), Arg::u32(n)])?;
    /// add.finish(None)?;
    /// add.issue(&[Arg::buffer(&c), Arg::buffer(&b), Arg::buffer(&a), Arg::u32(n)])?;
    /// add.finish(None)?;
    /// assert!(a.to_vec::<i32>()?.iter().all(|&x| x == 5));
    /// # Ok::<(), aqueduct::Error>(())
    /// ```
    pub fn prepare(
        &self,
        kernel: &Kernel,
        geometry: &Geometry,
        args: &[Arg<'_>],
    ) -> Result<PreparedLaunch> {
        self.prepare_with(kernel, geometry, args, &PrepareOptions::default())
    }

    /// [`Queue::prepare`] with options.
    pub fn prepare_with(
        &self,
        kernel: &Kernel,
        geometry: &Geometry,
        args: &[Arg<'_>],
        options: &PrepareOptions,
    ) -> Result<PreparedLaunch> {
        self.check_kernel(kernel)?;
        let in_flight = match options.in_flight {
            0 => DEFAULT_IN_FLIGHT.min(self.packets()),
            n if n <= self.packets() => n,
            n => {
                return Err(Error::InvalidArgument(format!(
                    "{n} launches in flight: the queue holds {} packets",
                    self.packets()
                )));
            }
        } as usize;
        let private_bytes = private_bytes(kernel, options.stack_bytes);
        let layout = &kernel.layout;
        let mut params = Vec::with_capacity(args.len());
        let mut pointers = 0;
        for (slot, arg) in layout.explicit_args().iter().zip(args) {
            params.push(match (slot.kind(), arg) {
                (ArgKind::Pointer(_), _) => {
                    pointers += 1;
                    Param::Pointer {
                        offset: slot.offset(),
                        hold: pointers - 1,
                    }
                }
                (ArgKind::Local { .. }, Arg::Local(bytes)) => Param::Local { bytes: *bytes },
                _ => Param::Value {
                    offset: slot.offset(),
                    size: slot.size(),
                },
            });
        }
        let device = self.owned.device();
        let (place, image, packets) = self.with_state(|state| {
            // The whole segment, checked exactly as a launch checks it (count, kinds, sizes,
            // geometry, LDS, hidden arguments the device cannot serve).
            let mut image = vec![0u8; layout.size() as usize];
            let shape = layout
                .write(&mut image, geometry, args, &state.context)
                .map_err(Error::from)?;
            self.ensure_scratch(state, private_bytes)?;
            let event = &state.kernarg_ring(device, self.gpu_id())?.event;
            let place = device.with_live(|live| {
                state
                    .prepared
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .register(
                        live,
                        self.gpu_id(),
                        event,
                        in_flight,
                        layout.reserved_size(),
                        layout.align(),
                    )
            })?;
            let packets = (0..in_flight)
                .map(|i| {
                    DispatchBuilder::new(
                        kernel.kernel_object,
                        place.gpu_address + (i * place.stride) as u64,
                    )
                    .geometry(shape.dimensions, shape.grid_size, shape.workgroup_size)
                    .group_segment_size(shape.group_segment_size)
                    .private_segment_size(private_bytes)
                    .completion_signal(place.signals[i].handle())
                    .barrier(options.barrier)
                    .build(self.dispatch_limits())
                    .map(|packet| packet.to_raw())
                    .map_err(|e| Error::InvalidArgument(format!("kernel `{}`: {e}", kernel.name)))
                })
                .collect::<Result<Vec<_>>>();
            match packets {
                Ok(packets) => Ok((place, image, packets)),
                Err(error) => {
                    // Nothing points at the block yet: it goes now.
                    state
                        .prepared
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .retire(place.key, Vec::new());
                    Err(error)
                }
            }
        })?;
        let segments = packets
            .into_iter()
            .enumerate()
            .map(|(i, packet)| {
                // SAFETY: segment `i` (< in_flight) lies inside the block just registered
                // (`stride * in_flight` bytes from `host`).
                let host = unsafe { place.host.add(i * place.stride) };
                // SAFETY: `host` is the start of a segment of `stride >= image.len()` bytes
                // that nothing else uses yet (no packet points at it, its signal is 0); the
                // block stays alive: only this launch's drop retires it.
                unsafe {
                    std::ptr::copy_nonoverlapping(image.as_ptr(), host.as_ptr(), image.len());
                }
                PreparedSegment {
                    host,
                    signal: place.signals[i],
                    packet,
                    issue: 0,
                    holds: (0..pointers).map(|_| None).collect(),
                }
            })
            .collect();
        Ok(PreparedLaunch {
            queue: self.clone(),
            kernel: kernel.clone(),
            key: place.key,
            params: params.into(),
            segments,
            private_bytes,
            next: 1,
        })
    }

    /// Fail unless `kernel` is loaded on this queue's GPU.
    pub(super) fn check_kernel(&self, kernel: &Kernel) -> Result<()> {
        if kernel.gpu_id != self.gpu_id() {
            return Err(Error::InvalidArgument(format!(
                "kernel `{}` is loaded on GPU {:#x}, the queue runs on GPU {:#x}",
                kernel.name,
                kernel.gpu_id,
                self.gpu_id()
            )));
        }
        Ok(())
    }

    /// Wait until `signal` is 0, at most `timeout`, sleeping on the queue's kernarg event;
    /// a queue error or a shutdown ends the wait with that error. The caller holds the
    /// queue's state.
    pub(super) fn wait_signal_zero(
        &self,
        state: &QueueState,
        signal: SignalRef,
        timeout: Option<Duration>,
    ) -> Result<()> {
        let device = self.owned.device();
        let ring = state.kernarg_ring(device, self.gpu_id())?;
        device.with_live(|live| {
            let check = || state.check(live, self.gpu_id(), self.queue_id());
            SignalWait {
                device,
                live,
                view: &signal,
                events: [Some(&ring.event), state.inactive.event()],
                check: &check,
            }
            .run(Condition::Eq, 0, timeout)
            .map(drop)
        })
    }

    /// Whether `signal` is 0 (its work done); while it is not, a queue error or a shutdown is
    /// returned as an error.
    pub(super) fn signal_is_zero(&self, signal: SignalRef) -> Result<bool> {
        if signal.load(MemoryOrder::Acquire) == 0 {
            return Ok(true);
        }
        let device = self.owned.device();
        self.with_state(|state| {
            device.with_live(|live| state.check(live, self.gpu_id(), self.queue_id()))
        })?;
        Ok(false)
    }

    /// Wait until every one of `signals` is 0, all within `timeout`.
    pub(super) fn wait_signals_zero(
        &self,
        signals: impl Iterator<Item = SignalRef>,
        timeout: Option<Duration>,
    ) -> Result<()> {
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        self.with_state(|state| {
            for signal in signals {
                let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
                self.wait_signal_zero(state, signal, left)?;
            }
            Ok(())
        })
    }
}

/// Scratch bytes per work-item a launch of `kernel` asks for: its private segment, plus the
/// stack for a kernel with a dynamic call stack.
pub(super) fn private_bytes(kernel: &Kernel, stack_bytes: Option<u32>) -> u32 {
    if kernel.layout.uses_dynamic_stack() {
        kernel
            .private_segment_size
            .saturating_add(stack_bytes.unwrap_or(DEFAULT_STACK_BYTES))
    } else {
        kernel.private_segment_size
    }
}

impl PreparedLaunch {
    /// Launch once more with new argument values: `args` must have the kinds and sizes the
    /// launch was prepared with (`Arg::local` sizes as prepared). Waits while the next kernarg
    /// segment's previous launch has not completed, or the ring is full.
    pub fn issue(&mut self, args: &[Arg<'_>]) -> Result<Issued> {
        self.issue_until(args, None)
    }

    /// [`PreparedLaunch::issue`], giving up at `deadline` (a timeout error) if no segment
    /// or no ring slot has become free by then.
    pub fn issue_until(&mut self, args: &[Arg<'_>], deadline: Option<Instant>) -> Result<Issued> {
        self.check(args)?;
        let number = self.next;
        let count = self.segments.len();
        let segment = &mut self.segments[(number % count as u64) as usize];
        let queue = &self.queue;
        let private_bytes = self.private_bytes;
        let params = &self.params;
        let index = queue.with_state_fast(|state| {
            if segment.signal.load(MemoryOrder::Acquire) != 0 {
                let timeout = deadline.map(|d| d.saturating_duration_since(Instant::now()));
                queue.wait_signal_zero(state, segment.signal, timeout)?;
            }
            // The scratch the packet asks for stays in place until it is published (it only
            // grows; a kernel without a private segment needs none held).
            let _scratch = if private_bytes == 0 {
                None
            } else {
                Some(state.scratch.hold(private_bytes).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "the queue provides less scratch than the {private_bytes} bytes per \
                         work-item it was prepared with"
                    ))
                })?)
            };
            for (param, arg) in params.iter().zip(args) {
                match (*param, arg) {
                    (Param::Pointer { offset, .. }, _) => {
                        let address = arg.address().unwrap_or_default().to_le_bytes();
                        // SAFETY: see `write_at`; a pointer slot is 8 bytes inside the segment.
                        unsafe { write_at(segment.host, offset, &address) };
                    }
                    (Param::Value { offset, size }, _) => {
                        let bytes = arg.value_bytes().unwrap_or_default();
                        debug_assert_eq!(bytes.len(), size as usize);
                        // SAFETY: see `write_at`; `check` proved the value is `size` bytes.
                        unsafe { write_at(segment.host, offset, bytes) };
                    }
                    (Param::Local { .. }, _) => {}
                }
            }
            // Arm the signal: the CP decrements it to 0 when this launch completes. The
            // packet's header is published with a release store after it.
            segment.signal.store(1, MemoryOrder::Relaxed);
            queue
                .publish(state, &segment.packet, deadline)
                .inspect_err(|_| segment.signal.store(0, MemoryOrder::Relaxed))
        })?;
        self.next += 1;
        segment.issue = number;
        // The segment's previous launch has completed (it was free): what it kept goes now,
        // outside the queue's state.
        for (param, arg) in params.iter().zip(args) {
            if let Param::Pointer { hold, .. } = *param {
                segment.holds[hold] = match arg {
                    Arg::Memory(memory) => Some(memory.keep_alive()),
                    _ => None,
                };
            }
        }
        Ok(Issued { number, index })
    }

    /// Check `args` against the prepared kinds and sizes.
    fn check(&self, args: &[Arg<'_>]) -> Result<()> {
        if args.len() != self.params.len() {
            return Err(KernargError::ArgumentCount {
                kernel: self.kernel.layout.kernel_name().to_owned(),
                expected: self.params.len(),
                given: args.len(),
            }
            .into());
        }
        for (index, (param, arg)) in self.params.iter().zip(args).enumerate() {
            let fits = match (*param, arg) {
                (Param::Value { size, .. }, _) => {
                    arg.value_bytes().map(<[u8]>::len) == Some(size as usize)
                }
                (Param::Local { bytes }, Arg::Local(given)) if bytes != *given => {
                    return Err(self.mismatch(
                        index,
                        arg,
                        Some(format!(
                            "the {bytes} bytes of dynamic LDS fixed when the launch was \
                             prepared (prepare it again for another size)"
                        )),
                    ));
                }
                (Param::Pointer { .. }, Arg::Pointer(_) | Arg::Memory(_))
                | (Param::Local { .. }, Arg::Local(_)) => true,
                _ => false,
            };
            if !fits {
                return Err(self.mismatch(index, arg, None));
            }
        }
        Ok(())
    }

    /// The error for argument `index`, which does not fit what the kernel (or `expected`)
    /// says.
    #[cold]
    fn mismatch(&self, index: usize, arg: &Arg<'_>, expected: Option<String>) -> Error {
        let layout = &self.kernel.layout;
        let slot = &layout.explicit_args()[index];
        KernargError::ArgumentMismatch {
            kernel: layout.kernel_name().to_owned(),
            index,
            name: slot.name().map(str::to_owned),
            expected: expected.unwrap_or_else(|| slot.expected()),
            given: arg.describe(),
        }
        .into()
    }

    /// Whether `issued` has completed (a queue error is returned as an error).
    pub fn is_complete(&self, issued: Issued) -> Result<bool> {
        let Some(segment) = self.segment_of(issued)? else {
            return Ok(true);
        };
        self.queue.signal_is_zero(segment.signal)
    }

    /// Wait until `issued` has completed, at most `timeout`; a queue error or a shutdown ends
    /// the wait with that error.
    pub fn wait(&self, issued: Issued, timeout: Option<Duration>) -> Result<()> {
        let Some(segment) = self.segment_of(issued)? else {
            return Ok(());
        };
        self.queue
            .with_state(|state| self.queue.wait_signal_zero(state, segment.signal, timeout))
    }

    /// Wait until every launch issued so far has completed, at most `timeout`.
    pub fn finish(&self, timeout: Option<Duration>) -> Result<()> {
        self.queue
            .wait_signals_zero(self.segments.iter().map(|segment| segment.signal), timeout)
    }

    /// The segment `issued` used, `None` if a later issue has taken it (so it completed).
    fn segment_of(&self, issued: Issued) -> Result<Option<&PreparedSegment>> {
        if issued.number == 0 || issued.number >= self.next {
            return Err(Error::InvalidArgument(format!(
                "issue {} was not made by this prepared launch",
                issued.number
            )));
        }
        let segment = &self.segments[(issued.number % self.segments.len() as u64) as usize];
        Ok((segment.issue == issued.number).then_some(segment))
    }

    /// The kernel it launches.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The queue it launches on.
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// Launches that may be in flight at once (its kernarg segments).
    pub fn in_flight(&self) -> usize {
        self.segments.len()
    }
}

/// Write `bytes` at `offset` of the kernarg segment at `host`.
///
/// # Safety
///
/// `offset + bytes.len()` is within the kernel's kernarg size (true of every explicit
/// argument: the layout refuses metadata that places one outside), so within the segment;
/// the caller holds the queue's state (the memory is alive), has `&mut` access to the
/// prepared launch, and the segment is free (its signal was seen at 0 with acquire: the CP
/// and the kernel no longer read it).
unsafe fn write_at(host: NonNull<u8>, offset: u32, bytes: &[u8]) {
    // SAFETY: the function's contract.
    unsafe {
        std::ptr::copy_nonoverlapping(
            bytes.as_ptr(),
            host.as_ptr().add(offset as usize),
            bytes.len(),
        );
    }
}

impl Drop for PreparedLaunch {
    fn drop(&mut self) {
        let holds: Holds = self
            .segments
            .iter_mut()
            .flat_map(|s| s.holds.iter_mut().filter_map(Option::take))
            .collect();
        let key = self.key;
        // A closed or aborted queue has been destroyed with its kernarg memory: nothing runs
        // any more, the holds may go.
        let _ = self.queue.with_state(|state| {
            state
                .prepared
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retire(key, holds);
            Ok(())
        });
    }
}

impl fmt::Debug for PreparedLaunch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedLaunch")
            .field("kernel", &self.kernel.name)
            .field("queue", &self.queue.queue_id())
            .field("in_flight", &self.segments.len())
            .field("issued", &(self.next - 1))
            .finish_non_exhaustive()
    }
}
