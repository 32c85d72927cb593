//! What a load may ask for: executables to resolve undefined references against, callbacks
//! after load and before unload, whether identical loads are shared, and how long `init` and
//! `fini` kernels may run.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::Executable;
use crate::error::Result;

/// Called once after a load (after its `init` kernels), before any caller gets the executable.
/// An error fails the load.
pub type SetupCallback = Arc<dyn Fn(&Executable) -> Result<()> + Send + Sync>;

/// Called once before an unload (before the `fini` kernels). The executable it gets is a view
/// of the load being ended: keeping a clone of it keeps the memory but not the load (the
/// `fini` kernels run regardless).
pub type TeardownCallback = Arc<dyn Fn(&Executable) + Send + Sync>;

/// How long an `init` or `fini` kernel may run unless [`LoadOptions::kernel_timeout`] says
/// otherwise. Unsure what suits hardware: constructors are usually tiny; this leaves room for
/// a slow simulator.
pub const DEFAULT_INIT_FINI_TIMEOUT: Duration = Duration::from_secs(30);

/// Options of [`Device::load_with`] and friends.
///
/// # Sharing
///
/// By default a load is shared: while one executable of the same code object (the same bytes
/// after picking from a bundle), on the same GPU of the same open device, linked against the
/// same executables, is alive, loading it again returns a handle to that load instead of
/// loading anew, even when many threads load at once (they wait for the first). The first
/// load's callbacks and timeout apply; a later caller's are not used. [`LoadOptions::private`]
/// opts out (a load of its own, with its own copy of every global).
///
/// # Callbacks, `init` and `fini` kernels
///
/// Per load, in this order: the `init` kernels run (metadata `.kind: init`, one work-item
/// each, on an internal queue), then the setup callback; the executable is handed out only
/// after both. When the last handle goes: the teardown callback, then the `fini` kernels, then
/// the memory is freed. Each runs exactly once per load, never more, however many threads
/// share it. The setup callback runs while other loaders of the same object wait: it must not
/// load that object itself.
///
/// At [`Device::shutdown`] the device destroys queues first and refuses new ones, then frees
/// every executable's memory: `fini` kernels of executables still alive then do **not** run
/// (they could only run on a queue, and the device is closed); their teardown callbacks still
/// run once, when their last handle goes, and see every call fail with
/// [`ErrorKind::Closed`]. Drop executables before shutting down if their `fini` kernels
/// matter.
///
/// [`Device::load_with`]: crate::Device::load_with
/// [`Device::shutdown`]: crate::Device::shutdown
/// [`ErrorKind::Closed`]: crate::ErrorKind::Closed
#[derive(Clone)]
pub struct LoadOptions {
    pub(crate) link_with: Vec<Executable>,
    pub(crate) setup: Option<SetupCallback>,
    pub(crate) teardown: Option<TeardownCallback>,
    pub(crate) shared: bool,
    pub(crate) kernel_timeout: Duration,
    pub(crate) init_fini_kernels: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            link_with: Vec::new(),
            setup: None,
            teardown: None,
            shared: true,
            kernel_timeout: DEFAULT_INIT_FINI_TIMEOUT,
            init_fini_kernels: true,
        }
    }
}

impl LoadOptions {
    /// The defaults: no links, no callbacks, shared.
    pub fn new() -> Self {
        Self::default()
    }

    /// Resolve the code object's undefined references against the exported functions,
    /// variables and kernel descriptors of `executables` (loaded earlier on the same GPU),
    /// searched in order, the first definition winning. They stay loaded as long as the new
    /// executable does. Without a definition, an undefined reference fails the load with
    /// [`Error::UnresolvedSymbol`] naming it.
    ///
    /// [`Error::UnresolvedSymbol`]: crate::Error::UnresolvedSymbol
    #[must_use]
    pub fn link_with(mut self, executables: &[&Executable]) -> Self {
        self.link_with
            .extend(executables.iter().map(|&e| e.clone()));
        self
    }

    /// Call `setup` once after each load, before the executable is handed out.
    #[must_use]
    pub fn on_setup(
        mut self,
        setup: impl Fn(&Executable) -> Result<()> + Send + Sync + 'static,
    ) -> Self {
        self.setup = Some(Arc::new(setup));
        self
    }

    /// Call `teardown` once before each unload.
    #[must_use]
    pub fn on_teardown(mut self, teardown: impl Fn(&Executable) + Send + Sync + 'static) -> Self {
        self.teardown = Some(Arc::new(teardown));
        self
    }

    /// A load of its own, never shared with another caller's load of the same code object.
    #[must_use]
    pub fn private(mut self) -> Self {
        self.shared = false;
        self
    }

    /// Do not run the code object's `init` and `fini` kernels: for images whose own start
    /// code runs the constructors and destructors (LLVM libc GPU programs, whose `_begin`
    /// walks `.init_array`; running LLVM's `amdgcn.device.init` too would run them twice).
    #[must_use]
    pub fn without_init_fini_kernels(mut self) -> Self {
        self.init_fini_kernels = false;
        self
    }

    /// Whether identical loads are shared (the default).
    pub fn shared(&self) -> bool {
        self.shared
    }

    /// How long each `init` or `fini` kernel may run before the load (or the unload's `fini`
    /// step) gives up with a timeout.
    #[must_use]
    pub fn kernel_timeout(mut self, timeout: Duration) -> Self {
        self.kernel_timeout = timeout;
        self
    }
}

impl fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadOptions")
            .field("link_with", &self.link_with)
            .field("setup", &self.setup.is_some())
            .field("teardown", &self.teardown.is_some())
            .field("shared", &self.shared)
            .field("kernel_timeout", &self.kernel_timeout)
            .field("init_fini_kernels", &self.init_fini_kernels)
            .finish()
    }
}
