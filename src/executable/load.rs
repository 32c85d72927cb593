//! Loading: pick the code object for the GPU's target (from a plain code object, an offload
//! bundle or a host binary's `.hip_fatbin`), allocate executable memory, place and relocate the
//! image with `amdgpu-loader` (externals from linked executables), map it to the GPU.
//!
//! Memory permissions: see `permissions` (GPU read-only unless the image has mutable globals;
//! one set of permissions per image).

use std::path::Path;
use std::sync::Arc;

use amdgpu_loader::CodeObject;
use kfd::{Allocation, MemoryKind};

use super::externals::Links;
use super::lifecycle::Load;
use super::options::LoadOptions;
use super::permissions;
use super::registry::{self, LoadKey};
use super::{Core, Executable, ExecutableState};
use crate::agent::GpuAgent;
use crate::code_object_source::{self, CodeObjectSource, Origin};
use crate::device::lifetime::Owned;
use crate::device::{Device, TeardownStage};
use crate::error::{Error, Result};

impl Device {
    /// Load the code object `bytes` on `gpu` with the default [`LoadOptions`] (shared, no
    /// links, no callbacks). `bytes` may be a plain code object, an offload bundle or a host
    /// binary with `.hip_fatbin`; the code object that suits the GPU's target is picked, and a
    /// mismatch is an error naming both targets.
    pub fn load_code_object(&self, gpu: &GpuAgent, bytes: &[u8]) -> Result<Executable> {
        self.load_with(gpu, bytes, &LoadOptions::default())
    }

    /// Load the code object `bytes` on `gpu` as `options` say: parse and validate it, check
    /// that it runs on the GPU's target, place it in memory the GPU executes from, relocate it
    /// (undefined references from [`LoadOptions::link_with`]), map it, run its `init` kernels
    /// and the setup callback.
    pub fn load_with(
        &self,
        gpu: &GpuAgent,
        bytes: &[u8],
        options: &LoadOptions,
    ) -> Result<Executable> {
        self.load_from(gpu, bytes, &Origin::Memory, options)
    }

    /// Load the code object in the file at `path` (mapped, not copied), as
    /// [`Device::load_with`].
    pub fn load_file(
        &self,
        gpu: &GpuAgent,
        path: impl AsRef<Path>,
        options: &LoadOptions,
    ) -> Result<Executable> {
        let source = CodeObjectSource::open(path)?;
        self.load_source(gpu, &source, options)
    }

    /// Load the code object of `source` that suits `gpu`, as [`Device::load_with`].
    pub fn load_source(
        &self,
        gpu: &GpuAgent,
        source: &CodeObjectSource,
        options: &LoadOptions,
    ) -> Result<Executable> {
        self.load_from(gpu, source.bytes(), source.origin(), options)
    }

    fn load_from(
        &self,
        gpu: &GpuAgent,
        bytes: &[u8],
        origin: &Origin,
        options: &LoadOptions,
    ) -> Result<Executable> {
        let index = self.gpu_index(gpu)?;
        let gpu = &self.shared().gpus()[index];
        let selected = code_object_source::select(bytes, &gpu.target_id, origin)?;
        let links = Links::new(self.shared(), gpu.gpu_id, &options.link_with)?;
        let start = |key: Option<LoadKey>| {
            let core = self.place(gpu, &selected.bytes, &links)?;
            Load::start(core, options, key)
        };
        let load = if options.shared {
            let key = LoadKey::new(
                Arc::as_ptr(self.shared()) as usize,
                gpu.gpu_id,
                &selected.bytes,
                links.bases(),
            );
            registry::find_or_load(&key, || start(Some(key.clone())))?
        } else {
            start(None)?
        };
        Ok(Executable {
            core: Arc::clone(load.core()),
            load: Some(load),
        })
    }

    /// Allocate, place, relocate and map one code object.
    fn place(&self, gpu: &GpuAgent, bytes: &[u8], links: &Links<'_>) -> Result<Core> {
        let code_object = CodeObject::parse(bytes)
            .map_err(|e| Error::InvalidArgument(format!("not a loadable code object: {e}")))?;
        let kind = if gpu.large_bar {
            MemoryKind::VramHostVisible
        } else {
            MemoryKind::GttCoarse
        };
        let size = code_object.image_size().max(1);
        let align = code_object.image_align().max(4096);
        let mut request = Allocation::new(kind, size).executable().aligned(align);
        if !permissions::gpu_writes_image(&code_object) {
            request = request.gpu_read_only();
        }
        let gpu_id = gpu.gpu_id;
        let (state, image) = self.shared().with_live(|live| {
            let what = || format!("{size} bytes of code on GPU {gpu_id:#x}");
            let memory = live
                .kfd
                .allocate(gpu_id, request)
                .map_err(|e| Error::driver(what, e))?;
            let host = memory.host_ptr().ok_or_else(|| {
                Error::Unsupported("code memory without a CPU mapping".to_owned())
            })?;
            let len = usize::try_from(size)
                .map_err(|_| Error::InvalidArgument(format!("an image of {size} bytes")))?;
            // SAFETY: the buffer was just allocated with at least `size` bytes mapped at
            // `host`; nothing else (no GPU: it is not mapped yet) accesses it during the load.
            let dest = unsafe { std::slice::from_raw_parts_mut(host.as_ptr(), len) };
            let image = code_object
                .load(dest, memory.va(), links)
                .map_err(|e| match e {
                    amdgpu_loader::Error::UndefinedSymbol { name, .. } => {
                        Error::UnresolvedSymbol { name }
                    }
                    other => Error::InvalidArgument(format!("loading the code object: {other}")),
                })?;
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
        Ok(Core {
            owned: Owned::new(self.shared(), TeardownStage::Executables, state),
            image,
            gpu_id,
        })
    }
}
