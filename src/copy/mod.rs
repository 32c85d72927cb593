//! Copy queues: asynchronous copies and fills on a GPU's SDMA engines, ordered by signals.
//!
//! A [`CopyQueue`] owns one SDMA queue (kfd's [`kfd::SdmaQueue`]). Each submission waits for
//! its dependency signals to reach 0 (POLL_REGMEM on both halves of the value, as ROCr does),
//! copies or fills, optionally stamps start and end times, and decrements its completion
//! signal (waking waiters through the signal's event, FENCE + TRAP). So a copy can wait for a
//! kernel's completion signal and a kernel (a barrier packet) for a copy's.
//!
//! Every argument is checked before anything is submitted: ranges inside their buffers, the
//! buffers and signals of this queue's device, overlapping ranges of one buffer refused, the
//! device open. At [`Device::shutdown`] copy queues are destroyed with the compute queues
//! (DESTROY_QUEUE stops the engine mid-copy); in a forked child they are the parent's and
//! refuse use, as compute queues do.

use std::sync::Arc;

use crate::GpuAgent;
use crate::buffer::Buffer;
use crate::device::lifetime::{Owned, Wake};
use crate::device::{Device, TeardownStage};
use crate::error::{Error, Result};
use crate::sdma_packet;
use crate::signal::Signal;

/// Offset of `value` in `amd_signal_t`.
const SIGNAL_VALUE_OFFSET: u64 = 8;
/// Ring size of a copy queue (ROCr uses 1 MiB; 64 KiB holds ~2300 copy packets).
const RING_BYTES: u32 = 64 << 10;

pub(crate) struct CopyState {
    queue: kfd::SdmaQueue,
}

impl Wake for CopyState {}

/// A queue on one GPU's copy (SDMA) engines.
#[derive(Clone)]
pub struct CopyQueue {
    owned: Arc<Owned<CopyState>>,
    gpu_id: u32,
}

impl std::fmt::Debug for CopyQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CopyQueue")
            .field("gpu_id", &self.gpu_id)
            .finish_non_exhaustive()
    }
}

/// What a copy or fill waits for and signals.
#[derive(Clone, Copy, Debug, Default)]
pub struct CopyOrder<'a> {
    /// Signals that must reach 0 before the work starts.
    pub after: &'a [&'a Signal],
    /// Decremented by 1 when the work is done.
    pub completion: Option<&'a Signal>,
    /// Where to store the GPU timestamps before and after the work (two u64 at this buffer's
    /// start, 8-byte aligned).
    pub timestamps: Option<&'a Buffer>,
}

impl Device {
    /// A copy queue on `gpu`'s PCIe SDMA engines (host ↔ device, device ↔ device, and peer
    /// memory mapped on `gpu`). Fails with the kernel's error when every SDMA queue of the GPU
    /// is in use.
    pub fn create_copy_queue(&self, gpu: &GpuAgent) -> Result<CopyQueue> {
        let index = self.gpu_index(gpu)?;
        let gpu_id = self.shared().gpus()[index].gpu_id;
        let queue = self.shared().with_live(|live| {
            live.kfd
                .create_sdma_queue(gpu_id, RING_BYTES, kfd::SdmaEngines::Pcie)
                .map_err(|e| Error::driver(|| format!("a copy queue on GPU {gpu_id:#x}"), e))
        })?;
        Ok(CopyQueue {
            owned: Owned::new(self.shared(), TeardownStage::Queues, CopyState { queue }),
            gpu_id,
        })
    }
}

impl CopyQueue {
    /// The GPU whose engines run it.
    pub fn gpu_id(&self) -> u32 {
        self.gpu_id
    }

    fn check_buffer(&self, buffer: &Buffer, offset: usize, len: usize, what: &str) -> Result<u64> {
        if !buffer.belongs_to(self.owned.device()) {
            return Err(Error::InvalidArgument(format!(
                "the {what} buffer belongs to another device"
            )));
        }
        if offset.checked_add(len).is_none_or(|end| end > buffer.len()) {
            return Err(Error::InvalidArgument(format!(
                "{what} range {offset:#x}+{len:#x} is outside its {:#x}-byte buffer",
                buffer.len()
            )));
        }
        Ok(buffer.gpu_address() + offset as u64)
    }

