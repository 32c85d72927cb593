//! One queue's command processor: the thread that consumes AQL packets strictly in order from
//! the read index (aql.md §7).
//!
//! The loop, per packet:
//! 1. work out the write index (doorbell, `write_dispatch_id`); park if the ring is empty;
//! 2. acquire-load the slot's first word; stall (poll with backoff, wake on doorbells) while
//!    it is INVALID;
//! 3. decode and validate; on an error post it to `queue_inactive_signal` and halt without
//!    advancing the read index;
//! 4. execute: launch a dispatch on the shader core, or wait for a barrier's condition, or run
//!    a PM4 indirect buffer, after the acquire fence;
//! 5. complete: release fence, INVALID back into the slot, read index advanced (release store
//!    to `read_dispatch_id`), timestamps if the queue profiles, completion signal decremented,
//!    its mailbox posted and an end-of-pipe interrupt raised.
//!
//! Concurrency model: the processor launches one packet at a time and completes it before it
//! fetches the next. HSA allows a packet without the barrier bit to start while earlier ones
//! still run, but does not require it, so this is one of the behaviours hardware may show: the
//! barrier bit always holds, completions are always in order, and a slot is never reused while
//! the kernel it launched can still read it through its dispatch pointer. A kernel that waits
//! for a *later* packet of its own queue never finishes here; on hardware it finishes only if
//! the later packet happens to fit beside it.
//!
//! Suspension (UPDATE_QUEUE with percentage 0) takes effect at the next packet boundary or
//! inside a wait; a running dispatch is not preempted mid-grid (no wave state is modelled to
//! save). DESTROY_QUEUE aborts a running dispatch through the shader core's abort flag.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use aql::{QueueProperties, RawPacket};

use super::abandon::Abandon;
use super::barrier::BarrierCondition;
use super::decode::{Command, Packet, decode};
use super::device_memory::DeviceMemory;
use super::fence;
use super::kernel_dispatch;
use super::memory_commands::{self, CommandContext};
use super::pm4::{IndirectBuffer, Pm4Reader};
use super::queue_descriptor::QueueDescriptor;
use super::queue_error::QueueError;
use super::ring::{Fetched, Ring};
use super::signal::Signal;
use super::wakeup::{Control, SignalWatchers};
use crate::gpu::clock::gpu_timestamp;
use crate::gpu::dispatch::{DispatchRequest, InterruptSink, ShaderCore};
use crate::gpu::memory_poll::Backoff;
use crate::gpu::queue::QueueSpec;
use crate::gpu::target::GfxTarget;
use crate::gpu::vm::MemoryFault;

/// Whether the queue processes packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RunState {
    /// Fetching and executing.
    Running,
    /// Halted by a recoverable error: waiting for the host to store 0 (resume) or −1 (dead)
    /// to `queue_inactive_signal`.
    Halted(Signal),
    /// Halted for good: nothing more until DESTROY_QUEUE.
    Dead,
}

/// What happens once a packet has completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Afterwards {
    /// Fetch the next packet.
    Continue,
    /// The dispatch used a use-once scratch allocation: post 512 and halt until the host has
    /// reclaimed it.
    ReclaimScratch,
}

/// The state of one queue's command processor, owned by its thread.
pub(crate) struct Processor {
    target: GfxTarget,
    lds_bytes_per_workgroup: u32,
    xccs: u32,
    read_pointer_va: u64,
    write_pointer_va: u64,
    interrupts: Arc<dyn InterruptSink>,
    shader: Arc<dyn ShaderCore>,
    control: Arc<Control>,
    watchers: Arc<SignalWatchers>,
    memory: DeviceMemory,
    /// The index of the next packet to consume (the CP's copy of `read_dispatch_id`).
    read_index: u64,
    state: RunState,
    /// Until when the processor stays awake, spinning, for the next packet after its last
    /// one completed ([`SPIN_WINDOW`]); `None` once that has passed.
    awake_until: Option<Instant>,
}

