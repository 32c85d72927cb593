//! Blit kernels: the copy and fill kernels the driver ships (`kernels/blit.cl`, built for
//! every target it supports into one offload bundle by `kernels/build.sh`), dispatched on a
//! compute queue like any launch. ROCr copies with kernels of its own the same way
//! (`core/runtime/blit_kernel.cpp`: CopyAligned, CopyMisaligned and Fill code objects per ISA,
//! dispatched on an internal queue of the agent, ordered by barrier-AND packets); here they go
//! on the caller's queue, as HIP's runtime does for a stream (CLR's `KernelBlitManager`, to our
//! knowledge), so that a copy or fill runs in the queue's order with its kernels, obeys the
//! barrier bit, and can be recorded in a command list and replayed with the list's one ring
//! write and one doorbell, which a copy on an SDMA ring ([`CopyQueue`](crate::CopyQueue))
//! cannot.
//!
//! The bundle is embedded (no compiler at run time). A queue loads it on its first copy or
//! fill, through the executable registry: every queue of one GPU of one open device shares
//! one load while any of them (or a command list that recorded a blit) lives, and the load goes
//! with the last of them, or at [`Device::shutdown`](crate::Device::shutdown) with the other
//! executables. (The device itself does not hold it: a load holds its device, so a device
//! that held its loads would never close when its last handle goes.)
//!
//! Every argument is checked before anything is recorded or published, as
//! [`CopyQueue::copy`](crate::CopyQueue::copy) checks them: buffers of the queue's device,
//! mapped on the queue's GPU, ranges inside them, a copy's ranges not overlapping.

mod queue;

use std::sync::{Arc, PoisonError};

use crate::buffer::Buffer;
use crate::device::{Device, DeviceShared};
use crate::error::{Error, Result};
use crate::executable::Executable;
use crate::kernarg::{Arg, Geometry};
use crate::kernel::Kernel;
use crate::queue::Queue;

/// Bytes each work-item of a blit kernel owns (one 16-byte aligned chunk of the destination).
const CHUNK: u64 = 16;
/// Work-items per work-group of a blit dispatch.
const GROUP: u32 = 256;

/// Page alignment for the embedded bundle, so each code object in it (placed at 4 KiB
/// boundaries by the bundler) is as aligned as a freshly read file's.
#[repr(C, align(4096))]
struct PageAligned<T: ?Sized>(T);

static BUNDLE: &PageAligned<[u8]> = &PageAligned(*include_bytes!("kernels/blit.hipfb"));

/// The blit kernels loaded on one GPU.
pub(crate) struct BlitKernels {
    copy: Kernel,
    fill: Kernel,
    /// The load the kernels belong to (each kernel also keeps it).
    _executable: Executable,
}

impl BlitKernels {
    /// The blit kernels on `queue`'s GPU, loaded at the queue's first copy or fill and kept in
    /// its slot for them.
    pub(crate) fn of(queue: &Queue) -> Result<Arc<Self>> {
        let mut slot = queue
            .blit_kernels()
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(kernels) = slot
            .as_ref()
            .and_then(|any| Arc::clone(any).downcast::<Self>().ok())
        {
            return Ok(kernels);
        }
        let gpu_id = queue.gpu_id();
        let device = Device::from_shared(Arc::clone(queue.owned.device()));
        let gpu = device
            .gpus()?
            .iter()
            .find(|gpu| gpu.gpu_id == gpu_id)
            .ok_or_else(|| Error::InvalidArgument(format!("no GPU {gpu_id:#x} on the device")))?;
        let executable = device.load_code_object(gpu, &BUNDLE.0).map_err(|error| {
            Error::Unsupported(format!(
                "the driver's copy and fill kernels do not run on {}: {error}",
                gpu.target_id
            ))
        })?;
        let kernels = Arc::new(Self {
            copy: executable.kernel("aqueduct_copy")?,
            fill: executable.kernel("aqueduct_fill")?,
            _executable: executable,
        });
        *slot = Some(Arc::clone(&kernels) as _);
        Ok(kernels)
    }
}

