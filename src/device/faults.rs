//! GPU memory faults as a stream a runtime can hand to its clients (the HSA runtime's system
//! event handlers): every fault KFD reported since a caller's last look, looking again for a
//! while if none is new. The faults are the same list the queues' error checks read, so neither
//! consumer hides a fault from the other.

use std::sync::PoisonError;
use std::time::{Duration, Instant};

use kfd::abi::MemoryExceptionData;
use kfd::{EventException, WaitStatus};

use crate::device::Device;
use crate::error::Result;

/// A GPU memory fault, as KFD reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryFault {
    /// The GPU.
    pub gpu_id: u32,
    /// The faulting virtual address (page-aligned, as KFD reports it).
    pub address: u64,
    /// The page was not present.
    pub not_present: bool,
    /// A write to a read-only page.
    pub read_only: bool,
    /// An instruction fetch from a no-execute page.
    pub no_execute: bool,
    /// The address is imprecise.
    pub imprecise: bool,
}

impl Device {
    /// The memory faults after the first `seen` of this device's life, looking again every
    /// [`FAULT_POLL`] for up to `timeout` when there is none yet. Faults are numbered from 0 in
    /// the order KFD reported them; pass the count seen so far to get only new ones.
    ///
    /// The device's fault list is locked only for each look, never across the wait: queue
    /// checks (which take the same lock on every queue creation and wait) are never held up
    /// by a caller waiting here.
    pub fn memory_faults_since(&self, seen: usize, timeout: Duration) -> Result<Vec<MemoryFault>> {
        let deadline = Instant::now() + timeout;
        loop {
            let faults = self.shared().with_live(|live| {
                let mut faults = live.faults.lock().unwrap_or_else(PoisonError::into_inner);
                // Each firing of the (auto-reset) event carries the latest fault: collect
                // every one pending, without waiting.
                while let Ok(outcome) = live.memory_faults.wait(Some(Duration::ZERO)) {
                    if outcome.status != WaitStatus::Complete {
                        break;
                    }
                    if let Some(Some(EventException::Memory(data))) = outcome.exceptions.first() {
                        faults.push(*data);
                    }
                }
                Ok(faults
                    .iter()
                    .skip(seen)
                    .map(MemoryFault::from)
                    .collect::<Vec<_>>())
            })?;
            let now = Instant::now();
            if !faults.is_empty() || now >= deadline {
                return Ok(faults);
            }
            std::thread::sleep(FAULT_POLL.min(deadline - now));
        }
    }
}

/// How often [`Device::memory_faults_since`] looks for a new fault while it waits.
pub const FAULT_POLL: Duration = Duration::from_millis(10);

impl From<&MemoryExceptionData> for MemoryFault {
    fn from(f: &MemoryExceptionData) -> Self {
        Self {
            gpu_id: f.gpu_id,
            address: f.va,
            not_present: f.failure.not_present != 0,
            read_only: f.failure.read_only != 0,
            no_execute: f.failure.no_execute != 0,
            imprecise: f.failure.imprecise != 0,
        }
    }
}
