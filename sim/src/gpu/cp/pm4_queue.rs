//! One PM4 compute queue's command processor (`KFD_IOC_QUEUE_TYPE_COMPUTE`): the thread that
//! consumes a PM4 command stream from a ring of dwords, in order, as the MEC runs a non-AQL
//! HQD.
//!
//! The ring: `ring_bytes` bytes (a power of two) of dwords. The write pointer counts dwords
//! and grows without wrapping: 64 bits on GFX9 and later, stored by the producer to the write
//! pointer address and to the doorbell (the CP takes the newer of the two, never more than one
//! ring ahead of where it reads). The read pointer the CP writes back to the read pointer
//! address is 32 bits of dwords that wrap at the ring size (KFDTest's `PM4Queue`: "On PM4
//! queues Rptr is always 32-bit in dword units and wraps at queue size"); it is written after
//! each command completes, so a host that sees it equal to its write pointer (modulo the ring)
//! knows every command has run. A command whose last dword is not yet below the write pointer
//! is not started.
//!
//! Commands: the memory commands of `memory_commands` (shared with AQL vendor packets),
//! `SET_SH_REG`/`SET_UCONFIG_REG` into the queue's `compute_registers`, `DISPATCH_DIRECT`
//! (a grid launched on the shader core from those registers, run to completion before the next
//! command, which is also what `EVENT_WRITE(CS_PARTIAL_FLUSH)` asks for), and
//! `INDIRECT_BUFFER` from the ring (one level: an IB inside an IB halts the queue, as does
//! CHAIN).
//!
//! Errors: a PM4 queue has no `amd_queue_t` and no `queue_inactive_signal` to post to. A device
//! memory fault (by the CP or by a kernel) raises the VM-fault interrupt, from which KFD
//! evicts the process' queues and signals its memory events. Anything else (an opcode or
//! register the model does not know, an illegal instruction or trap in a kernel) stops the
//! queue for good with a warning: real firmware raises CP_BAD_OPCODE or an SQ interrupt, which
//! the interrupt contract does not carry. DESTROY_QUEUE aborts a running dispatch.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::abandon::Abandon;
use super::compute_registers::ComputeRegisters;
use super::device_memory::DeviceMemory;
use super::memory_commands::CommandContext;
use super::pm4::{Pm4Command, Pm4Reader};
use super::queue_error::QueueError;
use super::wakeup::{Control, SignalWatchers};
use crate::gpu::dispatch::{InterruptSink, ShaderCore};
use crate::gpu::memory_poll::Backoff;
use crate::gpu::queue::QueueSpec;
use crate::gpu::target::GfxTarget;

/// The state of one PM4 queue's command processor, owned by its thread.
pub(crate) struct Pm4Processor {
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
    /// Dwords consumed since the queue was created (the CP's read pointer, unwrapped).
    read: u64,
    /// The queue's compute registers.
    registers: ComputeRegisters,
    /// Stopped for good by an error.
    dead: bool,
}

impl std::fmt::Debug for Pm4Processor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pm4Processor")
            .field("target", &self.target)
            .field("read", &self.read)
            .field("dead", &self.dead)
            .finish_non_exhaustive()
    }
}

