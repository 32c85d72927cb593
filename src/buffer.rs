//! Buffers: GPU-visible memory of every [`MemoryLocation`], read and written by the host as
//! typed slices, copied between buffers, and shared with peer GPUs.

use std::any::Any;
use std::fmt;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};

use kfd::{Allocation, BufferObject, GpuMapping, MemoryKind};
use zerocopy::{FromBytes, Immutable, IntoBytes};

use crate::agent::{GpuAgent, MemoryLocation};
use crate::device::lifetime::{Owned, Wake};
use crate::device::{Device, TeardownStage};
use crate::error::{Error, Result};
use crate::kernarg::{Arg, KeepAlive};

/// A buffer of GPU-visible memory. Cloning gives another handle to the same memory; it is
/// freed when the last handle goes (or at [`Device::shutdown`]).
#[derive(Clone)]
pub struct Buffer {
    owned: Arc<Owned<BufferState>>,
    len: usize,
    gpu_address: u64,
    location: MemoryLocation,
    gpu_id: u32,
}

/// The kernel objects of a buffer.
pub(crate) struct BufferState {
    bo: Arc<BufferObject>,
    /// The GPU mappings: the owner's (or every GPU's, for host memory), then peers'.
    mappings: Mutex<Vec<GpuMapping>>,
}

impl Wake for BufferState {}

impl Device {
    /// Allocate `bytes` of `location` memory for `gpu`. Device memory is mapped on `gpu`
    /// (see [`Buffer::allow_access`] for peers); host memory is mapped on every GPU of the
    /// device. The memory starts zeroed.
    pub fn alloc(&self, gpu: &GpuAgent, location: MemoryLocation, bytes: usize) -> Result<Buffer> {
        self.alloc_with(gpu, location, bytes, false)
    }

    /// Allocate, optionally executable by the GPU (code objects).
    pub(crate) fn alloc_with(
        &self,
        gpu: &GpuAgent,
        location: MemoryLocation,
        bytes: usize,
        executable: bool,
    ) -> Result<Buffer> {
        let index = self.gpu_index(gpu)?;
        if bytes == 0 {
            return Err(Error::InvalidArgument(format!(
                "a buffer of 0 bytes of {location}"
            )));
        }
        let gpu = &self.shared().gpus()[index];
        let kind = match location {
            MemoryLocation::Device if gpu.large_bar => MemoryKind::VramHostVisible,
            MemoryLocation::Device => MemoryKind::VramPrivate,
            MemoryLocation::HostFine | MemoryLocation::Kernarg => MemoryKind::GttFine,
            MemoryLocation::HostCoarse => MemoryKind::GttCoarse,
        };
        let on: Vec<u32> = if location.is_host() {
            self.shared().gpus().iter().map(|g| g.gpu_id).collect()
        } else {
            vec![gpu.gpu_id]
        };
        let gpu_id = gpu.gpu_id;
        let state = self.shared().with_live(|live| {
            let what = || format!("{bytes} bytes of {location} on GPU {gpu_id:#x}");
            let mut request = Allocation::new(kind, bytes as u64);
            if executable {
                request = request.executable();
            }
            let bo = live
                .kfd
                .allocate(gpu_id, request)
                .map_err(|e| Error::driver(what, e))?;
            let mapping = bo.map_to(&on).map_err(|e| Error::driver(what, e))?;
            Ok(BufferState {
                bo,
                mappings: Mutex::new(vec![mapping]),
            })
        })?;
        let gpu_address = state.bo.va();
        Ok(Buffer {
            owned: Owned::new(self.shared(), TeardownStage::Buffers, state),
            len: bytes,
            gpu_address,
            location,
            gpu_id,
        })
    }
}

impl KeepAlive for Buffer {
    fn keep_alive(&self) -> Arc<dyn Any + Send + Sync> {
        Arc::clone(&self.owned) as _
    }
}

impl<'a> Arg<'a> {
    /// A buffer for a pointer argument (its device address), kept alive by the launch until
    /// the kernel has completed: dropping every handle to it while the kernel runs frees
    /// nothing under the kernel.
    pub fn buffer(buffer: &'a Buffer) -> Self {
        Arg::memory(buffer.gpu_address, buffer)
    }
}

impl Buffer {
    /// A buffer of `device` over a buffer object already mapped (`mapping`): what
    /// [`Device::register_host_memory`] hands out.
    pub(crate) fn from_object(
        device: &Device,
        bo: Arc<BufferObject>,
        mapping: GpuMapping,
        location: MemoryLocation,
        gpu_id: u32,
    ) -> Self {
        let len = bo.size() as usize;
        let gpu_address = bo.va();
        let state = BufferState {
            bo,
            mappings: Mutex::new(vec![mapping]),
        };
        Self {
            owned: Owned::new(device.shared(), TeardownStage::Buffers, state),
            len,
            gpu_address,
            location,
            gpu_id,
        }
    }

