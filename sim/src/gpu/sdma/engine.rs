//! The [`QueueEngine`] that runs SDMA queues: one thread per queue, parked until its doorbell
//! rings, and the handle through which the driver rings, updates and destroys it.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use super::control::{Control, RingConfig};
use super::processor::SdmaProcessor;
use crate::gpu::cp::{PROCESSOR_THREAD_PREFIX, ProcessorThread};
use crate::gpu::queue::{ProcessorProgress, QueueEngine, QueueSpec, RunningQueue};

/// The simulated SDMA engines of a machine: [`QueueEngine::start`] gives every SDMA queue its
/// own thread (named like the command processors', so the interposer knows it as the
/// simulator's own).
#[derive(Debug, Default)]
pub struct SdmaEngine;

impl SdmaEngine {
    /// The engine.
    pub fn new() -> Self {
        Self
    }
}

impl QueueEngine for SdmaEngine {
    fn start(&self, spec: QueueSpec) -> Box<dyn RunningQueue> {
        let control = Arc::new(Control::new(RingConfig {
            ring_va: spec.ring_va,
            ring_bytes: spec.ring_bytes,
            percentage: spec.percentage,
        }));
        let name = format!(
            "{PROCESSOR_THREAD_PREFIX}{}-d{}",
            spec.gpu_id, spec.queue_id
        );
        let processor = SdmaProcessor::new(spec, control.clone());
        let thread = match ProcessorThread::spawn(&name, move || processor.run()) {
            Ok(thread) => Some(thread),
            Err(error) => {
                // CREATE_QUEUE has succeeded already; the queue then never runs, and says why.
                let _ = std::io::stderr().write_all(
                    format!("amdgpu-sim: no SDMA thread for a queue: {error}\n").as_bytes(),
                );
                None
            }
        };
        Box::new(SdmaHandle {
            control,
            thread: Mutex::new(thread),
        })
    }
}

struct SdmaHandle {
    control: Arc<Control>,
    thread: Mutex<Option<ProcessorThread>>,
}

impl RunningQueue for SdmaHandle {
    fn doorbell_rung(&self, value: u64) {
        self.control.ring_doorbell(value);
    }

    fn update(&self, ring_va: u64, ring_bytes: u64, percentage: u32, _priority: u32) {
        self.control.update(RingConfig {
            ring_va,
            ring_bytes,
            percentage,
        });
    }

    fn stop(&self) {
        self.control.stop();
        let thread = {
            let mut thread = self.thread.lock().unwrap_or_else(PoisonError::into_inner);
            if thread.as_ref().is_some_and(ProcessorThread::is_current) {
                // Called from the queue's own thread (an interrupt handler destroying it).
                return;
            }
            thread.take()
        };
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }

    fn progress(&self) -> Option<ProcessorProgress> {
        Some(self.control.progress())
    }
}

impl Drop for SdmaHandle {
    fn drop(&mut self) {
        self.stop();
    }
}