impl Pm4Processor {
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
            read: 0,
            registers: ComputeRegisters::new(spec.target),
            dead: false,
        }
    }

    /// Run until the queue is destroyed.
    pub(crate) fn run(mut self) {
        let mut stall = Backoff::new();
        while !self.control.stopped() {
            let (ticket, doorbell, config) = self.control.observe();
            if self.dead || config.suspended() || config.ring_bytes < 4 {
                self.control.park(ticket, None);
                continue;
            }
            // KFD accepts only power-of-two rings; the CP's size field can say nothing else.
            let ring_bytes = 1u64 << config.ring_bytes.ilog2();
            let written = match self
                .memory
                .load_u64(self.write_pointer_va, Ordering::Acquire)
            {
                Ok(written) => written,
                Err(fault) => {
                    self.fail(&fault.into());
                    continue;
                }
            };
            let write = doorbell
                .unwrap_or(0)
                .max(written)
                .min(self.read.saturating_add(ring_bytes / 4));
            if self.read >= write {
                self.control.park(ticket, None);
                continue;
            }
            let mut reader =
                Pm4Reader::ring(config.ring_va, ring_bytes, self.read, write, self.xccs);
            loop {
                let command = match reader.next_command(&mut self.memory) {
                    Ok(Some(command)) => command,
                    Ok(None) => break,
                    Err(error) => {
                        self.fail(&error);
                        break;
                    }
                };
                stall = Backoff::new();
                match self.execute(command, false) {
                    Ok(()) => {}
                    Err(Abandon::Destroyed) => return,
                    Err(Abandon::Error(error)) => {
                        self.fail(&error);
                        break;
                    }
                }
                self.read = reader.ring_position();
                if let Err(fault) = self.write_back_read_pointer(ring_bytes) {
                    self.fail(&fault.into());
                    break;
                }
                if self.control.stopped() || self.control.observe().2 != config {
                    break;
                }
            }
            if !self.dead && reader.ring_position() < write && self.read == reader.ring_position() {
                // The next command is not all written yet: wait for the write pointer.
                self.control.park(ticket, Some(stall.step()));
            }
        }
    }

    /// Store the read pointer: dwords, wrapped at the ring size, 32 bits.
    fn write_back_read_pointer(
        &mut self,
        ring_bytes: u64,
    ) -> Result<(), crate::gpu::vm::MemoryFault> {
        let wrapped = (self.read % (ring_bytes / 4)) as u32;
        self.memory
            .store_u32(self.read_pointer_va, wrapped, Ordering::Release)
    }

    /// Execute one command; `in_indirect_buffer` when it came from an IB (which may not call
    /// another).
    fn execute(&mut self, command: Pm4Command, in_indirect_buffer: bool) -> Result<(), Abandon> {
        let mut context = CommandContext {
            memory: &mut self.memory,
            control: &self.control,
            watchers: &self.watchers,
            interrupts: &*self.interrupts,
        };
        let Some(command) = context.execute(command)? else {
            return Ok(());
        };
        match command {
            Pm4Command::SetRegisters {
                space,
                offset,
                values,
            } => self.registers.set(space, offset, &values)?,
            Pm4Command::DispatchDirect {
                dimensions,
                initiator,
            } => self.dispatch(dimensions, initiator)?,
            Pm4Command::IndirectBuffer(ib) if !in_indirect_buffer => {
                let mut reader = Pm4Reader::new(ib, self.xccs);
                while let Some(command) = reader.next_command(&mut self.memory)? {
                    self.execute(command, true)?;
                }
            }
            _ => return Err(QueueError::UnsupportedVendorPacket.into()),
        }
        Ok(())
    }

    /// `DISPATCH_DIRECT`: launch the grid the registers describe and wait for it.
    fn dispatch(&mut self, dimensions: [u32; 3], initiator: u32) -> Result<(), Abandon> {
        let Some(request) =
            self.registers
                .dispatch(dimensions, initiator, self.lds_bytes_per_workgroup)?
        else {
            return Ok(());
        };
        let outcome = self.shader.dispatch_registers(
            &request,
            self.memory.vm(),
            &*self.interrupts,
            self.control.abort_flag(),
        );
        if self.control.stopped() {
            return Err(Abandon::Destroyed);
        }
        match outcome {
            Ok(_) => Ok(()),
            Err(error) => {
                tracing::warn!(%error, "PM4 dispatch failed");
                Err(QueueError::from_dispatch(&error).map_or(Abandon::Destroyed, Abandon::Error))
            }
        }
    }

    /// Stop for good: a memory fault is raised as a VM-fault interrupt; anything else is only
    /// reported in the log (see the module documentation).
    fn fail(&mut self, error: &QueueError) {
        if let Some(fault) = error.memory_fault() {
            self.interrupts.vm_fault(fault);
        } else {
            tracing::warn!(?error, read = self.read, "PM4 queue stopped");
        }
        self.dead = true;
    }
}
