//! What the CP does to an `amd_signal_t` (aql.md §3): read its value, decrement or store it,
//! write profiling timestamps, and post its event mailbox with an end-of-pipe interrupt.

use std::mem::offset_of;
use std::sync::atomic::Ordering;

use aql::AmdSignal;
use aql::signal::SIGNAL_HANDLE_HINT_MASK;

use super::device_memory::DeviceMemory;
use crate::gpu::dispatch::InterruptSink;
use crate::gpu::vm::MemoryFault;

const VALUE: u64 = offset_of!(AmdSignal, value) as u64;
const EVENT_MAILBOX_PTR: u64 = offset_of!(AmdSignal, event_mailbox_ptr) as u64;
const EVENT_ID: u64 = offset_of!(AmdSignal, event_id) as u64;
const START_TS: u64 = offset_of!(AmdSignal, start_ts) as u64;
const END_TS: u64 = offset_of!(AmdSignal, end_ts) as u64;

/// A signal the CP may touch: the handle with its hint bits stripped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Signal {
    va: u64,
}

impl Signal {
    /// The signal a handle names, or `None` for the null handle. Newer ROCr keeps hints in the
    /// low 6 bits of a handle; consumers mask them off before dereferencing (aql.md §3.1). The
    /// model honours none of the hints (the header says that is always correct).
    pub(crate) fn from_handle(handle: u64) -> Option<Self> {
        let va = handle & !SIGNAL_HANDLE_HINT_MASK;
        (va != 0).then_some(Self { va })
    }

    /// The `amd_signal_t` address.
    #[cfg(test)]
    pub(crate) fn va(self) -> u64 {
        self.va
    }

    /// The current value.
    pub(crate) fn value(self, memory: &mut DeviceMemory) -> Result<i64, MemoryFault> {
        memory.load_i64(self.va + VALUE, Ordering::Acquire)
    }

    /// Write the profiling timestamps (GPU ticks).
    pub(crate) fn write_timestamps(
        self,
        memory: &mut DeviceMemory,
        start: u64,
        end: u64,
    ) -> Result<(), MemoryFault> {
        memory.store_u64(self.va + START_TS, start, Ordering::Relaxed)?;
        memory.store_u64(self.va + END_TS, end, Ordering::Relaxed)
    }

    /// Completion: atomically decrement the value by one, then post the mailbox.
    pub(crate) fn decrement(
        self,
        memory: &mut DeviceMemory,
        interrupts: &dyn InterruptSink,
    ) -> Result<(), MemoryFault> {
        memory.fetch_sub_i64(self.va + VALUE, 1, Ordering::AcqRel)?;
        self.notify(memory, interrupts)
    }

    /// Store `value` (queue errors), then post the mailbox.
    pub(crate) fn store(
        self,
        memory: &mut DeviceMemory,
        value: i64,
        interrupts: &dyn InterruptSink,
    ) -> Result<(), MemoryFault> {
        memory.store_i64(self.va + VALUE, value, Ordering::SeqCst)?;
        self.notify(memory, interrupts)
    }

    /// The interrupt protocol for any signal update ([abi], ockl `update_mbox`): if the signal
    /// has an event mailbox, release-store its event id there (as a 64-bit word), then raise an
    /// end-of-pipe interrupt whose context id is that event id.
    fn notify(
        self,
        memory: &mut DeviceMemory,
        interrupts: &dyn InterruptSink,
    ) -> Result<(), MemoryFault> {
        let mailbox = memory.load_u64(self.va + EVENT_MAILBOX_PTR, Ordering::Acquire)?;
        if mailbox == 0 {
            return Ok(());
        }
        let event_id = memory.load_u32(self.va + EVENT_ID, Ordering::Acquire)?;
        memory.store_u64(mailbox, u64::from(event_id), Ordering::Release)?;
        interrupts.end_of_pipe(event_id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hint_bits_are_stripped_and_null_is_none() {
        assert_eq!(Signal::from_handle(0), None);
        assert_eq!(Signal::from_handle(0x3F), None);
        assert_eq!(
            Signal::from_handle(0x1000 | 0x15).map(Signal::va),
            Some(0x1000)
        );
    }
}
