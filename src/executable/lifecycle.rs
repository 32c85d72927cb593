//! What happens around a load's life: `init` kernels after loading and `fini` kernels before
//! unloading (code-objects.md §10: metadata `.kind: init` / `fini`; ROCr never runs them), and
//! the user's setup and teardown callbacks (numba-cuda's module callbacks, reliability.md §3),
//! each exactly once per load.
//!
//! A [`Load`] is what every handle of one load holds; its `Drop` is the unload: teardown
//! callback, `fini` kernels, then the memory goes with the last [`Core`] reference.
//!
//! `init` and `fini` kernels run on a queue of their own, made for the occasion: one
//! work-item each (LLVM's `amdgcn.device.init` walks the constructor array in one thread),
//! a kernarg segment filled by [`KernargLayout::write`], a completion signal waited on with a
//! timeout. The queue goes when they are done. A failing `init` kernel (fault, timeout) fails
//! the load with the queue's error; a failing `fini` kernel is logged (an unload cannot fail).
//!
//! Unsure / limits: the hidden `queue_ptr` is 0 (the safe `Queue` does not expose its
//! `amd_queue_t` address), and the queue has no scratch, so a constructor that needs a stack
//! (LLVM marks every init kernel `uses_dynamic_stack`, but leaf constructors never touch it)
//! faults and fails the load. Both go away when kernel launch sets up scratch for a queue.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use amdgpu_loader::metadata::KernelKind;
use aql::builder::{DispatchBuilder, DispatchLimits};
use aql::signal::Condition;
use tracing::{debug, warn};

use super::options::{LoadOptions, TeardownCallback};
use super::registry::{self, LoadKey, Shareable};
use super::{Core, Executable};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::kernarg::{Geometry, KernargLayout, LaunchContext};
use crate::{MemoryLocation, QueueOptions};

/// One load of a code object, shared by every handle to it.
pub(crate) struct Load {
    core: Arc<Core>,
    /// Names of the `fini` kernels, in image order.
    fini: Vec<String>,
    /// Set once the setup callback (if any) has succeeded.
    teardown: OnceLock<TeardownCallback>,
    key: Option<LoadKey>,
    kernel_timeout: Duration,
    /// What this load's relocations point into: kept loaded as long as it is.
    _links: Vec<Executable>,
}

impl Load {
    /// Run `core`'s `init` kernels, then the setup callback; the load is ready after both.
    pub(crate) fn start(
        core: Core,
        options: &LoadOptions,
        key: Option<LoadKey>,
    ) -> Result<Arc<Self>> {
        let core = Arc::new(core);
        let device = Device::from_shared(Arc::clone(core.owned.device()));
        let init = if options.init_fini_kernels {
            kernels_of_kind(&core, KernelKind::Init)
        } else {
            Vec::new()
        };
        run_kernels(&device, &core, &init, options.kernel_timeout)?;
        let load = Arc::new(Self {
            fini: if options.init_fini_kernels {
                kernels_of_kind(&core, KernelKind::Fini)
            } else {
                Vec::new()
            },
            core: Arc::clone(&core),
            teardown: OnceLock::new(),
            key,
            kernel_timeout: options.kernel_timeout,
            _links: options.link_with.clone(),
        });
        if let Some(setup) = &options.setup {
            // A failed setup fails the load: no teardown call for it, but its `fini` kernels
            // run (its `init` kernels did) when `load` drops here.
            setup(&Executable {
                core,
                load: Some(Arc::clone(&load)),
            })?;
        }
        if let Some(teardown) = &options.teardown {
            let _ = load.teardown.set(Arc::clone(teardown));
        }
        debug!(
            gpu_id = load.core.gpu_id,
            base = load.core.image.base(),
            init = init.len(),
            fini = load.fini.len(),
            "code object loaded"
        );
        Ok(load)
    }

    /// What the handles share.
    pub(crate) fn core(&self) -> &Arc<Core> {
        &self.core
    }
}

impl Shareable for Load {
    fn is_usable(&self) -> bool {
        self.core.owned.with(|_| Ok(())).is_ok()
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        if self.core.owned.device().check_process().is_err() {
            // A fork child dropping what it inherited: the load is the parent's; its callback
            // and fini kernels run there, not here.
            return;
        }
        if let Some(teardown) = self.teardown.get() {
            teardown(&Executable {
                core: Arc::clone(&self.core),
                load: None,
            });
        }
        if !self.fini.is_empty() {
            let device = Device::from_shared(Arc::clone(self.core.owned.device()));
            if device.is_closed() {
                // The memory went with the shutdown; there is no queue to run them on.
                debug!(
                    fini = self.fini.len(),
                    "device shut down: fini kernels not run"
                );
            } else if let Err(error) =
                run_kernels(&device, &self.core, &self.fini, self.kernel_timeout)
            {
                warn!(%error, "running fini kernels before unloading a code object");
            }
        }
        if let Some(key) = &self.key {
            registry::forget(key);
        }
    }
}

fn kernels_of_kind(core: &Core, kind: KernelKind) -> Vec<String> {
    core.image
        .kernels()
        .filter(|k| k.metadata.is_some_and(|m| m.kind == kind))
        .map(|k| k.name.to_owned())
        .collect()
}

/// Run each kernel of `names` once, one work-item, in order, waiting for each.
fn run_kernels(device: &Device, core: &Core, names: &[String], timeout: Duration) -> Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    let gpu = device
        .gpus()?
        .iter()
        .find(|g| g.gpu_id == core.gpu_id)
        .cloned()
        .ok_or_else(|| Error::InvalidArgument(format!("no GPU {:#x}", core.gpu_id)))?;
    let queue = device.create_queue(
        &gpu,
        &QueueOptions {
            packets: gpu.queues.min_packets,
            ..QueueOptions::default()
        },
    )?;
    for name in names {
        let kernel = core
            .image
            .kernel(name)
            .ok_or_else(|| Error::InvalidArgument(format!("no kernel {name:?}")))?;
        let layout = KernargLayout::new(&kernel)?;
        let mut bytes = vec![0u8; layout.reserved_size().max(16) as usize];
        let shape = layout.write(
            &mut bytes,
            &Geometry::d1(1, 1),
            &[],
            &LaunchContext::default(),
        )?;
        let segment = device.alloc(&gpu, MemoryLocation::Kernarg, bytes.len())?;
        segment.write(0, &bytes)?;
        let done = device.signal(1)?;
        let packet = DispatchBuilder::new(kernel.descriptor_address, segment.gpu_address())
            .geometry(shape.dimensions, shape.grid_size, shape.workgroup_size)
            .group_segment_size(shape.group_segment_size)
            .private_segment_size(kernel.private_segment_size)
            .completion_signal(done.handle())
            .build(&DispatchLimits::GFX9)
            .map_err(|e| Error::InvalidArgument(format!("kernel {name}: {e}")))?;
        queue.dispatch(&packet)?;
        queue
            .wait(&done, Condition::Eq, 0, Some(timeout))
            .map_err(|error| match error {
                Error::Timeout { after, .. } => Error::Timeout {
                    what: format!("the {} kernel {name}", kind_name(&kernel)),
                    after,
                },
                other => other,
            })?;
        debug!(kernel = name.as_str(), "ran");
    }
    Ok(())
}

fn kind_name(kernel: &amdgpu_loader::Kernel<'_>) -> &'static str {
    kernel.metadata.map_or("normal", |m| m.kind.name())
}
