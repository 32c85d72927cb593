//! Copy queues: asynchronous copies and fills on a GPU's SDMA engines, ordered by signals.
//!
//! A [`CopyQueue`] owns one SDMA queue (kfd's [`kfd::SdmaQueue`]). Each submission waits for
//! its dependency signals to reach 0 (POLL_REGMEM on both halves of the value, as ROCr does),
//! copies or fills, optionally stamps start and end times, and decrements its completion
//! signal (waking waiters through the signal's event, FENCE + TRAP). So a copy can wait for a
//! kernel's completion signal and a kernel (a barrier packet) for a copy's.
//!
//! A rectangular copy ([`CopyQueue::copy_rect`]) is one linear copy per row; a submission too
//! large for the ring goes in several pieces, in order (the engine runs its ring in order, so
//! the waits come before the first piece and the completion after the last).
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
/// Offset of `start_ts` in `amd_signal_t` (`end_ts` follows).
const SIGNAL_START_TS_OFFSET: u64 = 32;
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
    /// Store the GPU timestamps before and after the work in the completion signal's
    /// `start_ts` and `end_ts` (read back by [`Signal::timestamps`]), as ROCr's SDMA copies do
    /// when copy profiling is on. Needs a completion signal.
    pub stamps_in_completion: bool,
}

/// Where the box of a rectangular copy lies in a buffer: the byte offset of its first byte,
/// and the bytes from one row to the next and from one slice to the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pitched {
    /// Byte offset of the box's first byte in the buffer.
    pub offset: usize,
    /// Bytes between the starts of two rows.
    pub pitch: usize,
    /// Bytes between the starts of two slices.
    pub slice: usize,
}

impl Pitched {
    /// The offset of row `y` of slice `z`.
    fn row(&self, y: usize, z: usize) -> usize {
        self.offset + z * self.slice + y * self.pitch
    }

