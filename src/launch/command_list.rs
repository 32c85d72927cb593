//! Recorded command lists: launches and barriers recorded once, replayed many times with
//! their packets and kernarg segments prebuilt.
//!
//! [`Queue::record`] starts a [`CommandListBuilder`]. Each [`CommandListBuilder::launch`] is
//! checked as [`Queue::launch`] checks it and its whole kernarg segment written into the
//! list's image; [`CommandListBuilder::barrier`] makes the next launch wait for every earlier
//! packet (the AQL barrier bit); [`CommandListBuilder::wait_for`] adds a barrier-AND packet
//! on signals from outside. [`CommandListBuilder::finish`] sets up a block of kernarg memory
//! owned by the queue (as a prepared launch does) with one copy of the image per replay that
//! may be in flight, and builds every packet of every copy, followed by one barrier-AND packet
//! (barrier bit set) whose completion signal says that the whole replay has completed.
//!
//! [`CommandList::replay`] then takes the next copy (free once its signal is back at 0),
//! arms its signal, reserves all its slots in the ring at once, writes the prebuilt packets
//! and rings the doorbell once. [`CommandList::set_arg`] changes an argument value of one
//! recorded launch for the replays that follow (checked as a prepared launch checks it); a
//! copy whose image is older than the latest change is refreshed when it is next replayed.

use std::any::Any;
use std::fmt;
use std::ptr::NonNull;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use aql::builder::{AqlPacket, DispatchBuilder};
use aql::packet::RawPacket;
use aql::signal::{MemoryOrder, SignalRef};

use super::prepared::private_bytes;
use crate::error::{Error, Result};
use crate::kernarg::{Arg, ArgKind, DispatchShape, Geometry, KernargError};
use crate::kernel::Kernel;
use crate::queue::Queue;
use crate::signal::Signal;

/// Replays of one list that may be in flight at once unless [`CommandListBuilder::in_flight`]
/// says otherwise.
pub const DEFAULT_REPLAYS_IN_FLIGHT: u32 = 4;

/// Where each recorded launch's kernarg segment starts in the image: cache-line aligned.
const SEGMENT_ALIGN: usize = 64;

/// One recorded packet.
enum Recorded {
    Launch {
        kernel: Kernel,
        shape: DispatchShape,
        private_bytes: u32,
        /// Offset of its kernarg segment in the image.
        offset: usize,
        barrier: bool,
    },
    WaitFor {
        signals: Vec<Signal>,
        barrier: bool,
    },
}

/// A command list being recorded for one queue ([`Queue::record`]).
pub struct CommandListBuilder<'q> {
    queue: &'q Queue,
    recorded: Vec<Recorded>,
    image: Vec<u8>,
    holds: Vec<Arc<dyn Any + Send + Sync>>,
    barrier_next: bool,
    in_flight: u32,
}

/// A recorded launch of a command list, to change its arguments with
/// [`CommandList::set_arg`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordedLaunch(usize);

/// A finished command list: replay it with [`CommandList::replay`].
pub struct CommandList {
    queue: Queue,
    recorded: Vec<Recorded>,
    /// The current image of every kernarg segment, concatenated.
    image: Vec<u8>,
    /// Bumped by every [`CommandList::set_arg`].
    generation: u64,
    key: u64,
    copies: Box<[ListCopy]>,
    /// Largest scratch any launch asks for (0: none).
    private_bytes: u32,
    /// What the launches keep alive: for the list's life.
    holds: Vec<Arc<dyn Any + Send + Sync>>,
    next: u64,
}

/// One copy of the list's kernarg image and its packets.
struct ListCopy {
    host: NonNull<u8>,
    signal: SignalRef,
    packets: Box<[RawPacket]>,
    /// The image generation the copy holds.
    generation: u64,
    /// The replay using it now (0: none yet).
    replay: u64,
}

// SAFETY: as for `PreparedLaunch`: `host` addresses kernarg memory the queue owns until this
// list is dropped; it is written only through `&mut self` with the queue's state held.
unsafe impl Send for CommandList {}
// SAFETY: as above; `&self` methods only read signals atomically.
unsafe impl Sync for CommandList {}

/// One replay of a command list, to wait on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replayed {
    number: u64,
    first_index: u64,
}

impl Replayed {
    /// The ring index of the replay's first packet.
    pub fn first_packet_index(&self) -> u64 {
        self.first_index
    }
}

