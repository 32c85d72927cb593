//! The GPUs' copy engines as the asynchronous copies use them: one aqueduct [`CopyQueue`] per
//! GPU agent, made at its first copy (ROCr makes its SDMA blit queues lazily too), whether copy
//! profiling is on (`hsa_amd_profiling_async_copy_enable`, process-wide as in ROCr), and for
//! each completion signal who did its last copy, so `hsa_amd_profiling_get_async_copy_time`
//! knows whose clock the timestamps are in.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use aqueduct::{CopyQueue, Device};

use crate::error::{Error, Result};
use crate::model::Machine;
use crate::status::Status;

/// Who did the last profiled copy completing a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopiedBy {
    /// The copy engine of this GPU agent (index), which stamped the signal's `start_ts` and
    /// `end_ts` in its ticks.
    Engine(usize),
    /// The CPU (memory no engine reaches), timed in the system domain (ns).
    Host {
        /// When the copy started.
        start: u64,
        /// When it ended.
        end: u64,
    },
}

/// The copy queues, the profiling switch and the profiled signals.
#[derive(Debug, Default)]
pub struct CopyEngines {
    queues: Mutex<HashMap<usize, CopyQueue>>,
    profiling: AtomicBool,
    copied_by: Mutex<HashMap<u64, CopiedBy>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl CopyEngines {
    /// The copy queue of GPU agent `agent` (index), made at first use.
    pub fn queue(&self, device: &Device, machine: &Machine, agent: usize) -> Result<CopyQueue> {
        let mut queues = lock(&self.queues);
        if let Some(queue) = queues.get(&agent) {
            return Ok(queue.clone());
        }
        let gpu = machine
            .agents
            .get(agent)
            .and_then(|a| a.gpu.as_ref())
            .ok_or_else(|| Error::new(Status::INVALID_AGENT, "not a GPU agent"))?;
        let queue = device.create_copy_queue(gpu)?;
        queues.insert(agent, queue.clone());
        Ok(queue)
    }

    /// Switch copy profiling on or off.
    pub fn set_profiling(&self, enable: bool) {
        self.profiling.store(enable, Ordering::Relaxed);
    }

    /// Whether copies are profiled.
    pub fn profiling(&self) -> bool {
        self.profiling.load(Ordering::Relaxed)
    }

    /// Remember who did the profiled copy completing `signal`.
    pub fn record(&self, signal: u64, by: CopiedBy) {
        lock(&self.copied_by).insert(signal, by);
    }

    /// Who did the last profiled copy completing `signal`.
    pub fn copied_by(&self, signal: u64) -> Option<CopiedBy> {
        lock(&self.copied_by).get(&signal).copied()
    }

    /// Forget `signal` (destroyed: its handle may come back for another signal).
    pub fn forget(&self, signal: u64) {
        lock(&self.copied_by).remove(&signal);
    }

    /// Drop every queue (the last `hsa_shut_down`).
    pub fn close(&self) {
        lock(&self.queues).clear();
        lock(&self.copied_by).clear();
    }
}
