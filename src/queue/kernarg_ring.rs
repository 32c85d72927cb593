//! Kernarg memory for launches on one queue: a ring of fixed-size segments, each reused only
//! after the launch that last used it has completed.
//!
//! Every segment has its own completion signal (all of a queue's signals fire one shared KFD
//! event, so waits sleep instead of spinning). A launch claims the next segment in order,
//! waiting until the segment's previous launch completed (its signal back at 0), sets the
//! signal to 1, writes its arguments there and publishes a packet whose completion signal it
//! is. Claims are serialised by one lock, held only for the claim: writing and publishing run
//! in parallel on many threads. Completion order does not matter (packets without the barrier
//! bit may finish out of order): each segment waits for its own launch only.

use std::any::Any;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};

use aql::signal::{Condition, MemoryOrder};
use kfd::{Allocation, BufferObject, GpuMapping, MemoryKind};

use crate::device::Live;
use crate::error::{Error, Result};
use crate::signal::{SignalState, Timestamps};

/// Bytes of one kernarg segment: kernels with larger segments are refused.
pub(crate) const SEGMENT_BYTES: usize = 4096;
/// Segments per queue, at most (fewer for smaller rings).
const MAX_SEGMENTS: u32 = 64;

/// What a launch keeps alive until its kernel has completed (the memory of its typed
/// arguments).
pub(crate) type Holds = Vec<Arc<dyn Any + Send + Sync>>;

/// One segment and what is known about its launches.
pub(crate) struct Segment {
    pub(crate) signal: SignalState,
    pub(crate) record: Mutex<SegmentRecord>,
    /// What the segment's current launch keeps alive: replaced at the next claim (which
    /// waits for this launch to complete), or given up by a wait that saw it complete.
    holds: Mutex<Holds>,
}

/// Which launch owns a segment, and the timestamps of the one before it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SegmentRecord {
    /// The number of the launch using the segment now (launch numbers count from 1; 0: none).
    pub(crate) launch: u64,
    /// The previous launch's number and its profiling timestamps, saved when it was retired.
    pub(crate) retired: Option<(u64, Timestamps)>,
}

/// The queue's kernarg segments.
pub(crate) struct KernargRing {
    _mapping: GpuMapping,
    memory: Arc<BufferObject>,
    host: NonNull<u8>,
    pub(crate) segments: Vec<Segment>,
    /// The next launch number; its lock serialises claims.
    next: Mutex<u64>,
    /// The event every segment signal fires.
    pub(crate) event: kfd::Event,
}

// SAFETY: `host` points into `memory`'s CPU mapping, owned (through the Arc) by this ring; a
// segment's bytes are written only by the one launch that claimed it (see `claim`).
unsafe impl Send for KernargRing {}
// SAFETY: as above.
unsafe impl Sync for KernargRing {}

/// A claimed segment: write the arguments into `bytes`, then publish.
pub(crate) struct Claim<'a> {
    pub(crate) index: usize,
    pub(crate) launch: u64,
    pub(crate) gpu_address: u64,
    pub(crate) bytes: &'a mut [u8],
}

