//! One SDMA queue's loop: read packets between the read and write pointers, execute them,
//! write the read pointer back.
//!
//! Pointers (SDMA 4.x, as `BlitSdmaV4` and the kernel's `sdma_v4_0` ring use them): 64-bit
//! byte offsets that only grow; the ring address is `ring + (pointer & (size - 1))`. The
//! doorbell carries the new write pointer (a 64-bit store on GFX9). At queue load the engine
//! takes its read pointer from the MQD (0 for a new queue) and its write pointer from the
//! queue's write-pointer memory (`kgd_hqd_sdma_load` reads the user's wptr); afterwards only
//! the doorbell moves it. With `RPTR_WRITEBACK_ENABLE` (set by `update_mqd_sdma`) the engine
//! writes the read pointer to the queue's read-pointer address; the simulator writes it after
//! every packet (hardware on a timer, so never later than this).

use std::sync::Arc;

use super::control::{Control, Look};
use super::memory::EngineMemory;
use super::packet::{Decoded, MAX_FIXED_DWORDS, Packet, decode};
use crate::gpu::clock::gpu_timestamp;
use crate::gpu::dispatch::InterruptSink;
use crate::gpu::memory_poll::Backoff;
use crate::gpu::queue::QueueSpec;
use crate::gpu::vm::MemoryFault;

/// Bytes copied or filled between two looks at DESTROY_QUEUE.
const RUN_BYTES: u64 = 1 << 20;

/// Why a packet did not complete.
enum Stall {
    /// POLL_REGMEM (or a looped atomic) is not satisfied yet: retry the same packet.
    Waiting,
    /// A device access faulted.
    Fault(MemoryFault),
    /// DESTROY_QUEUE.
    Destroyed,
}

impl From<MemoryFault> for Stall {
    fn from(fault: MemoryFault) -> Self {
        Self::Fault(fault)
    }
}

/// Whether the queue still executes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RunState {
    Running,
    /// A fault or an illegal packet stopped the engine on this queue for good.
    Halted,
}

pub(crate) struct SdmaProcessor {
    read_pointer_va: u64,
    write_pointer_va: u64,
    interrupts: Arc<dyn InterruptSink>,
    control: Arc<Control>,
    memory: EngineMemory,
    rptr: u64,
    wptr: u64,
    state: RunState,
}

impl SdmaProcessor {
    pub(crate) fn new(spec: QueueSpec, control: Arc<Control>) -> Self {
        Self {
            read_pointer_va: spec.read_pointer_va,
            write_pointer_va: spec.write_pointer_va,
            interrupts: spec.interrupts,
            control,
            memory: EngineMemory::new(spec.vm),
            rptr: 0,
            wptr: 0,
            state: RunState::Running,
        }
    }

    /// Run until DESTROY_QUEUE.
    pub(crate) fn run(mut self) {
        match self.memory.load_u64(self.write_pointer_va) {
            Ok(wptr) => self.wptr = wptr,
            Err(fault) => self.fault(fault),
        }
        let mut backoff = Backoff::new();
        while !self.control.stopped() {
            let look = self.control.observe();
            if let Some(doorbell) = look.doorbell {
                self.wptr = doorbell;
            }
            if self.state == RunState::Halted || !look.config.runnable() {
                self.control.park(&look, None);
                continue;
            }
            let pending = self
                .wptr
                .wrapping_sub(self.rptr)
                .min(look.config.ring_bytes);
            if pending < 4 {
                self.control.park(&look, None);
                continue;
            }
            match self.step(&look, pending) {
                Ok(true) => backoff = Backoff::new(),
                // The packet is not all there yet: only a doorbell brings the rest.
                Ok(false) => self.control.park(&look, None),
                Err(Stall::Waiting) => self.control.park(&look, Some(backoff.step())),
                Err(Stall::Fault(fault)) => self.fault(fault),
                Err(Stall::Destroyed) => return,
            }
        }
    }

    /// A device access faulted: the engine raises a VM fault (KFD evicts the process' queues
    /// and sets its memory events, as for compute queues) and stops on this queue.
    fn fault(&mut self, fault: MemoryFault) {
        self.interrupts.vm_fault(fault);
        self.state = RunState::Halted;
    }

    /// Read `count` dwords of the ring from the read pointer on (wrapping).
    fn ring_dwords(&mut self, look: &Look, count: u64) -> Result<Vec<u32>, MemoryFault> {
        let mask = look.config.ring_bytes - 1;
        (0..count)
            .map(|i| {
                let offset = self.rptr.wrapping_add(4 * i) & mask;
                self.memory.load_u32(look.config.ring_va + offset)
            })
            .collect()
    }

