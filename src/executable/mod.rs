//! Executables: a code object loaded onto one GPU (placed, relocated, mapped), with its
//! kernels, device variables and functions by name.

use std::fmt;
use std::sync::Arc;

use amdgpu_loader::{CodeObject, KernelArg, LoadedImage, NoExternals, TargetId};
use kfd::{Allocation, BufferObject, GpuMapping, MemoryKind};

use crate::agent::GpuAgent;
use crate::kernarg::KernargLayout;
use crate::device::lifetime::{Owned, Wake};
use crate::device::{Device, TeardownStage};
use crate::error::{Error, Result};

/// A code object loaded on a GPU. Cloning gives another handle; the code's memory is freed
/// when the last handle goes (or at [`Device::shutdown`]).
#[derive(Clone)]
pub struct Executable {
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

/// A kernel of an executable: what a dispatch packet and its kernarg segment need.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Kernel {
    /// Its name (without `.kd`).
    pub name: String,
    /// The kernel descriptor's GPU address: the dispatch packet's `kernel_object`.
    pub kernel_object: u64,
    /// The GPU address of its first instruction.
    pub entry_address: u64,
    /// The second entry point of a kernel that takes preloaded kernel arguments (the first
    /// skips the preload prologue on firmware that preloads); `None` otherwise.
    pub preload_entry_address: Option<u64>,
    /// Bytes of its kernarg segment.
    pub kernarg_size: u32,
    /// Alignment of its kernarg segment.
    pub kernarg_align: u32,
    /// Static group (LDS) bytes per work-group.
    pub group_segment_size: u32,
    /// Private (scratch) bytes per work-item.
    pub private_segment_size: u32,
    /// The wavefront size it was compiled for.
    pub wavefront_size: u32,
    /// Its arguments from the metadata (explicit, then hidden), in order.
    pub args: Vec<KernelArg>,
    /// Where its kernel arguments go: what [`Queue::launch`] fills.
    ///
    /// [`Queue::launch`]: crate::Queue::launch
    pub layout: Arc<KernargLayout>,
    /// The GPU it is loaded on.
    pub gpu_id: u32,
}

/// A device variable (a global of the code object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variable {
    /// Its GPU address.
    pub address: u64,
    /// Its size in bytes.
    pub size: u64,
}

impl Device {
    /// Load the code object `bytes` on `gpu`: parse and validate it, check that it runs on the
    /// GPU's target, place it in memory the GPU executes from, relocate it, map it.
    pub fn load_code_object(&self, gpu: &GpuAgent, bytes: &[u8]) -> Result<Executable> {
        let index = self.gpu_index(gpu)?;
        let gpu = &self.shared().gpus()[index];
        let code_object = CodeObject::parse(bytes)
            .map_err(|e| Error::InvalidArgument(format!("not a loadable code object: {e}")))?;
        let agent = TargetId::parse(&gpu.target_id.to_string())
            .map_err(|e| Error::Unsupported(format!("GPU target {}: {e}", gpu.target_id)))?;
        code_object.target().runs_on(&agent).map_err(|e| {
            Error::InvalidArgument(format!(
                "the code object is built for {}, the GPU is {}: {e}",
                code_object.target(),
                gpu.target_id
            ))
        })?;
        let kind = if gpu.large_bar {
            MemoryKind::VramHostVisible
        } else {
            MemoryKind::GttCoarse
        };
        let size = code_object.image_size().max(1);
        let align = code_object.image_align().max(4096);
        let gpu_id = gpu.gpu_id;
        let (state, image) = self.shared().with_live(|live| {
            let what = || format!("{size} bytes of code on GPU {gpu_id:#x}");
            let memory = live
                .kfd
                .allocate(
                    gpu_id,
                    Allocation::new(kind, size).executable().aligned(align),
                )
                .map_err(|e| Error::driver(what, e))?;
            let host = memory.host_ptr().ok_or_else(|| {
                Error::Unsupported("code memory without a CPU mapping".to_owned())
            })?;
            // SAFETY: the buffer was just allocated with at least `size` bytes mapped at
            // `host`; nothing else (no GPU: it is not mapped yet) accesses it during the load.
            let dest = unsafe { std::slice::from_raw_parts_mut(host.as_ptr(), size as usize) };
            let image = code_object
                .load(dest, memory.va(), &NoExternals)
                .map_err(|e| Error::InvalidArgument(format!("loading the code object: {e}")))?;
            let mapping = memory
                .map_to(&[gpu_id])
                .map_err(|e| Error::driver(what, e))?;
            Ok((
                ExecutableState {
                    _mapping: mapping,
                    memory,
                },
                image,
            ))
        })?;
        Ok(Executable {
            owned: Owned::new(self.shared(), TeardownStage::Executables, state),
            image,
            gpu_id,
        })
    }
}

impl Executable {
    /// The GPU it is loaded on.
    pub fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    /// The kernel called `name` (with or without `.kd`).
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        self.owned.with(|_| {
            let kernel = self.image.kernel(name).ok_or_else(|| {
                let known: Vec<&str> = self.image.kernels().map(|k| k.name).collect();
                Error::InvalidArgument(format!(
                    "no kernel {name:?} in the code object (it has {known:?})"
                ))
            })?;
            let layout = Arc::new(KernargLayout::new(&kernel)?);
            Ok(Kernel {
                layout,
                gpu_id: self.gpu_id,
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

    /// The device variable called `name`.
    pub fn variable(&self, name: &str) -> Result<Variable> {
        self.owned.with(|_| {
            let variable = self.image.variable(name).ok_or_else(|| {
                Error::InvalidArgument(format!("no device variable {name:?} in the code object"))
            })?;
            Ok(Variable {
                address: variable.address,
                size: variable.size,
            })
        })
    }

    /// The loader's view of the image (kernels, variables, functions with their addresses).
    pub fn image(&self) -> &LoadedImage {
        &self.image
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
        self.owned.with(|state| {
            let at = variable.address - state.memory.va() + offset;
            access(state, at).map_err(|e| Error::driver(|| "a device variable".to_owned(), e))
        })
    }
}

impl fmt::Debug for Executable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Executable")
            .field("gpu_id", &format_args!("{:#x}", self.gpu_id))
            .field("base", &format_args!("{:#x}", self.image.base()))
            .field("target", &self.image.target().to_string())
            .finish_non_exhaustive()
    }
}
