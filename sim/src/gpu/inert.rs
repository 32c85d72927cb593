//! Stand-ins for the command processor and the shader core, used where a machine is configured
//! without them: queues are created, validated and destroyed like real ones but never process a
//! packet, and kernels never run. They keep the kernel-driver model usable on its own; a machine
//! that must execute work is configured with the real engines.

use std::sync::atomic::AtomicBool;

use crate::gpu::dispatch::{
    DispatchError, DispatchRequest, DispatchStats, InterruptSink, ShaderCore,
};
use crate::gpu::queue::{QueueEngine, QueueSpec, RunningQueue};
use crate::gpu::vm::GpuVm;

/// A [`QueueEngine`] whose queues never process packets (and use no CPU).
#[derive(Clone, Copy, Debug, Default)]
pub struct InertQueueEngine;

struct InertQueue;

impl RunningQueue for InertQueue {
    fn doorbell_rung(&self, _value: u64) {}

    fn update(&self, _ring_va: u64, _ring_bytes: u64, _percentage: u32, _priority: u32) {}

    fn stop(&self) {}
}

impl QueueEngine for InertQueueEngine {
    fn start(&self, _spec: QueueSpec) -> Box<dyn RunningQueue> {
        Box::new(InertQueue)
    }
}

/// A [`ShaderCore`] that executes nothing: every dispatch fails as an invalid code object.
#[derive(Clone, Copy, Debug, Default)]
pub struct InertShaderCore;

impl ShaderCore for InertShaderCore {
    fn dispatch(
        &self,
        _request: &DispatchRequest,
        _vm: &dyn GpuVm,
        _interrupts: &dyn InterruptSink,
        _abort: &AtomicBool,
    ) -> Result<DispatchStats, DispatchError> {
        Err(DispatchError::InvalidCodeObject(
            "this simulated GPU has no shader core".to_owned(),
        ))
    }
}