    /// One past the box's last byte for `extent`, checked to fit `len` bytes; rows must not be
    /// wider than the pitch nor slices taller than the slice pitch (the box does not wrap).
    fn end(&self, extent: [usize; 3], len: usize, what: &str) -> Result<usize> {
        let [width, rows, slices] = extent;
        if rows > 1 && width > self.pitch {
            return Err(Error::InvalidArgument(format!(
                "{what} rows of {width} bytes are wider than the pitch {}",
                self.pitch
            )));
        }
        if slices > 1 && rows.checked_mul(self.pitch).is_none_or(|h| h > self.slice) {
            return Err(Error::InvalidArgument(format!(
                "{what} slices of {rows} rows of {} bytes exceed the slice pitch {}",
                self.pitch, self.slice
            )));
        }
        let end = (slices - 1)
            .checked_mul(self.slice)
            .and_then(|z| (rows - 1).checked_mul(self.pitch).map(|y| (z, y)))
            .and_then(|(z, y)| {
                self.offset
                    .checked_add(z)?
                    .checked_add(y)?
                    .checked_add(width)
            });
        match end {
            Some(end) if end <= len => Ok(end),
            _ => Err(Error::InvalidArgument(format!(
                "the {what} box {extent:?} at {self:?} is outside its {len:#x}-byte buffer"
            ))),
        }
    }
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
        buffer.gpu_range(self.owned.device(), offset, len, what)
    }

    fn check_signal(&self, signal: &Signal) -> Result<u64> {
        if !signal.belongs_to(self.owned.device()) {
            return Err(Error::InvalidArgument(
                "a signal of another device".to_owned(),
            ));
        }
        Ok(signal.handle() + SIGNAL_VALUE_OFFSET)
    }

    /// Submit `pieces` (each whole packets) in order, after the order's waits and start
    /// timestamps, then its end timestamps and completion; as few submissions as fit the ring.
    fn submit_pieces(&self, order: &CopyOrder<'_>, pieces: Vec<Vec<u32>>) -> Result<()> {
        let mut prologue = Vec::new();
        for signal in order.after {
            sdma_packet::wait_zero(&mut prologue, self.check_signal(signal)?);
        }
        let mut stamps = Vec::new();
        if let Some(buffer) = order.timestamps {
            let va = self.check_buffer(buffer, 0, 16, "timestamp")?;
            if va % 8 != 0 {
                return Err(Error::InvalidArgument(
                    "timestamps need an 8-byte aligned buffer".to_owned(),
                ));
            }
            stamps.push(va);
        }
        let completion = match order.completion {
            Some(signal) => Some((self.check_signal(signal)?, signal.event_mailbox()?)),
            None => None,
        };
        if order.stamps_in_completion {
            let (value, _) = completion.ok_or_else(|| {
                Error::InvalidArgument(
                    "timestamps in the completion signal need a completion signal".to_owned(),
                )
            })?;
            stamps.push(value - SIGNAL_VALUE_OFFSET + SIGNAL_START_TS_OFFSET);
        }
        for &va in &stamps {
            sdma_packet::timestamp(&mut prologue, va);
        }
        let mut epilogue = Vec::new();
        for &va in &stamps {
            sdma_packet::timestamp(&mut epilogue, va + 8);
        }
        if let Some((value, mailbox)) = completion {
            sdma_packet::decrement(&mut epilogue, value);
            if let Some((mailbox, event_id)) = mailbox {
                sdma_packet::interrupt(&mut epilogue, mailbox, event_id);
            }
        }
        self.owned.with(|state| {
            let queue = &state.queue;
            // Half the ring per submission: the engine reads one while the next is written.
            let limit = (queue.ring_bytes() / 8) as usize;
            let mut submissions = vec![prologue];
            for piece in pieces.into_iter().chain([epilogue]) {
                if piece.len() >= limit {
                    return Err(Error::InvalidArgument(format!(
                        "one piece of {} bytes of SDMA packets does not fit the {}-byte ring",
                        4 * piece.len(),
                        queue.ring_bytes()
                    )));
                }
                match submissions.last_mut() {
                    Some(last) if last.len() + piece.len() < limit => last.extend(piece),
                    _ => submissions.push(piece),
                }
            }
            for dwords in submissions.iter().filter(|d| !d.is_empty()) {
                loop {
                    match queue.submit(dwords) {
                        Ok(_) => break,
                        Err(kfd::SubmitRefusal::TooLarge) => {
                            return Err(Error::InvalidArgument(
                                "the copy is too large for one submission".to_owned(),
                            ));
                        }
                        // The engine frees room as it reads; earlier submissions always
                        // finish unless they wait on signals nobody completes (the caller's
                        // deadlock).
                        Err(kfd::SubmitRefusal::Full) => std::thread::yield_now(),
                    }
                }
            }
            Ok(())
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
        // Pieces of at most 256 packets, so that any length fits the ring a piece at a time.
        let step = 256 * sdma_packet::MAX_COPY_BYTES;
        let pieces = (0..len as u64)
            .step_by(step as usize)
            .map(|at| {
                let mut piece = Vec::new();
                let n = step.min(len as u64 - at);
                sdma_packet::copy(&mut piece, from + at, to + at, n);
                piece
            })
            .collect();
        self.submit_pieces(order, pieces)
    }

    /// Copy a box of `extent` = `[bytes per row, rows, slices]` from `src` at `src_at` to
    /// `dst` at `dst_at`, one linear copy per row, after `order.after`, then complete
    /// `order.completion`. Returns once the work is queued. An empty box only orders.
    pub fn copy_rect(
        &self,
        dst: &Buffer,
        dst_at: Pitched,
        src: &Buffer,
        src_at: Pitched,
        extent: [usize; 3],
        order: &CopyOrder<'_>,
    ) -> Result<()> {
        if extent.contains(&0) {
            return self.submit_pieces(order, Vec::new());
        }
        let to_end = dst_at.end(extent, dst.len(), "destination")?;
        let from_end = src_at.end(extent, src.len(), "source")?;
        let to = self.check_buffer(dst, dst_at.offset, to_end - dst_at.offset, "destination")?;
        let from = self.check_buffer(src, src_at.offset, from_end - src_at.offset, "source")?;
        let (to_span, from_span) = (
            (to_end - dst_at.offset) as u64,
            (from_end - src_at.offset) as u64,
        );
        if to < from + from_span && from < to + to_span {
            return Err(Error::InvalidArgument(format!(
                "the source box from {from:#x} and the destination box from {to:#x} overlap"
            )));
        }
        let [width, rows, slices] = extent;
        let (dst_base, src_base) = (dst.gpu_address(), src.gpu_address());
        let mut pieces = Vec::with_capacity(rows * slices);
        for z in 0..slices {
            for y in 0..rows {
                let mut piece = Vec::new();
                sdma_packet::copy(
                    &mut piece,
                    src_base + src_at.row(y, z) as u64,
                    dst_base + dst_at.row(y, z) as u64,
                    width as u64,
                );
                pieces.push(piece);
            }
        }
        self.submit_pieces(order, pieces)
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
        let step = 256 * sdma_packet::MAX_FILL_BYTES;
        let pieces = (0..len as u64)
            .step_by(step as usize)
            .map(|at| {
                let mut piece = Vec::new();
                sdma_packet::fill(&mut piece, to + at, value, step.min(len as u64 - at));
                piece
            })
            .collect();
        self.submit_pieces(order, pieces)
    }

    /// Whether the engine has finished everything submitted.
    pub fn is_idle(&self) -> Result<bool> {
        self.owned.with(|state| Ok(state.queue.is_idle()))
    }
}
