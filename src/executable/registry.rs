//! One load per code object: while a load lives, every caller that loads the same code object
//! on the same GPU of the same open device (linked against the same executables) gets it, even
//! when many threads load at once (numba-cuda's one-module-per-context rule and its
//! initialisation race, reliability.md §3).
//!
//! The table maps a [`LoadKey`] to a slot; a slot holds the load weakly, so the table never
//! keeps a load alive. A loader takes the table's lock only to find or make the slot, then the
//! slot's own lock while it loads: loads of different code objects run in parallel, loads of
//! the same one wait for the first. A slot leaves the table when its load is dropped and
//! nobody is using the slot.

use std::any::Any;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use crate::error::Result;

/// What the table holds (weakly): a load that says whether it may still be handed out. The
/// table knows nothing else of it, so the load's own life (`lifecycle`) can use the table.
pub(crate) trait Shareable: Any + Send + Sync {
    /// Whether the load can still be handed out (its device is open).
    fn is_usable(&self) -> bool;
}

/// What makes two loads the same.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct LoadKey {
    /// The open device (its address; a device's address is not reused while any of its loads
    /// lives, since each load holds the device).
    device: usize,
    gpu_id: u32,
    content: ContentHash,
    /// Image bases of the executables linked against, in order.
    links: Vec<u64>,
}

impl LoadKey {
    pub(crate) fn new(device: usize, gpu_id: u32, bytes: &[u8], links: Vec<u64>) -> Self {
        Self {
            device,
            gpu_id,
            content: ContentHash::of(bytes),
            links,
        }
    }
}

/// 128 bits of SipHash over a code object, and its length. Not a cryptographic hash: two
/// different code objects made to collide on purpose would share a load; the code objects a
/// process loads are its own, and an accidental collision of 128 bits is not a practical
/// concern. (No cryptographic hash crate is in the workspace; unsure whether one is wanted.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct ContentHash {
    len: usize,
    low: u64,
    high: u64,
}

impl ContentHash {
    fn of(bytes: &[u8]) -> Self {
        // `DefaultHasher::new()` has fixed keys: equal bytes hash alike in every thread. The
        // second half hashes a different prefix so the two halves are independent.
        let mut low = std::hash::DefaultHasher::new();
        bytes.hash(&mut low);
        let mut high = std::hash::DefaultHasher::new();
        0x6171_7565_6475_6374_u64.hash(&mut high);
        bytes.hash(&mut high);
        Self {
            len: bytes.len(),
            low: low.finish(),
            high: high.finish(),
        }
    }
}

type Slot = Arc<Mutex<Weak<dyn Any + Send + Sync>>>;

static LOADS: Mutex<Option<HashMap<LoadKey, Slot>>> = Mutex::new(None);

fn table() -> std::sync::MutexGuard<'static, Option<HashMap<LoadKey, Slot>>> {
    LOADS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The live load of `key` if there is one (and its device is open), else the one `load`
/// makes, recorded for the next caller. Concurrent callers with the same key run `load` once.
pub(crate) fn find_or_load<L: Shareable>(
    key: &LoadKey,
    load: impl FnOnce() -> Result<Arc<L>>,
) -> Result<Arc<L>> {
    let slot = Arc::clone(
        table()
            .get_or_insert_with(HashMap::new)
            .entry(key.clone())
            .or_insert_with(|| Arc::new(Mutex::new(Weak::<()>::new()))),
    );
    let outcome = {
        let mut current = slot.lock().unwrap_or_else(PoisonError::into_inner);
        match current
            .upgrade()
            .and_then(|held| held.downcast::<L>().ok())
            .filter(|l| l.is_usable())
        {
            Some(existing) => Ok(existing),
            None => load().inspect(|fresh| {
                let held: Arc<dyn Any + Send + Sync> = Arc::clone(fresh) as _;
                *current = Arc::downgrade(&held);
            }),
        }
    };
    drop(slot);
    if outcome.is_err() {
        forget(key);
    }
    outcome
}

/// Drop the slot of `key` if its load is gone and nobody else holds the slot.
pub(crate) fn forget(key: &LoadKey) {
    let mut table = table();
    let Some(map) = table.as_mut() else {
        return;
    };
    let unused = map.get(key).is_some_and(|slot| {
        // Only the table holds it (others take it under the table's lock, held here), and
        // whoever locks it last found its load gone.
        Arc::strong_count(slot) == 1 && slot.try_lock().is_ok_and(|load| load.strong_count() == 0)
    });
    if unused {
        map.remove(key);
    }
}
