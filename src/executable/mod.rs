//! Executables: a code object loaded onto one GPU (placed, relocated, mapped), with its
//! kernels, device variables and functions by name.
//!
//! - `load`: from bytes, a mapped file or a bundle / fat binary, for the device's target;
//!   allocation, relocation and mapping ([`Device::load_code_object`], [`Device::load_with`],
//!   [`Device::load_file`], [`Device::load_source`]);
//! - `options`: what a load may ask for ([`LoadOptions`]: externals, callbacks, sharing);
//! - `externals`: undefined references resolved against executables loaded earlier;
//! - `lifecycle`: `init` kernels after load, `fini` kernels before unload, the user's setup
//!   and teardown callbacks, each exactly once per load;
//! - `permissions`: the image is read-only to the GPU unless it has mutable globals;
//! - `registry`: one load per (device, GPU, code-object content, links), shared by every
//!   caller that loads the same bytes while it lives.
//!
//! ```
//! # if aqueduct::backend::choose().ok() != Some(aqueduct::backend::BackendChoice::Simulator) { return Ok(()); }
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/kernels/bin/gfx90a/device_call.co5");
//! let device = aqueduct::Device::open()?;
//! let gpu = &device.gpus()?[0];
//! let executable = device.load_file(gpu, path, &aqueduct::LoadOptions::default())?;
//! let kernel = executable.kernel("device_call")?;
//! assert_eq!(kernel.name, "device_call");
//! for function in executable.functions()? {
//!     println!("{} at {:#x}", function.name, function.address);
//! }
//! # Ok::<(), aqueduct::Error>(())
//! ```
//!
//! [`Device::load_code_object`]: crate::Device::load_code_object
//! [`Device::load_with`]: crate::Device::load_with
//! [`Device::load_file`]: crate::Device::load_file
//! [`Device::load_source`]: crate::Device::load_source

mod externals;
mod lifecycle;
mod load;
mod options;
mod permissions;
mod registry;

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use amdgpu_loader::LoadedImage;
use kfd::{BufferObject, GpuMapping};

use crate::device::lifetime::{Owned, Wake};
use crate::error::{Error, Result};
use crate::kernarg::KernargLayout;
use crate::kernel::KeepLoaded;
pub use crate::kernel::Kernel;
use lifecycle::Load;
pub use options::{LoadOptions, SetupCallback, TeardownCallback};

/// A code object loaded on a GPU. Cloning gives another handle to the same load.
///
/// The load ends when the last handle goes: the teardown callback (if any) runs, then the
/// code object's `fini` kernels, then its memory is freed. At [`Device::shutdown`] the memory
/// goes at once with everything else; see [`LoadOptions`] for what happens to `fini` kernels
/// and callbacks then.
///
/// [`Device::shutdown`]: crate::Device::shutdown
#[derive(Clone)]
pub struct Executable {
    core: Arc<Core>,
    /// The load this handle keeps alive; `None` only for the view a teardown callback gets.
    load: Option<Arc<Load>>,
}

/// What every handle of one load shares: the memory and where things are in it.
pub(crate) struct Core {
    owned: Arc<Owned<ExecutableState>>,
    image: LoadedImage,
    gpu_id: u32,
}

/// The memory the image lives in.
pub(crate) struct ExecutableState {
    _mapping: GpuMapping,
    memory: Arc<BufferObject>,
}

impl Wake for ExecutableState {}

/// A device variable (a global of the code object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variable {
    /// Its GPU address.
    pub address: u64,
    /// Its size in bytes.
    pub size: u64,
}

/// A device function (`STT_FUNC`, exported or local; kernels' own entry symbols excluded):
/// its address is a value for a device function pointer. ROCr exposes none of these.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Its symbol name.
    pub name: String,
    /// The GPU address of its first instruction (not necessarily 256-aligned).
    pub address: u64,
    /// Bytes of code (`st_size`).
    pub size: u64,
    /// Whether other code objects may refer to it (local functions come from `.symtab`).
    pub exported: bool,
}

impl Executable {
    /// The GPU it is loaded on.
    pub fn gpu_id(&self) -> u32 {
        self.core.gpu_id
    }