impl Queue {
    /// Start recording a command list for this queue.
    ///
    /// ```
    /// # if aqueduct::backend::choose().ok() != Some(aqueduct::backend::BackendChoice::Simulator) { return Ok(()); }
    /// use aqueduct::kernarg::{Arg, Geometry};
    /// use aqueduct::{Device, MemoryLocation, QueueOptions};
    /// # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/bin/gfx90a/vector_add.co5");
    /// let device = Device::open()?;
    /// let gpu = &device.gpus()?[0];
    /// let executable = device.load_code_object(gpu, &std::fs::read(path).expect("code"))?;
    /// let add = executable.kernel("vector_add")?;
    /// let n = 256u32;
    /// let [x, one] = [0i32, 1].map(|v| {
    ///     let buffer = device.alloc(gpu, MemoryLocation::Device, 4 * n as usize).unwrap();
    ///     buffer.write(0, &vec![v; n as usize]).unwrap();
    ///     buffer
    /// });
    /// let queue = device.create_queue(gpu, &QueueOptions::default())?;
    /// let step = [Arg::buffer(&x), Arg::buffer(&one), Arg::buffer(&x), Arg::u32(n)];
    /// let mut list = queue.record();
    /// list.launch(&add, &Geometry::d1(n, 64), &step)?; // x += 1
    /// list.barrier();
    /// list.launch(&add, &Geometry::d1(n, 64), &step)?; // x += 1, after the first
    /// let mut list = list.finish()?;
    /// for _ in 0..3 {
    ///     list.replay()?;
    /// }
    /// list.finish(None)?;
    /// assert!(x.to_vec::<i32>()?.iter().all(|&v| v == 6));
    /// # Ok::<(), aqueduct::Error>(())
    /// ```
    pub fn record(&self) -> CommandListBuilder<'_> {
        CommandListBuilder {
            queue: self,
            recorded: Vec::new(),
            image: Vec::new(),
            holds: Vec::new(),
            barrier_next: false,
            in_flight: DEFAULT_REPLAYS_IN_FLIGHT,
        }
    }
}

