//! The PM4 commands that act on memory, caches and interrupts (fences, WRITE_DATA,
//! WAIT_REG_MEM, the HDP flush, RELEASE_MEM), executed the same way wherever the CP meets them:
//! in an AQL vendor packet's indirect buffer and on a PM4 compute ring. Commands that program
//! the compute pipe (register writes, dispatches, indirect buffers) are handed back to the
//! caller, whose queue kind decides what they mean.

use std::sync::Arc;
use std::sync::atomic::{Ordering, fence};

use super::abandon::Abandon;
use super::device_memory::DeviceMemory;
use super::pm4::{Pm4Command, ReleaseData};
use super::queue_error::QueueError;
use super::wakeup::{Control, SignalWatchers};
use crate::gpu::clock::gpu_timestamp;
use crate::gpu::dispatch::InterruptSink;
use crate::gpu::memory_poll::Backoff;

/// What a processor lends to execute memory commands.
pub(crate) struct CommandContext<'a> {
    /// The queue's view of device memory.
    pub(crate) memory: &'a mut DeviceMemory,
    /// The queue's control (stop, suspension, parking).
    pub(crate) control: &'a Arc<Control>,
    /// The engine's processors, nudged after a write another queue may be waiting for.
    pub(crate) watchers: &'a SignalWatchers,
    /// Where interrupts go.
    pub(crate) interrupts: &'a dyn InterruptSink,
}

impl CommandContext<'_> {
    /// Execute `command` if it is a memory command; otherwise hand it back.
    pub(crate) fn execute(&mut self, command: Pm4Command) -> Result<Option<Pm4Command>, Abandon> {
        match command {
            Pm4Command::Fence => fence(Ordering::SeqCst),
            Pm4Command::WriteData {
                va,
                one_address,
                data,
            } => {
                for (i, word) in data.into_iter().enumerate() {
                    let at = if one_address { va } else { va + 4 * i as u64 };
                    self.memory.store_u32(at, word, Ordering::Release)?;
                }
                self.watchers.nudge_others(self.control);
            }
            Pm4Command::WaitMemory {
                va,
                reference,
                mask,
                function,
            } => self.wait_until(|memory| {
                let value = memory.load_u32(va, Ordering::Acquire)?;
                Ok(Pm4Command::wait_holds(function, value, mask, reference))
            })?,
            Pm4Command::HdpFlush {
                reference,
                mask,
                function,
            } => {
                fence(Ordering::SeqCst);
                self.wait_until(|_| {
                    Ok(Pm4Command::wait_holds(function, reference, mask, reference))
                })?;
            }
            Pm4Command::ReleaseMem {
                data,
                va,
                interrupt,
            } => {
                fence(Ordering::SeqCst);
                match data {
                    ReleaseData::None => {}
                    ReleaseData::Low32(value) => {
                        self.memory.store_u32(va, value, Ordering::Release)?;
                    }
                    ReleaseData::Full64(value) => {
                        self.memory.store_u64(va, value, Ordering::Release)?;
                    }
                    ReleaseData::Timestamp => {
                        self.memory
                            .store_u64(va, gpu_timestamp(), Ordering::Release)?;
                    }
                }
                if data != ReleaseData::None {
                    self.watchers.nudge_others(self.control);
                }
                if let Some(context_id) = interrupt {
                    self.interrupts.end_of_pipe(context_id);
                }
            }
            other => return Ok(Some(other)),
        }
        Ok(None)
    }

    /// Poll `condition` until it holds, parked between polls with a capped backoff (woken
    /// early by other processors' signal updates; doorbells, which change nothing it waits
    /// for, count without waking it). Suspension parks without polling; DESTROY_QUEUE
    /// abandons the wait.
    pub(crate) fn wait_until(
        &mut self,
        condition: impl FnMut(&mut DeviceMemory) -> Result<bool, QueueError>,
    ) -> Result<(), Abandon> {
        wait_until(self.control, self.memory, condition)
    }
}

/// Poll `condition` until it holds (see [`CommandContext::wait_until`]).
pub(crate) fn wait_until(
    control: &Control,
    memory: &mut DeviceMemory,
    mut condition: impl FnMut(&mut DeviceMemory) -> Result<bool, QueueError>,
) -> Result<(), Abandon> {
    let mut backoff = Backoff::new();
    loop {
        if control.stopped() {
            return Err(Abandon::Destroyed);
        }
        let (ticket, _, config) = control.observe();
        if config.suspended() {
            control.park(ticket, None);
            continue;
        }
        if condition(memory)? {
            return Ok(());
        }
        control.park_polling_memory(ticket, backoff.step());
    }
}
