//! Host access to memory the CPU cannot map (private VRAM of a small-BAR GPU), through the
//! GPU's copy engine and a host staging buffer.
//!
//! Each open device keeps, per GPU and created on first need, one SDMA queue and one staging
//! buffer of fine-grained host memory: [`CHUNK_BYTES`] of data followed by a fence dword.
//! A write copies a chunk of the caller's bytes into the staging buffer, submits COPY LINEAR
//! (staging → destination) and a FENCE that stores a new sequence number after it, and waits
//! (bounded) until the CPU sees that number; a read does the reverse. The calls are
//! synchronous and serialised per GPU.
//!
//! The queue and staging buffer belong to the device's live state ([`Live`]): they go with it
//! at [`Device::shutdown`], when the last handle drops, and a reopened device makes new ones;
//! a fork child is refused before it gets here (its parent's queue is not its own). A wait
//! that times out destroys the queue (DESTROY_QUEUE stops the engine, so nothing writes the
//! staging buffer later) and the next call starts afresh.
//!
//! [`Live`]: crate::device::Live
//! [`Device::shutdown`]: crate::Device::shutdown

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use kfd::{Allocation, GpuMapping, MemoryKind};
use tracing::{debug, warn};

use super::Live;
use crate::error::{Error, Result};
use crate::sdma_packet as packets;

/// Bytes moved per engine round trip (the staging buffer's data part).
pub(crate) const CHUNK_BYTES: usize = 1 << 20;
/// Ring size of the staging queue: one staged chunk needs a copy and a fence packet (11
/// dwords); one device-to-device piece 16 copy packets and a fence.
const RING_BYTES: u32 = 4 << 10;
/// The largest device-to-device copy submitted at once (16 copy packets).
const DEVICE_COPY_PIECE: u64 = 16 * packets::MAX_COPY_BYTES;
/// How long one chunk may take before the copy is declared stuck. Generous: the simulated
/// engine on a loaded machine copies a MiB in well under a second.
const CHUNK_TIMEOUT: Duration = Duration::from_secs(20);
/// Busy polls before the wait starts sleeping between polls.
const SPIN_POLLS: u32 = 2_000;

/// The staging engines of one open device (in its [`Live`] state).
#[derive(Default)]
pub(crate) struct StagedCopies {
    engines: Mutex<Vec<Stager>>,
}

/// One GPU's staging queue and buffer.
struct Stager {
    gpu_id: u32,
    /// Declared before the staging buffer: the queue is destroyed (the engine stopped) first.
    queue: kfd::SdmaQueue,
    staging: GpuMapping,
    sequence: u32,
}

/// Which way the bytes go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    /// From the host into the GPU's memory.
    ToDevice,
    /// From the GPU's memory to the host.
    ToHost,
}

impl StagedCopies {
    /// Write `bytes` at GPU address `va` (memory mapped on `gpu_id`) through the copy engine.
    pub(crate) fn write(&self, live: &Live, gpu_id: u32, va: u64, bytes: &[u8]) -> Result<()> {
        self.run(live, gpu_id, |stager| {
            for (i, chunk) in bytes.chunks(CHUNK_BYTES).enumerate() {
                let at = va + (i * CHUNK_BYTES) as u64;
                // SAFETY: the staging buffer's data part holds CHUNK_BYTES ≥ chunk.len(), is a
                // live CPU mapping owned by this stager, and the engine is idle (every earlier
                // submission was waited for), so nothing else touches it.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        chunk.as_ptr(),
                        stager.data_ptr().as_ptr(),
                        chunk.len(),
                    );
                }
                stager.round_trip(live, Direction::ToDevice, at, chunk.len())?;
            }
            Ok(())
        })
    }

    /// Read `out.len()` bytes from GPU address `va` (memory mapped on `gpu_id`).
    pub(crate) fn read(&self, live: &Live, gpu_id: u32, va: u64, out: &mut [u8]) -> Result<()> {
        self.run(live, gpu_id, |stager| {
            for (i, chunk) in out.chunks_mut(CHUNK_BYTES).enumerate() {
                let at = va + (i * CHUNK_BYTES) as u64;
                stager.round_trip(live, Direction::ToHost, at, chunk.len())?;
                // SAFETY: as in `write`; the engine finished writing the staging buffer
                // (the fence after the copy was seen with acquire ordering).
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        stager.data_ptr().as_ptr(),
                        chunk.as_mut_ptr(),
                        chunk.len(),
                    );
                }
            }
            Ok(())
        })
    }

    /// Copy `len` bytes between two GPU addresses mapped on `gpu_id` (no overlap) and wait.
    pub(crate) fn copy(
        &self,
        live: &Live,
        gpu_id: u32,
        dst: u64,
        src: u64,
        len: u64,
    ) -> Result<()> {
        self.run(live, gpu_id, |stager| {
            let mut done = 0;
            while done < len {
                let n = (len - done).min(DEVICE_COPY_PIECE);
                let mut dwords = Vec::new();
                packets::copy(&mut dwords, src + done, dst + done, n);
                stager.submit_and_wait(live, dwords, n)?;
                done += n;
            }
            Ok(())
        })
    }

    /// Run `f` on `gpu_id`'s stager, creating it on first use; a failed stager is dropped
    /// (its queue destroyed) so the next call starts with a fresh one.
    fn run(
        &self,
        live: &Live,
        gpu_id: u32,
        f: impl FnOnce(&mut Stager) -> Result<()>,
    ) -> Result<()> {
        let mut engines = self.engines.lock().unwrap_or_else(PoisonError::into_inner);
        let index = if let Some(index) = engines.iter().position(|s| s.gpu_id == gpu_id) {
            index
        } else {
            engines.push(Stager::new(live, gpu_id)?);
            engines.len() - 1
        };
        let outcome = f(&mut engines[index]);
        if outcome.is_err() {
            let stager = engines.swap_remove(index);
            warn!(gpu_id, "staged copy failed: destroying its copy queue");
            drop(stager);
        }
        outcome
    }
}

