//! The [`QueueEngine`] the kernel-driver model starts queues with: one processor thread per
//! queue, and the handle through which the driver rings, updates and destroys it.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use super::ProcessorThread;
use super::pm4_queue::Pm4Processor;
use super::processor::Processor;
use super::wakeup::{Control, QueueConfig, SignalWatchers};
use crate::gpu::queue::{ProcessorProgress, QueueEngine, QueueSpec, RingFormat, RunningQueue};

/// The simulated command processor: [`QueueEngine::start`] gives every compute queue (AQL or
/// PM4, as its spec says) its own processor thread, parked until the queue's doorbell rings.
#[derive(Debug, Default)]
pub struct CommandProcessorEngine {
    watchers: Arc<SignalWatchers>,
}

impl CommandProcessorEngine {
    /// An engine with no queues.
    pub fn new() -> Self {
        Self::default()
    }
}

/// How every command processor's thread name begins (`cp-gpu<gpu_id>-q<queue_id>`); the shader
/// workers a processor starts inherit its name. The LD_PRELOAD interposer tells the
/// simulator's own threads by it.
pub const PROCESSOR_THREAD_PREFIX: &str = "cp-gpu";

impl QueueEngine for CommandProcessorEngine {
    fn start(&self, spec: QueueSpec) -> Box<dyn RunningQueue> {
        let control = self.watchers.control(QueueConfig {
            ring_va: spec.ring_va,
            ring_bytes: spec.ring_bytes,
            percentage: spec.percentage,
            priority: spec.priority,
        });
        let name = format!(
            "{PROCESSOR_THREAD_PREFIX}{}-q{}",
            spec.gpu_id, spec.queue_id
        );
        let thread = match spec.format {
            RingFormat::Aql => {
                let processor = Processor::new(spec, control.clone(), self.watchers.clone());
                ProcessorThread::spawn(&name, move || processor.run())
            }
            RingFormat::Pm4 => {
                let processor = Pm4Processor::new(spec, control.clone(), self.watchers.clone());
                ProcessorThread::spawn(&name, move || processor.run())
            }
        };
        let thread = match thread {
            Ok(thread) => Some(thread),
            Err(error) => {
                // No error path exists in the contract (CREATE_QUEUE has already succeeded);
                // the queue then never processes a packet, and says why once.
                let _ = std::io::stderr().write_all(
                    format!("amdgpu-sim: no command processor thread for a queue: {error}\n")
                        .as_bytes(),
                );
                None
            }
        };
        Box::new(ProcessorHandle {
            thread: Mutex::new(thread),
            control,
        })
    }
}

/// A running processor, as the kernel-driver model holds it.
struct ProcessorHandle {
    control: Arc<Control>,
    thread: Mutex<Option<ProcessorThread>>,
}

impl RunningQueue for ProcessorHandle {
    fn doorbell_rung(&self, value: u64) {
        self.control.ring_doorbell(value);
    }

    fn update(&self, ring_va: u64, ring_bytes: u64, percentage: u32, priority: u32) {
        self.control.update(QueueConfig {
            ring_va,
            ring_bytes,
            percentage,
            priority,
        });
    }

    fn progress(&self) -> Option<ProcessorProgress> {
        Some(self.control.progress())
    }

    fn stop(&self) {
        self.control.stop();
        let thread = {
            let mut thread = self.thread.lock().unwrap_or_else(PoisonError::into_inner);
            if thread.as_ref().is_some_and(ProcessorThread::is_current) {
                // Called from the processor itself (an interrupt handler that destroys the
                // queue): it exits as soon as the call returns, and joining would deadlock.
                return;
            }
            thread.take()
        };
        if let Some(thread) = thread {
            // A processor that panicked has stopped touching memory all the same.
            let _ = thread.join();
        }
    }
}

impl Drop for ProcessorHandle {
    fn drop(&mut self) {
        self.stop();
    }
}