/// One checked blit dispatch: its kernel, geometry and arguments.
pub(crate) struct Blit<'a> {
    pub(crate) kernel: Kernel,
    pub(crate) geometry: Geometry,
    pub(crate) args: [Arg<'a>; 3],
}

/// Check that `bytes` at `offset` of `buffer` lie inside it, and that the queue's GPU
/// (`gpu_id` of `device`) reaches it; its GPU address.
fn check_range(
    device: &Arc<DeviceShared>,
    gpu_id: u32,
    buffer: &Buffer,
    offset: usize,
    bytes: usize,
    what: &str,
) -> Result<u64> {
    let address = buffer.gpu_range(device, offset, bytes, what)?;
    if !buffer.is_mapped_on_gpu(gpu_id)? {
        return Err(Error::InvalidArgument(format!(
            "the {what} buffer is not mapped on GPU {gpu_id:#x}, which runs the queue \
             (Buffer::allow_access maps it)"
        )));
    }
    Ok(address)
}

/// Work-items for a blit whose destination starts at `address`: one per 16-byte aligned chunk
/// the range touches (one that does nothing for 0 bytes, so the dispatch still orders).
fn geometry(address: u64, bytes: usize) -> Result<Geometry> {
    let items = ((address % CHUNK) + bytes as u64).div_ceil(CHUNK).max(1);
    let items = u32::try_from(items).map_err(|_| {
        Error::InvalidArgument(format!(
            "a blit of {bytes:#x} bytes needs more than 2^32 work-items (at most 64 GiB at once)"
        ))
    })?;
    Ok(Geometry::d1(items, GROUP.min(items)))
}

impl BlitKernels {
    /// The dispatch that copies `bytes` from `src_offset` of `src` to `dst_offset` of `dst`
    /// on the queue's GPU.
    pub(crate) fn copy<'a>(
        &self,
        (device, gpu_id): (&Arc<DeviceShared>, u32),
        dst: &'a Buffer,
        dst_offset: usize,
        src: &'a Buffer,
        src_offset: usize,
        bytes: usize,
    ) -> Result<Blit<'a>> {
        let to = check_range(device, gpu_id, dst, dst_offset, bytes, "destination")?;
        let from = check_range(device, gpu_id, src, src_offset, bytes, "source")?;
        let len = bytes as u64;
        if len > 0 && to < from + len && from < to + len {
            return Err(Error::InvalidArgument(format!(
                "the source {from:#x}+{len:#x} and destination {to:#x}+{len:#x} overlap"
            )));
        }
        Ok(Blit {
            kernel: self.copy.clone(),
            geometry: geometry(to, bytes)?,
            args: [Arg::memory(to, dst), Arg::memory(from, src), Arg::u64(len)],
        })
    }

    /// The dispatch that fills `bytes` at `offset` of `dst` with `value` repeated (byte `i` of
    /// the range gets byte `i % 4` of `value`, little-endian).
    pub(crate) fn fill<'a>(
        &self,
        (device, gpu_id): (&Arc<DeviceShared>, u32),
        dst: &'a Buffer,
        offset: usize,
        bytes: usize,
        value: u32,
    ) -> Result<Blit<'a>> {
        let to = check_range(device, gpu_id, dst, offset, bytes, "destination")?;
        // The kernel stores byte `a & 3` of its pattern at address `a`: rotate the caller's
        // pattern into that phase.
        let phased = value.rotate_left(8 * (to % 4) as u32);
        Ok(Blit {
            kernel: self.fill.clone(),
            geometry: geometry(to, bytes)?,
            args: [
                Arg::memory(to, dst),
                Arg::u64(bytes as u64),
                Arg::u32(phased),
            ],
        })
    }
}
