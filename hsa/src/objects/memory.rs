//! The program's memory: what it allocated from the pools and what it locked, by start address
//! (`api::memory` allocates, frees, locks and copies).

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use aqueduct::Buffer;

/// One allocation: the buffer, the pool it came from.
#[derive(Clone, Debug)]
pub struct Allocation {
    /// aqueduct's buffer.
    pub buffer: Buffer,
    /// The pool (index); `None` for the program's memory locked with `hsa_amd_memory_lock`.
    pub pool: Option<usize>,
    /// For locked memory: how many locks hold it (a lock of a range already locked counts
    /// one more instead of registering the pages again).
    pub locks: usize,
}

/// The program's allocations by start address.
#[derive(Debug, Default)]
pub struct Allocations {
    by_address: Mutex<BTreeMap<u64, Allocation>>,
}

impl Allocations {
    /// The table, locked.
    pub fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, Allocation>> {
        self.by_address
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The allocation containing `address`, with the offset into it.
    pub fn containing(&self, address: u64) -> Option<(Allocation, usize)> {
        let map = self.lock();
        let (&start, allocation) = map.range(..=address).next_back()?;
        let offset = (address - start) as usize;
        (offset < allocation.buffer.len()).then(|| (allocation.clone(), offset))
    }

    /// Drop every allocation.
    pub fn close(&self) {
        self.lock().clear();
    }
}
