//! What happens around a load's life: `init` kernels after loading and `fini` kernels before
//! unloading (code-objects.md §10: metadata `.kind: init` / `fini`; ROCr never runs them), and
//! the user's setup and teardown callbacks (numba-cuda's module callbacks, reliability.md §3),
//! each exactly once per load.
//!
//! A [`Load`] is what every handle of one load holds; its `Drop` is the unload: teardown
//! callback, `fini` kernels, then the memory goes with the last [`Core`] reference.
//!
//! `init` and `fini` kernels run on a queue of their own, made for the occasion, through
//! [`Queue::launch`](crate::Queue::launch) like any kernel: one work-item each (LLVM's
//! `amdgcn.device.init` walks the constructor array in one thread), waited on with a timeout
//! after which their queue is aborted. The queue goes when they are done. A failing `init`
//! kernel (fault, timeout) fails the load with the queue's error; a failing `fini` kernel is
//! logged (an unload cannot fail). The launch gives them what every launch gets: hidden
//! arguments, and scratch for the dynamic stack LLVM marks every init kernel as using.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use amdgpu_loader::metadata::KernelKind;
use tracing::{debug, warn};

use super::options::{LoadOptions, TeardownCallback};
use super::registry::{self, LoadKey, Shareable};
use super::{Core, Executable};
use crate::QueueOptions;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::kernarg::Geometry;

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

/// Run each kernel of `names` once, one work-item, in order, waiting for each: through
/// [`Queue::launch`](crate::Queue::launch) like every other launch (arguments checked against
/// the metadata, hidden arguments, scratch for a dynamic stack, the agent's dispatch limits).
/// A kernel that does not finish within `timeout` has its queue aborted.
fn run_kernels(
    device: &Device,
    core: &Arc<Core>,
    names: &[String],
    timeout: Duration,
) -> Result<()> {
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
    // A view of the load: whoever runs these holds the load itself.
    let view = Executable {
        core: Arc::clone(core),
        load: None,
    };
    for name in names {
        let kernel = view.kernel(name)?;
        let kind = core
            .image
            .kernel(name)
            .and_then(|k| k.metadata)
            .map_or("normal", |m| m.kind.name());
        queue
            .launch(&kernel, &Geometry::d1(1, 1), &[])?
            .wait_or_abort(timeout)
            .map_err(|error| match error {
                Error::Timeout { after, .. } => Error::Timeout {
                    what: format!("the {kind} kernel {name}"),
                    after,
                },
                other => other,
            })?;
        debug!(kernel = name.as_str(), "ran");
    }
    Ok(())
}