impl Stager {
    fn new(live: &Live, gpu_id: u32) -> Result<Self> {
        let what = || format!("the staging copy queue of GPU {gpu_id:#x}");
        let queue = live
            .kfd
            .create_sdma_queue(gpu_id, RING_BYTES, kfd::SdmaEngines::Pcie)
            .map_err(|e| Error::driver(what, e))?;
        let staging = live
            .kfd
            .allocate(
                gpu_id,
                Allocation::new(MemoryKind::GttFine, (CHUNK_BYTES + 4096) as u64),
            )
            .map_err(|e| Error::driver(what, e))?
            .map_to(&[gpu_id])
            .map_err(|e| Error::driver(what, e))?;
        if staging.buffer().host_ptr().is_none() {
            return Err(Error::Unsupported(
                "host memory without a CPU mapping for staging copies".to_owned(),
            ));
        }
        debug!(gpu_id, "staging copy queue created");
        Ok(Self {
            gpu_id,
            queue,
            staging,
            sequence: 0,
        })
    }

    fn data_ptr(&self) -> NonNull<u8> {
        self.staging
            .buffer()
            .host_ptr()
            .unwrap_or_else(|| unreachable!("checked at creation"))
    }

    fn fence(&self) -> &AtomicU32 {
        // SAFETY: the fence dword lies CHUNK_BYTES into the live, page-aligned staging
        // mapping (4-aligned), which this stager owns; the engine writes it with a 32-bit
        // store.
        unsafe { AtomicU32::from_ptr(self.data_ptr().as_ptr().add(CHUNK_BYTES).cast()) }
    }

    /// Copy one chunk between the staging buffer and `va` and wait for it.
    fn round_trip(&mut self, live: &Live, direction: Direction, va: u64, len: usize) -> Result<()> {
        let staging = self.staging.va();
        let (src, dst) = match direction {
            Direction::ToDevice => (staging, va),
            Direction::ToHost => (va, staging),
        };
        let mut dwords = Vec::new();
        packets::copy(&mut dwords, src, dst, len as u64);
        self.submit_and_wait(live, dwords, len as u64)
    }

    /// Append a FENCE with the next sequence number to `dwords`, submit, and wait until the
    /// CPU sees it (the engine executes in order, so everything before it is done).
    fn submit_and_wait(&mut self, live: &Live, mut dwords: Vec<u32>, bytes: u64) -> Result<()> {
        self.sequence = self.sequence.wrapping_add(1);
        let sequence = self.sequence;
        packets::fence(
            &mut dwords,
            self.staging.va() + CHUNK_BYTES as u64,
            sequence,
        );
        // Scale the limit with the size so a large device-to-device copy is not cut short.
        let limit = CHUNK_TIMEOUT * (1 + (bytes / CHUNK_BYTES as u64) as u32);
        let deadline = Instant::now() + limit;
        loop {
            match self.queue.submit(&dwords) {
                Ok(_) => break,
                Err(kfd::SubmitRefusal::Full) => self.pause(live, deadline, limit, 0)?,
                Err(kfd::SubmitRefusal::TooLarge) => {
                    return Err(Error::InvalidArgument(
                        "a staged copy too large for its ring".to_owned(),
                    ));
                }
            }
        }
        let mut polls = 0;
        while self.fence().load(Ordering::Acquire) != sequence {
            polls += 1;
            self.pause(live, deadline, limit, polls)?;
        }
        Ok(())
    }

    /// One step of a bounded wait: spin a while, then sleep briefly; fail on a GPU fault or
    /// at the deadline.
    fn pause(&self, live: &Live, deadline: Instant, limit: Duration, polls: u32) -> Result<()> {
        if Instant::now() >= deadline {
            live.check_gpu_running(self.gpu_id)?;
            return Err(Error::Timeout {
                what: format!("a staged copy on GPU {:#x}'s copy engine", self.gpu_id),
                after: limit,
            });
        }
        if polls < SPIN_POLLS {
            std::thread::yield_now();
        } else {
            if polls % 1024 == 0 {
                live.check_gpu_running(self.gpu_id)?;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        Ok(())
    }
}