    /// Run `f` with the CPU address of the memory (`None` where the CPU cannot map it). The
    /// memory stays mapped while `f` runs (a shutdown waits for it), so `f` must be short.
    pub(crate) fn with_host_memory<R>(
        &self,
        f: impl FnOnce(Option<NonNull<u8>>) -> Result<R>,
    ) -> Result<R> {
        self.owned.with_fast(|state| f(state.bo.host_ptr()))
    }

    /// Its size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no bytes (never: a buffer has at least one).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Its GPU virtual address (the same on every GPU that maps it).
    pub fn gpu_address(&self) -> u64 {
        self.gpu_address
    }

    /// Where it lives.
    pub fn location(&self) -> MemoryLocation {
        self.location
    }

    /// The GPU it was allocated for.
    pub fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    /// Write `data` at byte `offset`. Device memory the CPU cannot map (no large BAR) is
    /// written by the GPU's copy engine through a host staging buffer; the call waits for it.
    pub fn write<T: IntoBytes + Immutable>(&self, offset: usize, data: &[T]) -> Result<()> {
        let bytes = data.as_bytes();
        self.check_range(offset, bytes.len())?;
        self.owned.with(|state| {
            if state.bo.host_ptr().is_none() && self.location == MemoryLocation::Device {
                let va = self.gpu_address + offset as u64;
                return self
                    .owned
                    .device()
                    .with_live(|live| live.staged.write(live, self.gpu_id, va, bytes));
            }
            state
                .bo
                .write(offset as u64, bytes)
                .map_err(|e| self.host_access_error(e))
        })
    }

    /// Read `out.len()` elements from byte `offset` (through the copy engine where the CPU
    /// cannot map the memory, as [`Buffer::write`]).
    pub fn read<T: FromBytes + IntoBytes>(&self, offset: usize, out: &mut [T]) -> Result<()> {
        let bytes = out.as_mut_bytes();
        self.check_range(offset, bytes.len())?;
        self.owned.with(|state| {
            if state.bo.host_ptr().is_none() && self.location == MemoryLocation::Device {
                let va = self.gpu_address + offset as u64;
                return self
                    .owned
                    .device()
                    .with_live(|live| live.staged.read(live, self.gpu_id, va, bytes));
            }
            state
                .bo
                .read(offset as u64, bytes)
                .map_err(|e| self.host_access_error(e))
        })
    }

    /// The whole buffer as elements of `T` (a trailing partial element is left out).
    pub fn to_vec<T: FromBytes + IntoBytes + Clone>(&self) -> Result<Vec<T>> {
        let count = self.len / size_of::<T>().max(1);
        let mut out = vec![T::new_zeroed(); count];
        self.read(0, &mut out)?;
        Ok(out)
    }

    /// Set every byte to `byte`.
    pub fn fill(&self, byte: u8) -> Result<()> {
        self.write(0, &vec![byte; self.len])
    }

    /// Whether the buffer was allocated by `device` (copy queues check it).
    pub(crate) fn belongs_to(&self, device: &Arc<crate::device::DeviceShared>) -> bool {
        Arc::ptr_eq(self.owned.device(), device)
    }

    /// The GPU address of `len` bytes at `offset`, for an engine or kernel of `device` (copy
    /// queues and blit kernels): the buffer must be `device`'s and the range inside it; `what`
    /// names the buffer in the error ("source", "destination").
    pub(crate) fn gpu_range(
        &self,
        device: &Arc<crate::device::DeviceShared>,
        offset: usize,
        len: usize,
        what: &str,
    ) -> Result<u64> {
        if !self.belongs_to(device) {
            return Err(Error::InvalidArgument(format!(
                "the {what} buffer belongs to another device"
            )));
        }
        if offset.checked_add(len).is_none_or(|end| end > self.len) {
            return Err(Error::InvalidArgument(format!(
                "{what} range {offset:#x}+{len:#x} is outside its {:#x}-byte buffer",
                self.len
            )));
        }
        Ok(self.gpu_address() + offset as u64)
    }

    /// Copy all of `src` to the start of this buffer (host↔device or device↔device).
    pub fn copy_from(&self, src: &Buffer) -> Result<()> {
        self.copy_range(0, src, 0, src.len)
    }

