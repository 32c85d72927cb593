//! Kernarg memory of prepared launches and recorded command lists, owned by their queue.
//!
//! A prepared launch writes its arguments straight into memory it set up once: a block of
//! kernarg segments, each with its own completion signal. That memory must outlive every
//! packet that points at it, and a shutdown must free it with the queue (after the queue is
//! destroyed, when no kernel can read it any more). So the queue owns it: the prepared launch
//! registers a block here and keeps only addresses into it, which it uses while it holds the
//! queue's state (so the block is alive). When the prepared launch goes, its block is retired:
//! freed at once if none of its segments is in flight, else kept (with what its launches keep
//! alive) until they have completed, pruned at the next registration or retirement, or when
//! the queue goes.

use std::ptr::NonNull;

use aql::signal::{MemoryOrder, SignalRef};
use kfd::{Allocation, BufferObject, GpuMapping, MemoryKind};
use std::sync::Arc;

use super::kernarg_ring::Holds;
use crate::device::Live;
use crate::error::{Error, Result};
use crate::signal::SignalState;

/// Alignment and granule of one segment of a block: a cache line, which covers every kernarg
/// alignment LLVM emits (16 for AMDGPU; larger only for over-aligned by-value structs, which
/// round the segment up to their alignment here too).
const SEGMENT_ALIGN: u32 = 64;

/// One block of kernarg segments, each with its completion signal.
struct Block {
    key: u64,
    _mapping: GpuMapping,
    _memory: Arc<BufferObject>,
    signals: Vec<SignalState>,
    /// What the block's launches kept alive, handed over when the block was retired.
    holds: Holds,
    retired: bool,
}

impl Block {
    /// Whether no segment is in flight (every signal back at 0).
    fn idle(&self) -> bool {
        self.signals
            .iter()
            .all(|s| s.view().load(MemoryOrder::Acquire) == 0)
    }
}

/// Where a registered block is, for its owner to use while it holds the queue's state.
pub(crate) struct BlockPlace {
    /// The key to retire it with.
    pub(crate) key: u64,
    /// CPU address of segment 0; segment `i` is `i * stride` bytes further.
    pub(crate) host: NonNull<u8>,
    /// GPU address of segment 0.
    pub(crate) gpu_address: u64,
    /// Bytes from one segment to the next (a multiple of 64).
    pub(crate) stride: usize,
    /// Each segment's completion signal (0: free).
    pub(crate) signals: Vec<SignalRef>,
}

/// The blocks of one queue.
#[derive(Default)]
pub(crate) struct PreparedKernargs {
    next_key: u64,
    blocks: Vec<Block>,
}

impl PreparedKernargs {
    /// Register a block of `segments` segments of at least `bytes` each (aligned to
    /// `align`), their signals sharing `event` (the queue's kernarg event, which a shutdown or
    /// an abort sets to wake waiters).
    pub(crate) fn register(
        &mut self,
        live: &Live,
        gpu_id: u32,
        event: &kfd::Event,
        segments: usize,
        bytes: u32,
        align: u32,
    ) -> Result<BlockPlace> {
        self.prune();
        let align = align.max(SEGMENT_ALIGN).next_power_of_two();
        let stride = bytes.max(1).next_multiple_of(align) as usize;
        let total = stride.checked_mul(segments).ok_or_else(|| {
            Error::InvalidArgument(format!("{segments} segments of {stride} bytes"))
        })?;
        let what = || format!("{total} bytes of prepared kernarg memory on GPU {gpu_id:#x}");
        let memory = live
            .kfd
            .allocate(
                gpu_id,
                Allocation::new(MemoryKind::GttFine, total as u64).gpu_read_only(),
            )
            .map_err(|e| Error::driver(what, e))?;
        let mapping = memory
            .map_to(&[gpu_id])
            .map_err(|e| Error::driver(what, e))?;
        let host = memory
            .host_ptr()
            .ok_or_else(|| Error::Unsupported("kernarg memory without a CPU view".to_owned()))?;
        if host.as_ptr().addr() % align as usize != 0 || memory.va() % u64::from(align) != 0 {
            // Allocations are page-aligned; an alignment above a page is not supported.
            return Err(Error::Unsupported(format!(
                "a kernarg segment aligned to {align} bytes"
            )));
        }
        let signals = (0..segments)
            .map(|_| SignalState::create_sharing(live, 0, event))
            .collect::<Result<Vec<_>>>()?;
        self.next_key += 1;
        let place = BlockPlace {
            key: self.next_key,
            host,
            gpu_address: memory.va(),
            stride,
            signals: signals.iter().map(|s| *s.view()).collect(),
        };
        self.blocks.push(Block {
            key: self.next_key,
            _mapping: mapping,
            _memory: memory,
            signals,
            holds: Vec::new(),
            retired: false,
        });
        Ok(place)
    }

    /// The owner of block `key` is gone: free the block once none of its segments is in
    /// flight, keeping `holds` (what its launches keep alive) until then.
    pub(crate) fn retire(&mut self, key: u64, holds: Holds) {
        if let Some(block) = self.blocks.iter_mut().find(|b| b.key == key) {
            block.retired = true;
            block.holds = holds;
        }
        self.prune();
    }

    /// Free the retired blocks that are idle.
    fn prune(&mut self) {
        self.blocks.retain(|b| !(b.retired && b.idle()));
    }
}