    /// Execute the packet at the read pointer; `Ok(false)` if it is not complete in the ring.
    fn step(&mut self, look: &Look, pending: u64) -> Result<bool, Stall> {
        let available = pending / 4;
        let mut dwords = self.ring_dwords(look, available.min(MAX_FIXED_DWORDS as u64))?;
        let (packet, length) = loop {
            match decode(&dwords) {
                Decoded::Packet { packet, dwords } => break (packet, dwords),
                Decoded::NeedMore { dwords: n } if u64::from(n) <= available => {
                    if (n as usize) <= dwords.len() {
                        // Cannot happen (the decoder asked for what it has); stop rather
                        // than loop.
                        self.state = RunState::Halted;
                        return Ok(false);
                    }
                    dwords = self.ring_dwords(look, u64::from(n))?;
                }
                Decoded::NeedMore { dwords: n } => {
                    if u64::from(n) * 4 > look.config.ring_bytes {
                        // A packet longer than the ring can never arrive.
                        self.state = RunState::Halted;
                    }
                    return Ok(false);
                }
                Decoded::Illegal { .. } => {
                    // The engine's illegal-instruction path: the queue stops here (see the
                    // packet module on how sure this is). KFD raises no event for it.
                    self.state = RunState::Halted;
                    return Ok(false);
                }
            }
        };
        self.execute(packet)?;
        self.rptr = self.rptr.wrapping_add(4 * u64::from(length));
        self.memory.store_u64(self.read_pointer_va, self.rptr)?;
        Ok(true)
    }

    fn check_stop(&self) -> Result<(), Stall> {
        if self.control.stopped() {
            Err(Stall::Destroyed)
        } else {
            Ok(())
        }
    }

    fn copy(&mut self, mut src: u64, mut dst: u64, mut bytes: u64) -> Result<(), Stall> {
        while bytes > 0 {
            self.check_stop()?;
            let n = self.memory.copy_run(src, dst, bytes.min(RUN_BYTES))?;
            src += n;
            dst += n;
            bytes -= n;
        }
        Ok(())
    }

    fn execute(&mut self, packet: Packet) -> Result<(), Stall> {
        match packet {
            Packet::Nop | Packet::PollRegisterAlways | Packet::TimestampSet => {}
            Packet::CopyLinear { src, dst, bytes } => self.copy(src, dst, bytes)?,
            Packet::CopySubWindow {
                element_shift,
                src,
                dst,
                extent,
            } => {
                let row = extent[0] << element_shift;
                for z in 0..extent[2] {
                    for y in 0..extent[1] {
                        self.copy(
                            src.address(0, y, z, element_shift),
                            dst.address(0, y, z, element_shift),
                            row,
                        )?;
                    }
                }
            }
            Packet::WriteLinear { dst, data } => {
                for (i, word) in data.into_iter().enumerate() {
                    self.memory.store_u32(dst + 4 * i as u64, word)?;
                }
            }
            Packet::ConstantFill {
                mut dst,
                data,
                unit_shift,
                bytes,
            } => {
                let unit = 1u64 << unit_shift;
                // Whole units: the count is "bytes - 1" and ROCr's dword fills pass
                // 4 * dwords - 4, so the last unit is completed.
                let mut left = bytes.div_ceil(unit) * unit;
                dst &= !(unit - 1);
                while left > 0 {
                    self.check_stop()?;
                    let n = self.memory.fill_run(dst, data, unit, left.min(RUN_BYTES))?;
                    dst += n;
                    left -= n;
                }
            }
            Packet::Fence { address, data } => self.memory.store_u32(address, data)?,
            Packet::Trap { context_id } => self.interrupts.sdma_trap(context_id),
            Packet::PollMemory {
                address,
                reference,
                mask,
                function,
            } => {
                // Retry counts other than "forever" (0xFFF, what ROCr and the kernel send)
                // raise a poll-timeout interrupt on hardware, which KFD does not route; the
                // simulator polls until the condition holds or the queue is destroyed.
                let value = self.memory.load_u32(address)?;
                if !function.holds(value, mask, reference) {
                    return Err(Stall::Waiting);
                }
            }
            Packet::Atomic {
                op,
                wide,
                looped,
                address,
                src,
                cmp,
            } => {
                let mut stored = true;
                self.memory.update(address, wide, |old| {
                    let new = op.apply(old, src, cmp, wide);
                    stored = new.is_some();
                    new
                })?;
                if looped && !stored {
                    // A looped compare-swap retries on its loop interval until it stores.
                    return Err(Stall::Waiting);
                }
            }
            Packet::TimestampGet { address } => self.memory.store_u64(address, gpu_timestamp())?,
        }
        Ok(())
    }
}
