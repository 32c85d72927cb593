//! GPU memory faults as a stream a runtime can hand to its clients (the HSA runtime's system
//! event handlers): every fault KFD reported since a caller's last look, waiting for one if
//! none is new. The faults are the same list the queues' error checks read, so neither
//! consumer hides a fault from the other.

use std::sync::PoisonError;
use std::time::Duration;

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
    /// The memory faults after the first `seen` of this device's life, waiting up to
    /// `timeout` for one when there is none yet. Faults are numbered from 0 in the order KFD
    /// reported them; pass the count seen so far to get only new ones.
    pub fn memory_faults_since(&self, seen: usize, timeout: Duration) -> Result<Vec<MemoryFault>> {
        self.shared().with_live(|live| {
            let mut faults = live.faults.lock().unwrap_or_else(PoisonError::into_inner);
            let mut wait = if faults.len() > seen {
                Duration::ZERO
            } else {
                timeout
            };
            // Each firing of the (auto-reset) event carries the latest fault: collect them all.
            while let Ok(outcome) = live.memory_faults.wait(Some(wait)) {
                if outcome.status != WaitStatus::Complete {
                    break;
                }
                if let Some(Some(EventException::Memory(data))) = outcome.exceptions.first() {
                    faults.push(*data);
                }
                wait = Duration::ZERO;
            }
            Ok(faults
                .iter()
                .skip(seen)
                .map(|f| MemoryFault {
                    gpu_id: f.gpu_id,
                    address: f.va,
                    not_present: f.failure.not_present != 0,
                    read_only: f.failure.read_only != 0,
                    no_execute: f.failure.no_execute != 0,
                    imprecise: f.failure.imprecise != 0,
                })
                .collect())
        })
    }
}