    /// Copy `len` bytes from `src` at `src_offset` to this buffer at `offset`.
    ///
    /// Where both buffers are host-accessible (host memory, or device memory of a large-BAR
    /// GPU) the CPU copies. Otherwise the copy engine of the GPU owning the unmappable memory
    /// does, and waits: both buffers must be mapped on that GPU and the ranges must not
    /// overlap.
    pub fn copy_range(
        &self,
        offset: usize,
        src: &Buffer,
        src_offset: usize,
        len: usize,
    ) -> Result<()> {
        self.check_range(offset, len)?;
        src.check_range(src_offset, len)?;
        if !Arc::ptr_eq(self.owned.device(), src.owned.device()) {
            return Err(Error::InvalidArgument(
                "copying between buffers of different devices".to_owned(),
            ));
        }
        self.owned.with(|dst| {
            src.owned.with(|from| {
                let (Some(to), Some(source)) = (dst.bo.host_ptr(), from.bo.host_ptr()) else {
                    // Device memory the CPU cannot map: the owning GPU's copy engine.
                    let gpu = if dst.bo.host_ptr().is_none() {
                        self.gpu_id
                    } else {
                        src.gpu_id
                    };
                    let (to, source) = (
                        self.gpu_address + offset as u64,
                        src.gpu_address + src_offset as u64,
                    );
                    let overlap = to < source + len as u64 && source < to + len as u64;
                    if overlap
                        || ![&dst.bo, &from.bo]
                            .iter()
                            .all(|b| b.mapped_gpus().contains(&gpu))
                    {
                        return Err(Error::Unsupported(format!(
                            "a copy the CPU cannot do (device memory without a large BAR) needs \
                             both buffers mapped on GPU {gpu:#x} and ranges that do not overlap"
                        )));
                    }
                    return self
                        .owned
                        .device()
                        .with_live(|live| live.staged.copy(live, gpu, to, source, len as u64));
                };
                // SAFETY: both ranges were checked against the buffers' lengths and lie in
                // their live CPU mappings (kept alive by the read guards held here); `copy`
                // allows the two to overlap (a buffer copied onto itself).
                unsafe {
                    std::ptr::copy(
                        source.as_ptr().add(src_offset),
                        to.as_ptr().add(offset),
                        len,
                    );
                }
                Ok(())
            })
        })
    }

    /// Map this buffer on more GPUs (peers of its own, e.g. in an XGMI hive), so kernels
    /// there can reach it. Mapping on a GPU that maps it already is a no-op.
    pub fn allow_access(&self, gpus: &[&GpuAgent]) -> Result<()> {
        let device = self.owned.device();
        let mut ids = Vec::with_capacity(gpus.len());
        for gpu in gpus {
            if !device.gpus().iter().any(|g| g.gpu_id == gpu.gpu_id) {
                return Err(Error::InvalidArgument(format!(
                    "GPU {:#x} is not an agent of this buffer's device",
                    gpu.gpu_id
                )));
            }
            ids.push(gpu.gpu_id);
        }
        self.owned.with(|state| {
            let mut mappings = state
                .mappings
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let mapped = state.bo.mapped_gpus();
            ids.retain(|id| !mapped.contains(id));
            if ids.is_empty() {
                return Ok(());
            }
            let mapping = state
                .bo
                .map_to(&ids)
                .map_err(|e| Error::driver(|| format!("mapping a buffer on GPUs {ids:x?}"), e))?;
            mappings.push(mapping);
            Ok(())
        })
    }

    /// Whether `gpu` maps this buffer (the GPU it was made for, or one it was mapped on
    /// since): whether that GPU's engines and kernels reach it.
    pub fn is_mapped_on(&self, gpu: &GpuAgent) -> Result<bool> {
        self.is_mapped_on_gpu(gpu.gpu_id)
    }

    /// Whether the GPU `gpu_id` maps this buffer (its engines and kernels reach it).
    pub(crate) fn is_mapped_on_gpu(&self, gpu_id: u32) -> Result<bool> {
        self.owned
            .with(|state| Ok(state.bo.mapped_gpus().contains(&gpu_id)))
    }

    /// The host address of the buffer's CPU mapping, for code that writes it directly.
    ///
    /// # Safety
    ///
    /// The pointer is valid for `len()` bytes only while this buffer is alive and its device
    /// is not shut down; the caller must not use it after either, and must not create Rust
    /// references that alias GPU writes.
    pub unsafe fn host_ptr(&self) -> Result<Option<NonNull<u8>>> {
        self.owned.with(|state| Ok(state.bo.host_ptr()))
    }

    fn check_range(&self, offset: usize, len: usize) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(Error::InvalidArgument(format!(
                "bytes {offset}..{offset}+{len} are outside a buffer of {} bytes",
                self.len
            ))),
        }
    }

    fn host_access_error(&self, error: kfd::Error) -> Error {
        if self.location == MemoryLocation::Device {
            Error::Unsupported(format!(
                "the CPU cannot reach this GPU's device memory (no large BAR): {error}"
            ))
        } else {
            Error::driver(|| "host access to a buffer".to_owned(), error)
        }
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("len", &self.len)
            .field("gpu_address", &format_args!("{:#x}", self.gpu_address))
            .field("location", &self.location)
            .field("gpu_id", &format_args!("{:#x}", self.gpu_id))
            .finish_non_exhaustive()
    }
}