    fn check_signal(&self, signal: &Signal) -> Result<u64> {
        if !signal.belongs_to(self.owned.device()) {
            return Err(Error::InvalidArgument(
                "a signal of another device".to_owned(),
            ));
        }
        Ok(signal.handle() + SIGNAL_VALUE_OFFSET)
    }

    /// Build `work` between the order's waits, timestamps and completion, and submit it.
    fn submit(&self, order: &CopyOrder<'_>, work: impl FnOnce(&mut Vec<u32>)) -> Result<()> {
        let mut dwords = Vec::new();
        for signal in order.after {
            sdma_packet::wait_zero(&mut dwords, self.check_signal(signal)?);
        }
        let stamps = match order.timestamps {
            Some(buffer) => {
                let va = self.check_buffer(buffer, 0, 16, "timestamp")?;
                if va % 8 != 0 {
                    return Err(Error::InvalidArgument(
                        "timestamps need an 8-byte aligned buffer".to_owned(),
                    ));
                }
                Some(va)
            }
            None => None,
        };
        let completion = match order.completion {
            Some(signal) => Some((self.check_signal(signal)?, signal.event_mailbox()?)),
            None => None,
        };
        if let Some(va) = stamps {
            sdma_packet::timestamp(&mut dwords, va);
        }
        work(&mut dwords);
        if let Some(va) = stamps {
            sdma_packet::timestamp(&mut dwords, va + 8);
        }
        if let Some((value, mailbox)) = completion {
            sdma_packet::decrement(&mut dwords, value);
            if let Some((mailbox, event_id)) = mailbox {
                sdma_packet::interrupt(&mut dwords, mailbox, event_id);
            }
        }
        self.owned.with(|state| {
            let queue = &state.queue;
            if 4 * dwords.len() as u64 >= queue.ring_bytes() {
                return Err(Error::InvalidArgument(format!(
                    "one submission of {} bytes of SDMA packets does not fit the {}-byte ring",
                    4 * dwords.len(),
                    queue.ring_bytes()
                )));
            }
            loop {
                match queue.submit(&dwords) {
                    Ok(_) => return Ok(()),
                    Err(kfd::SubmitRefusal::TooLarge) => {
                        return Err(Error::InvalidArgument(
                            "the copy is too large for one submission".to_owned(),
                        ));
                    }
                    // The engine frees room as it reads; earlier submissions always finish
                    // unless they wait on signals nobody completes (the caller's deadlock).
                    Err(kfd::SubmitRefusal::Full) => std::thread::yield_now(),
                }
            }
        })
    }

    /// Copy `len` bytes from `src` at `src_offset` to `dst` at `dst_offset`, after
    /// `order.after`, then complete `order.completion`. Returns once the work is queued.
    pub fn copy(
        &self,
        dst: &Buffer,
        dst_offset: usize,
        src: &Buffer,
        src_offset: usize,
        len: usize,
        order: &CopyOrder<'_>,
    ) -> Result<()> {
        let to = self.check_buffer(dst, dst_offset, len, "destination")?;
        let from = self.check_buffer(src, src_offset, len, "source")?;
        if to < from + len as u64 && from < to + len as u64 && len > 0 {
            return Err(Error::InvalidArgument(format!(
                "source {from:#x}+{len:#x} and destination {to:#x}+{len:#x} overlap"
            )));
        }
        self.submit(order, |out| sdma_packet::copy(out, from, to, len as u64))
    }

    /// Fill `len` bytes (a multiple of 4) of `dst` from `offset` (4-byte aligned) with
    /// `value`.
    pub fn fill(
        &self,
        dst: &Buffer,
        offset: usize,
        len: usize,
        value: u32,
        order: &CopyOrder<'_>,
    ) -> Result<()> {
        let to = self.check_buffer(dst, offset, len, "destination")?;
        if to % 4 != 0 || len % 4 != 0 {
            return Err(Error::InvalidArgument(format!(
                "a dword fill needs a 4-byte aligned start and length (got {to:#x}+{len:#x})"
            )));
        }
        self.submit(order, |out| sdma_packet::fill(out, to, value, len as u64))
    }

    /// Whether the engine has finished everything submitted.
    pub fn is_idle(&self) -> Result<bool> {
        self.owned.with(|state| Ok(state.queue.is_idle()))
    }
}