impl<'q> CommandListBuilder<'q> {
    /// The queue the list is recorded for.
    pub(crate) fn queue(&self) -> &'q Queue {
        self.queue
    }

    /// Record a launch of `kernel` (checked as [`Queue::launch`] checks it); typed buffers
    /// are kept alive for the list's life.
    pub fn launch(
        &mut self,
        kernel: &Kernel,
        geometry: &Geometry,
        args: &[Arg<'_>],
    ) -> Result<RecordedLaunch> {
        self.queue.check_kernel(kernel)?;
        let layout = &kernel.layout;
        let offset = self.image.len().next_multiple_of(SEGMENT_ALIGN);
        let mut segment = vec![0u8; layout.reserved_size().max(1) as usize];
        let context = self.queue.with_state(|state| Ok(state.context))?;
        let shape = layout
            .write(&mut segment, geometry, args, &context)
            .map_err(Error::from)?;
        self.image.resize(offset, 0);
        self.image.extend_from_slice(&segment);
        self.holds.extend(args.iter().filter_map(|arg| match arg {
            Arg::Memory(memory) => Some(memory.keep_alive()),
            _ => None,
        }));
        self.recorded.push(Recorded::Launch {
            kernel: kernel.clone(),
            shape,
            private_bytes: private_bytes(kernel, None),
            offset,
            barrier: std::mem::take(&mut self.barrier_next),
        });
        Ok(RecordedLaunch(self.recorded.len() - 1))
    }

    /// Make the next recorded packet wait until every earlier packet of the queue has
    /// completed (the AQL barrier bit).
    pub fn barrier(&mut self) {
        self.barrier_next = true;
    }

    /// Record a barrier-AND packet: later packets wait until every signal in `signals` (at
    /// most 5) is 0. The list keeps the signals for its life.
    pub fn wait_for(&mut self, signals: &[&Signal]) -> Result<()> {
        if signals.len() > 5 {
            return Err(Error::InvalidArgument(format!(
                "a barrier-AND packet waits on at most 5 signals, {} given",
                signals.len()
            )));
        }
        self.recorded.push(Recorded::WaitFor {
            signals: signals.iter().map(|s| (*s).clone()).collect(),
            barrier: std::mem::take(&mut self.barrier_next),
        });
        Ok(())
    }

    /// Let `replays` replays be in flight at once (copies of the kernarg image); default
    /// [`DEFAULT_REPLAYS_IN_FLIGHT`].
    #[must_use]
    pub fn in_flight(mut self, replays: u32) -> Self {
        self.in_flight = replays.max(1);
        self
    }

    /// Set up the list's kernarg memory and build its packets.
    pub fn finish(self) -> Result<CommandList> {
        let queue = self.queue;
        let packets = self.recorded.len() + 1;
        if packets > queue.packets() as usize {
            return Err(Error::InvalidArgument(format!(
                "a command list of {packets} packets (with its completion barrier) does not fit \
                 a queue of {}",
                queue.packets()
            )));
        }
        let private_bytes = self
            .recorded
            .iter()
            .map(|r| match r {
                Recorded::Launch { private_bytes, .. } => *private_bytes,
                Recorded::WaitFor { .. } => 0,
            })
            .max()
            .unwrap_or(0);
        let copies = self.in_flight as usize;
        let device = queue.owned.device();
        let (place, built) = queue.with_state(|state| {
            queue.ensure_scratch(state, private_bytes)?;
            let event = &state.kernarg_ring(device, queue.gpu_id())?.event;
            let place = device.with_live(|live| {
                state
                    .prepared
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .register(
                        live,
                        queue.gpu_id(),
                        event,
                        copies,
                        self.image.len() as u32,
                        SEGMENT_ALIGN as u32,
                    )
            })?;
            let built = (0..copies)
                .map(|copy| {
                    let base = place.gpu_address + (copy * place.stride) as u64;
                    self.build_packets(queue, base, place.signals[copy].handle())
                })
                .collect::<Result<Vec<_>>>();
            match built {
                Ok(built) => Ok((place, built)),
                Err(error) => {
                    state
                        .prepared
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .retire(place.key, Vec::new());
                    Err(error)
                }
            }
        })?;
        let copies = built
            .into_iter()
            .enumerate()
            .map(|(copy, packets)| {
                // SAFETY: copy `copy` (< copies) lies inside the block just registered.
                let host = unsafe { place.host.add(copy * place.stride) };
                // SAFETY: `host` starts `stride >= image.len()` bytes no packet points at yet.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        self.image.as_ptr(),
                        host.as_ptr(),
                        self.image.len(),
                    );
                }
                ListCopy {
                    host,
                    signal: place.signals[copy],
                    packets: packets.into(),
                    generation: 0,
                    replay: 0,
                }
            })
            .collect();
        Ok(CommandList {
            queue: queue.clone(),
            recorded: self.recorded,
            image: self.image,
            generation: 0,
            key: place.key,
            copies,
            private_bytes,
            holds: self.holds,
            next: 1,
        })
    }

    /// The packets of one copy whose image starts at GPU address `base`, ending with the
    /// completion barrier on `signal`.
    fn build_packets(&self, queue: &Queue, base: u64, signal: u64) -> Result<Vec<RawPacket>> {
        let mut packets = Vec::with_capacity(self.recorded.len() + 1);
        for recorded in &self.recorded {
            packets.push(match recorded {
                Recorded::Launch {
                    kernel,
                    shape,
                    private_bytes,
                    offset,
                    barrier,
                } => DispatchBuilder::new(kernel.kernel_object, base + *offset as u64)
                    .geometry(shape.dimensions, shape.grid_size, shape.workgroup_size)
                    .group_segment_size(shape.group_segment_size)
                    .private_segment_size(*private_bytes)
                    .barrier(*barrier)
                    .build(queue.dispatch_limits())
                    .map_err(|e| Error::InvalidArgument(format!("kernel `{}`: {e}", kernel.name)))?
                    .to_raw(),
                Recorded::WaitFor { signals, barrier } => {
                    let handles: Vec<u64> = signals.iter().map(Signal::handle).collect();
                    aql::builder::barrier_and(&handles, 0)
                        .map_err(|e| Error::InvalidArgument(e.to_string()))?
                        .barrier(*barrier)
                        .to_raw()
                }
            });
        }
        packets.push(
            aql::builder::barrier_and(&[], signal)
                .map_err(|e| Error::InvalidArgument(e.to_string()))?
                .barrier(true)
                .to_raw(),
        );
        Ok(packets)
    }
}

impl CommandList {
    /// Replay the list: every recorded packet, then its completion barrier, published with one
    /// reservation and one doorbell. Waits while the next copy's previous replay has not
    /// completed, or the ring has no room for the whole list.
    pub fn replay(&mut self) -> Result<Replayed> {
        self.replay_until(None)
    }