/// How long a processor stays awake after a packet completes before it parks: a producer
/// that launches again within it rings a doorbell that is a few atomic operations (no futex
/// call on its thread, no wake-up latency), as a hardware CP that is already running costs
/// nothing to ring. The price is CPU: at most this much spinning per burst of work, never
/// while the queue has been idle longer (an idle queue's processor stays parked; the
/// simulator's idle-CPU test checks that), and none on the CPU the producer rang from (see
/// `Control::spin`). A model choice, not a hardware fact.
pub const SPIN_WINDOW: Duration = Duration::from_micros(100);

impl std::fmt::Debug for Processor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Processor")
            .field("target", &self.target)
            .field("read_index", &self.read_index)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Processor {
    /// A processor for `spec`, controlled through `control`.
    pub(crate) fn new(
        spec: QueueSpec,
        control: Arc<Control>,
        watchers: Arc<SignalWatchers>,
    ) -> Self {
        Self {
            target: spec.target,
            lds_bytes_per_workgroup: spec.lds_bytes_per_workgroup,
            xccs: spec.xccs,
            read_pointer_va: spec.read_pointer_va,
            write_pointer_va: spec.write_pointer_va,
            interrupts: spec.interrupts,
            shader: spec.shader,
            control,
            watchers,
            memory: DeviceMemory::new(spec.vm),
            read_index: 0,
            state: RunState::Running,
            awake_until: None,
        }
    }

    /// Run until the queue is destroyed.
    pub(crate) fn run(mut self) {
        // Queue connect: the read index starts where `read_dispatch_id` says (0 for a new
        // queue), and the write index is polled below before anything else.
        match self
            .memory
            .load_u64(self.read_pointer_va, Ordering::Acquire)
        {
            Ok(index) => self.read_index = index,
            Err(fault) => self.fail(&fault.into()),
        }
        let mut stall = Backoff::new();
        while !self.control.stopped() {
            let (ticket, doorbell, config) = self.control.observe();
            match self.state {
                RunState::Running => {}
                RunState::Halted(signal) => {
                    self.wait_for_resume(signal);
                    continue;
                }
                RunState::Dead => {
                    self.control.park(ticket, None);
                    continue;
                }
            }
            let ring = match Ring::new(config.ring_va, config.ring_bytes) {
                Some(ring) if !config.suspended() => ring,
                _ => {
                    self.control.park(ticket, None);
                    continue;
                }
            };
            let write_dispatch_id = match self
                .memory
                .load_u64(self.write_pointer_va, Ordering::Acquire)
            {
                Ok(index) => index,
                Err(fault) => {
                    self.fail(&fault.into());
                    continue;
                }
            };
            let write_index = ring.write_index(self.read_index, doorbell, write_dispatch_id);
            if self.read_index >= write_index {
                // Idle: only a doorbell (or an update, or DESTROY_QUEUE) brings more work.
                if !self.spin_after_work(ticket) {
                    self.control.park(ticket, None);
                }
                continue;
            }
            let index = self.read_index;
            match ring.fetch(&mut self.memory, index) {
                Err(fault) => self.fail(&fault.into()),
                Ok(Fetched::NotReady) => {
                    // Reserved but not yet published: the CP stalls on an INVALID header and
                    // re-reads it; the producer's doorbell ends the wait early. Spinning on
                    // the event count rather than the slot leaves the producer's cache line
                    // alone while it writes the packet.
                    if !self.spin_after_work(ticket) {
                        self.control.park(ticket, Some(stall.step()));
                    }
                }
                Ok(Fetched::Packet(raw)) => {
                    stall = Backoff::new();
                    let processed = self.process(ring, index, &raw);
                    self.awake_until = Some(Instant::now() + SPIN_WINDOW);
                    match processed {
                        Ok(()) => {}
                        Err(Abandon::Error(error)) => self.fail(&error),
                        Err(Abandon::Destroyed) => return,
                    }
                }
            }
        }
    }

    /// Within [`SPIN_WINDOW`] of the last completed packet, spin until an event newer than
    /// `ticket` (true) or the end of the window (false: park now).
    fn spin_after_work(&mut self, ticket: super::wakeup::Ticket) -> bool {
        match self.awake_until {
            Some(until) if self.control.spin(ticket, until) => true,
            Some(_) => {
                self.awake_until = None;
                false
            }
            None => false,
        }
    }

    /// Execute and complete packet `index`.
    fn process(&mut self, ring: Ring, index: u64, raw: &RawPacket) -> Result<(), Abandon> {
        let packet = decode(raw)?;
        let queue = QueueDescriptor::locate(&mut self.memory, self.read_pointer_va)?;
        let properties = queue.properties(&mut self.memory)?;
        // The barrier bit needs nothing more: every earlier packet of this queue has completed
        // before this one was fetched (see the module documentation).
        let mut afterwards = Afterwards::Continue;
        let start = match packet.command {
            Command::KernelDispatch(dispatch) => {
                kernel_dispatch::validate(
                    &dispatch,
                    self.lds_bytes_per_workgroup,
                    &mut self.memory,
                )?;
                let scratch = queue.scratch(&mut self.memory)?;
                let wave_size = kernel_dispatch::kernel_wave_size(
                    dispatch.kernel_object,
                    self.target,
                    &mut self.memory,
                )?;
                if !kernel_dispatch::scratch_sufficient(&dispatch, &scratch, wave_size) {
                    // Halt before launch; the host grows scratch and stores 0 to resume, and
                    // this packet is then fetched and checked again.
                    return Err(QueueError::InsufficientScratch {
                        wave32: wave_size == 32,
                    }
                    .into());
                }
                if properties.contains(QueueProperties::USE_SCRATCH_ONCE) {
                    afterwards = Afterwards::ReclaimScratch;
                }
                fence::acquire(packet.acquire);
                let start = gpu_timestamp();
                let request = DispatchRequest {
                    packet: dispatch,
                    packet_va: ring.slot_va(index),
                    queue_va: queue.va,
                    dispatch_id: index,
                    scratch,
                    target: self.target,
                    lds_bytes_per_workgroup: self.lds_bytes_per_workgroup,
                };
                let outcome = self.shader.dispatch(
                    &request,
                    self.memory.vm(),
                    &*self.interrupts,
                    self.control.abort_flag(),
                );
                if self.control.stopped() {
                    return Err(Abandon::Destroyed);
                }
                if let Err(error) = outcome {
                    return Err(QueueError::from_dispatch(&error)
                        .map_or(Abandon::Destroyed, Abandon::Error));
                }
                start
            }
            Command::BarrierAnd(barrier) => {
                self.wait_barrier(BarrierCondition::and(&barrier), &packet)?
            }
            Command::BarrierOr(barrier) => {
                self.wait_barrier(BarrierCondition::or(&barrier), &packet)?
            }
            Command::BarrierValue(barrier) => {
                self.wait_barrier(BarrierCondition::value(&barrier), &packet)?
            }
            Command::Pm4IndirectBuffer(ib) => {
                fence::acquire(packet.acquire);
                let start = gpu_timestamp();
                self.run_indirect_buffer(ib)?;
                start
            }
        };
        let profiling = properties.contains(QueueProperties::ENABLE_PROFILING);
        self.complete(ring, index, &packet, start, profiling)?;
        match afterwards {
            Afterwards::Continue => Ok(()),
            Afterwards::ReclaimScratch => Err(QueueError::ScratchUseOnceDone.into()),
        }
    }

    /// Wait for a barrier packet's condition; returns its start timestamp (when it began to
    /// wait: whether the firmware stamps barrier packets at all is not documented). The
    /// acquire fence follows the wait, as [iree] describes barrier packets.
    fn wait_barrier(
        &mut self,
        mut condition: BarrierCondition,
        packet: &Packet,
    ) -> Result<u64, Abandon> {
        let start = gpu_timestamp();
        self.wait_until(|memory| condition.holds(memory).map_err(QueueError::from))?;
        fence::acquire(packet.acquire);
        Ok(start)
    }

    /// Poll `condition` until it holds (see `memory_commands::wait_until`): doorbells, which
    /// change nothing it waits for, count without waking it.
    fn wait_until(
        &mut self,
        condition: impl FnMut(&mut DeviceMemory) -> Result<bool, QueueError>,
    ) -> Result<(), Abandon> {
        memory_commands::wait_until(&self.control, &mut self.memory, condition)
    }

    /// Execute the commands of a PM4 indirect buffer (see `pm4`): the memory commands only;
    /// register writes, dispatches and nested indirect buffers are not executed from an AQL
    /// queue's vendor packet.
    fn run_indirect_buffer(&mut self, ib: IndirectBuffer) -> Result<(), Abandon> {
        let mut reader = Pm4Reader::new(ib, self.xccs);
        while let Some(command) = reader.next_command(&mut self.memory)? {
            let mut context = CommandContext {
                memory: &mut self.memory,
                control: &self.control,
                watchers: &self.watchers,
                interrupts: &*self.interrupts,
            };
            if context.execute(command)?.is_some() {
                return Err(QueueError::UnsupportedVendorPacket.into());
            }
        }
        Ok(())
    }

    /// Complete packet `index` (aql.md §7.7, §7.8).
    fn complete(
        &mut self,
        ring: Ring,
        index: u64,
        packet: &Packet,
        start: u64,
        profiling: bool,
    ) -> Result<(), QueueError> {
        fence::release(packet.release);
        ring.invalidate(&mut self.memory, index)?;
        self.read_index = index + 1;
        self.memory
            .store_u64(self.read_pointer_va, self.read_index, Ordering::Release)?;
        if let Some(signal) = Signal::from_handle(packet.completion_signal) {
            if profiling {
                signal.write_timestamps(&mut self.memory, start, gpu_timestamp())?;
            }
            signal.decrement(&mut self.memory, &*self.interrupts)?;
            self.watchers.nudge_others(&self.control);
        }
        Ok(())
    }

    /// Report `error` and halt: the error word goes to `queue_inactive_signal` (with its
    /// mailbox and interrupt), then a memory fault is raised as a VM-fault interrupt (KFD turns
    /// it into memory exception events). The value is stored before either interrupt, so a
    /// host woken by one sees it.
    fn fail(&mut self, error: &QueueError) {
        let posted = self.post(error);
        if let Some(fault) = error.memory_fault() {
            self.interrupts.vm_fault(fault);
        }
        self.state = match posted {
            Ok(Some(signal)) if error.is_recoverable() => RunState::Halted(signal),
            Ok(_) => RunState::Dead,
            Err(fault) => {
                // The descriptor or the signal itself is unmapped: report that fault too
                // (unless it is the one just reported) and stop for good.
                if error.memory_fault() != Some(fault) {
                    self.interrupts.vm_fault(fault);
                }
                RunState::Dead
            }
        };
    }

    /// Store `error`'s word into `queue_inactive_signal`; returns the signal (None if the
    /// queue has none).
    fn post(&mut self, error: &QueueError) -> Result<Option<Signal>, MemoryFault> {
        let queue = QueueDescriptor::locate(&mut self.memory, self.read_pointer_va)?;
        let Some(signal) = Signal::from_handle(queue.inactive_signal(&mut self.memory)?) else {
            return Ok(None);
        };
        signal.store(&mut self.memory, error.error_word(), &*self.interrupts)?;
        Ok(Some(signal))
    }

    /// Halted by a recoverable error: poll `queue_inactive_signal` until the host stores 0
    /// (resume at the same read index) or −1 (the queue is dead).
    fn wait_for_resume(&mut self, signal: Signal) {
        let mut backoff = Backoff::new();
        while !self.control.stopped() {
            let (ticket, ..) = self.control.observe();
            match signal.value(&mut self.memory) {
                Ok(0) => {
                    self.state = RunState::Running;
                    return;
                }
                Ok(-1) => {
                    self.state = RunState::Dead;
                    return;
                }
                Ok(_) => self.control.park(ticket, Some(backoff.step())),
                Err(fault) => {
                    self.interrupts.vm_fault(fault);
                    self.state = RunState::Dead;
                    return;
                }
            }
        }
    }
}
