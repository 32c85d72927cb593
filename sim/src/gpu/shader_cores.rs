//! Which shader core executes a target's machine code: the GFX9 core for gfx90a and gfx942,
//! the GFX11 core for gfx1100; [`MissingShaderCore`] stands in for a target without a core
//! (it refuses every dispatch as an illegal instruction). A GPU never runs another ISA's core: GFX11 code read as GFX9 code
//! would execute as something else, silently.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::gpu::dispatch::{
    DispatchError, DispatchRequest, DispatchStats, InterruptSink, ShaderCore,
};
use crate::gpu::shader::{Gfx9ShaderCore, Gfx11ShaderCore};
use crate::gpu::target::GfxTarget;
use crate::gpu::vm::GpuVm;

/// A fresh shader core for `target` (one worker per available CPU).
pub fn shader_core_for(target: GfxTarget) -> Arc<dyn ShaderCore> {
    match target {
        GfxTarget::Gfx90a | GfxTarget::Gfx942 => Arc::new(Gfx9ShaderCore::new(0)),
        GfxTarget::Gfx1100 => Arc::new(Gfx11ShaderCore::new(0)),
    }
}

/// The shader core of a target this build cannot execute: every dispatch ends as an illegal
/// instruction at the kernel descriptor, so the queue reports `ILLEGAL_INSTRUCTION` and the
/// error names the ISA.
#[derive(Clone, Copy, Debug)]
pub struct MissingShaderCore {
    target: GfxTarget,
}

impl MissingShaderCore {
    /// The core of `target`.
    pub fn new(target: GfxTarget) -> Self {
        Self { target }
    }
}

impl ShaderCore for MissingShaderCore {
    fn dispatch(
        &self,
        request: &DispatchRequest,
        _vm: &dyn GpuVm,
        _interrupts: &dyn InterruptSink,
        _abort: &AtomicBool,
    ) -> Result<DispatchStats, DispatchError> {
        Err(DispatchError::IllegalInstruction {
            pc: request.packet.kernel_object,
            encoding: Vec::new(),
            mnemonic: format!(
                "{} code: this simulator has no {} shader core yet",
                request.target.name(),
                self.target.name()
            ),
        })
    }
}