    /// The kernel called `name` (with or without `.kd`).
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        self.core.owned.with(|_| {
            let image = &self.core.image;
            let kernel = image.kernel(name).ok_or_else(|| {
                let known: Vec<&str> = image.kernels().map(|k| k.name).collect();
                Error::InvalidArgument(format!(
                    "no kernel {name:?} in the code object (it has {known:?})"
                ))
            })?;
            let layout = Arc::new(KernargLayout::new(&kernel)?);
            Ok(Kernel {
                loaded: KeepLoaded(
                    self.load
                        .clone()
                        .map(|load| load as Arc<dyn Any + Send + Sync>),
                ),
                layout,
                gpu_id: self.core.gpu_id,
                name: kernel.name.to_owned(),
                kernel_object: kernel.descriptor_address,
                entry_address: kernel.entry_address,
                preload_entry_address: kernel.preload_entry_address,
                kernarg_size: kernel.kernarg_size,
                kernarg_align: kernel.kernarg_align,
                group_segment_size: kernel.group_segment_size,
                private_segment_size: kernel.private_segment_size,
                wavefront_size: kernel.wavefront_size,
                args: kernel.args.to_vec(),
            })
        })
    }

    /// The names of every kernel (normal, init and fini), in descriptor-address order.
    pub fn kernel_names(&self) -> Result<Vec<String>> {
        self.core.owned.with(|_| {
            Ok(self
                .core
                .image
                .kernels()
                .map(|k| k.name.to_owned())
                .collect())
        })
    }

    /// The device variable called `name`.
    pub fn variable(&self, name: &str) -> Result<Variable> {
        self.core.owned.with(|_| {
            let variable = self.core.image.variable(name).ok_or_else(|| {
                Error::InvalidArgument(format!("no device variable {name:?} in the code object"))
            })?;
            Ok(Variable {
                address: variable.address,
                size: variable.size,
            })
        })
    }

    /// Every device function (`STT_FUNC` from `.dynsym` and `.symtab`, kernel entry symbols
    /// excluded) with its GPU address, in the order the code object lists them.
    pub fn functions(&self) -> Result<Vec<Function>> {
        self.core.owned.with(|_| {
            Ok(self
                .core
                .image
                .functions()
                .map(|f| Function {
                    name: f.name.to_owned(),
                    address: f.address,
                    size: f.size,
                    exported: f.exported,
                })
                .collect())
        })
    }

    /// The device function called `name`.
    pub fn function(&self, name: &str) -> Result<Function> {
        self.core.owned.with(|_| {
            let f = self.core.image.function(name).ok_or_else(|| {
                Error::InvalidArgument(format!("no device function {name:?} in the code object"))
            })?;
            Ok(Function {
                name: f.name.to_owned(),
                address: f.address,
                size: f.size,
                exported: f.exported,
            })
        })
    }

    /// The loader's view of the image (kernels, variables, functions with their addresses).
    pub fn image(&self) -> &LoadedImage {
        &self.core.image
    }

    /// Whether `self` and `other` are handles to the same load (as every caller that loads
    /// the same code object on the same GPU while it lives gets; see [`LoadOptions::shared`]).
    pub fn same_load(&self, other: &Executable) -> bool {
        Arc::ptr_eq(&self.core, &other.core)
    }

    /// Write `bytes` into the device variable `name` at byte `offset`.
    pub fn write_variable(&self, name: &str, offset: u64, bytes: &[u8]) -> Result<()> {
        let variable = self.variable(name)?;
        self.variable_access(&variable, offset, bytes.len(), |state, at| {
            state.memory.write(at, bytes)
        })
    }

    /// Read the device variable `name` at byte `offset` into `bytes`.
    pub fn read_variable(&self, name: &str, offset: u64, bytes: &mut [u8]) -> Result<()> {
        let variable = self.variable(name)?;
        let len = bytes.len();
        self.variable_access(&variable, offset, len, |state, at| {
            state.memory.read(at, bytes)
        })
    }

    fn variable_access(
        &self,
        variable: &Variable,
        offset: u64,
        len: usize,
        access: impl FnOnce(&ExecutableState, u64) -> kfd::Result<()>,
    ) -> Result<()> {
        if offset
            .checked_add(len as u64)
            .is_none_or(|end| end > variable.size)
        {
            return Err(Error::InvalidArgument(format!(
                "bytes {offset}..{offset}+{len} are outside a variable of {} bytes",
                variable.size
            )));
        }
        self.core.owned.with(|state| {
            let at = variable.address - state.memory.va() + offset;
            access(state, at).map_err(|e| Error::driver(|| "a device variable".to_owned(), e))
        })
    }
}

impl fmt::Debug for Executable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Executable")
            .field("gpu_id", &format_args!("{:#x}", self.core.gpu_id))
            .field("base", &format_args!("{:#x}", self.core.image.base()))
            .field("target", &self.core.image.target().to_string())
            .finish_non_exhaustive()
    }
}