    /// [`CommandList::replay`], giving up at `deadline` (a timeout error).
    pub fn replay_until(&mut self, deadline: Option<Instant>) -> Result<Replayed> {
        let number = self.next;
        let count = self.copies.len() as u64;
        let copy = &mut self.copies[(number % count) as usize];
        let queue = &self.queue;
        let (image, generation, private_bytes) = (&self.image, self.generation, self.private_bytes);
        let first_index = queue.with_state_fast(|state| {
            if copy.signal.load(MemoryOrder::Acquire) != 0 {
                let timeout = deadline.map(|d| d.saturating_duration_since(Instant::now()));
                queue.wait_signal_zero(state, copy.signal, timeout)?;
            }
            let _scratch = if private_bytes == 0 {
                None
            } else {
                Some(state.scratch.hold(private_bytes).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "the queue provides less scratch than the {private_bytes} bytes per \
                         work-item the list was recorded with"
                    ))
                })?)
            };
            if copy.generation != generation {
                // SAFETY: the copy is `stride >= image.len()` bytes of the list's block, alive
                // while the queue's state is held (only this list's drop retires it), free
                // (its signal was seen at 0 with acquire) and written only through `&mut self`.
                unsafe {
                    std::ptr::copy_nonoverlapping(image.as_ptr(), copy.host.as_ptr(), image.len());
                }
                copy.generation = generation;
            }
            copy.signal.store(1, MemoryOrder::Relaxed);
            queue
                .publish_all(state, &copy.packets, deadline)
                .inspect_err(|_| copy.signal.store(0, MemoryOrder::Relaxed))
        })?;
        copy.replay = number;
        self.next += 1;
        Ok(Replayed {
            number,
            first_index,
        })
    }

    /// Change argument `index` of recorded launch `launch` to `value` for the replays that
    /// follow (replays in flight keep their values). The value must have the kind and size
    /// the kernel declares; `Arg::local` sizes cannot change. A typed buffer is kept alive for
    /// the list's life.
    pub fn set_arg(&mut self, launch: RecordedLaunch, index: usize, value: &Arg<'_>) -> Result<()> {
        let Some(Recorded::Launch { kernel, offset, .. }) = self.recorded.get(launch.0) else {
            return Err(Error::InvalidArgument(format!(
                "{launch:?} is not a launch of this list"
            )));
        };
        let layout = &kernel.layout;
        let Some(slot) = layout.explicit_args().get(index) else {
            return Err(KernargError::ArgumentCount {
                kernel: layout.kernel_name().to_owned(),
                expected: layout.explicit_args().len(),
                given: index + 1,
            }
            .into());
        };
        let at = offset + slot.offset() as usize;
        let mismatch = || -> Error {
            KernargError::ArgumentMismatch {
                kernel: layout.kernel_name().to_owned(),
                index,
                name: slot.name().map(str::to_owned),
                expected: slot.expected(),
                given: value.describe(),
            }
            .into()
        };
        match (slot.kind(), value) {
            (ArgKind::Pointer(_), Arg::Pointer(_) | Arg::Memory(_)) => {
                let address = value.address().unwrap_or_default();
                self.image[at..at + 8].copy_from_slice(&address.to_le_bytes());
                if let Arg::Memory(memory) = value {
                    self.holds.push(memory.keep_alive());
                }
            }
            (ArgKind::ByValue, _)
                if value.value_bytes().map(<[u8]>::len) == Some(slot.size() as usize) =>
            {
                let bytes = value.value_bytes().unwrap_or_default();
                self.image[at..at + bytes.len()].copy_from_slice(bytes);
            }
            _ => return Err(mismatch()),
        }
        self.generation += 1;
        Ok(())
    }

    /// Whether `replayed` has completed (a queue error is returned as an error).
    pub fn is_complete(&self, replayed: Replayed) -> Result<bool> {
        let Some(copy) = self.copy_of(replayed)? else {
            return Ok(true);
        };
        self.queue.signal_is_zero(copy.signal)
    }

    /// Wait until `replayed` has completed, at most `timeout`.
    pub fn wait(&self, replayed: Replayed, timeout: Option<Duration>) -> Result<()> {
        let Some(copy) = self.copy_of(replayed)? else {
            return Ok(());
        };
        self.queue
            .with_state(|state| self.queue.wait_signal_zero(state, copy.signal, timeout))
    }

    /// Wait until every replay so far has completed, at most `timeout`.
    pub fn finish(&self, timeout: Option<Duration>) -> Result<()> {
        self.queue
            .wait_signals_zero(self.copies.iter().map(|copy| copy.signal), timeout)
    }

    /// Packets one replay publishes (the recorded ones and the completion barrier).
    pub fn packets(&self) -> usize {
        self.recorded.len() + 1
    }

    fn copy_of(&self, replayed: Replayed) -> Result<Option<&ListCopy>> {
        if replayed.number == 0 || replayed.number >= self.next {
            return Err(Error::InvalidArgument(format!(
                "replay {} was not made by this command list",
                replayed.number
            )));
        }
        let copy = &self.copies[(replayed.number % self.copies.len() as u64) as usize];
        Ok((copy.replay == replayed.number).then_some(copy))
    }
}

impl Drop for CommandList {
    fn drop(&mut self) {
        let holds = std::mem::take(&mut self.holds);
        let key = self.key;
        // A closed or aborted queue has been destroyed with its kernarg memory.
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

impl fmt::Debug for CommandList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandList")
            .field("queue", &self.queue.queue_id())
            .field("packets", &self.packets())
            .field("in_flight", &self.copies.len())
            .field("replayed", &(self.next - 1))
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for CommandListBuilder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandListBuilder")
            .field("queue", &self.queue.queue_id())
            .field("recorded", &self.recorded.len())
            .finish_non_exhaustive()
    }
}