impl KernargRing {
    pub(crate) fn new(live: &Live, gpu_id: u32, queue_packets: u32) -> Result<Self> {
        let count = queue_packets.min(MAX_SEGMENTS) as usize;
        let what = || format!("kernarg memory of a queue on GPU {gpu_id:#x}");
        let memory = live
            .kfd
            .allocate(
                gpu_id,
                Allocation::new(MemoryKind::GttFine, (count * SEGMENT_BYTES) as u64)
                    .gpu_read_only(),
            )
            .map_err(|e| Error::driver(what, e))?;
        let mapping = memory
            .map_to(&[gpu_id])
            .map_err(|e| Error::driver(what, e))?;
        let host = memory
            .host_ptr()
            .ok_or_else(|| Error::Unsupported("kernarg memory without a CPU view".to_owned()))?;
        let event = live
            .kfd
            .create_signal_event(true)
            .map_err(|e| Error::driver(what, e))?;
        let segments = (0..count)
            .map(|_| {
                Ok(Segment {
                    signal: SignalState::create_sharing(live, 0, &event)?,
                    record: Mutex::new(SegmentRecord::default()),
                    holds: Mutex::new(Vec::new()),
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            _mapping: mapping,
            memory,
            host,
            segments,
            next: Mutex::new(1),
            event,
        })
    }

    /// Claim the next segment for a new launch. `wait_free` waits until a segment's signal is
    /// back at 0 (its previous launch completed), failing on a queue error or a shutdown.
    pub(crate) fn claim(&self, wait_free: impl Fn(&Segment) -> Result<()>) -> Result<Claim<'_>> {
        let mut next = self.next.lock().unwrap_or_else(PoisonError::into_inner);
        let launch = *next;
        let index = (launch % self.segments.len() as u64) as usize;
        let segment = &self.segments[index];
        if segment.signal.view().load(MemoryOrder::Acquire) != 0 {
            wait_free(segment)?;
        }
        {
            let mut record = segment
                .record
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if record.launch != 0 {
                let view = segment.signal.view();
                let times = Timestamps {
                    start: view.start_ts(),
                    end: view.end_ts(),
                };
                record.retired = Some((record.launch, times));
            }
            record.launch = launch;
        }
        let view = segment.signal.view();
        // Arm the signal: the CP decrements it to 0 when this launch's packet completes.
        view.store(1, MemoryOrder::Release);
        *next += 1;
        drop(next);
        // SAFETY: segment `index` lies inside the ring's mapping (index < count), and this
        // launch alone owns it until its packet completes: the next claim of the same segment
        // waits for the signal armed above to return to 0, which only the CP does when this
        // launch's packet completes.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(
                self.host.as_ptr().add(index * SEGMENT_BYTES),
                SEGMENT_BYTES,
            )
        };
        Ok(Claim {
            index,
            launch,
            gpu_address: self.memory.va() + (index * SEGMENT_BYTES) as u64,
            bytes,
        })
    }

    /// Give a claimed segment back unused (the launch failed before publishing).
    pub(crate) fn release(&self, claim: &Claim<'_>) {
        self.segments[claim.index]
            .signal
            .view()
            .store(0, MemoryOrder::Release);
    }

    /// Make `holds` what the launch that claimed segment `index` keeps alive; returns what
    /// the segment's previous launch (completed: the claim waited for it) kept, for the
    /// caller to drop once it holds no lock of the queue.
    pub(crate) fn hold(&self, index: usize, holds: Holds) -> Holds {
        let mut held = self.segments[index]
            .holds
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        std::mem::replace(&mut *held, holds)
    }

    /// What launch `launch` in segment `index` kept alive, given up because it has completed
    /// (empty if the segment has moved on, or the launch has not completed).
    pub(crate) fn release_holds(&self, index: usize, launch: u64) -> Holds {
        let segment = &self.segments[index];
        let record = segment
            .record
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let done = Condition::Eq.holds(segment.signal.view().load(MemoryOrder::Acquire), 0);
        if record.launch != launch || !done {
            return Vec::new();
        }
        std::mem::take(&mut *segment.holds.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Whether launch `launch` in segment `index` has completed (`Some`), and its timestamps
    /// if known (the inner option).
    #[allow(
        clippy::option_option,
        reason = "completed or not, then timestamps kept or not: two independent answers"
    )]
    pub(crate) fn completed(&self, index: usize, launch: u64) -> Option<Option<Timestamps>> {
        let segment = &self.segments[index];
        let record = segment
            .record
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if record.launch == launch {
            let view = segment.signal.view();
            let done = Condition::Eq.holds(view.load(MemoryOrder::Acquire), 0);
            done.then(|| {
                Some(Timestamps {
                    start: view.start_ts(),
                    end: view.end_ts(),
                })
            })
        } else {
            // A later launch took the segment, so this one completed.
            Some(
                record
                    .retired
                    .filter(|(n, _)| *n == launch)
                    .map(|(_, times)| times),
            )
        }
    }
}
