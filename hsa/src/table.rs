//! A table of live objects by handle, shared by every thread of the program.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Objects by handle.
#[derive(Debug)]
pub struct Table<T> {
    map: Mutex<HashMap<u64, T>>,
    next: AtomicU64,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Self {
            map: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
        }
    }
}

impl<T: Clone> Table<T> {
    /// The object of `handle`.
    pub fn get(&self, handle: u64) -> Option<T> {
        self.lock().get(&handle).cloned()
    }
}

impl<T> Table<T> {
    fn lock(&self) -> MutexGuard<'_, HashMap<u64, T>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keep `object` under a handle chosen by the caller (an address).
    pub fn insert(&self, handle: u64, object: T) {
        self.lock().insert(handle, object);
    }

    /// Keep `object` under a new handle (never 0, never reused).
    pub fn add(&self, object: T) -> u64 {
        let handle = self.next.fetch_add(1, Ordering::Relaxed);
        self.insert(handle, object);
        handle
    }

    /// Forget the object of `handle`, giving it back.
    pub fn remove(&self, handle: u64) -> Option<T> {
        self.lock().remove(&handle)
    }

    /// Whether `handle` is live.
    pub fn contains(&self, handle: u64) -> bool {
        self.lock().contains_key(&handle)
    }

    /// Run `f` on the object of `handle`.
    pub fn with<R>(&self, handle: u64, f: impl FnOnce(&T) -> R) -> Option<R> {
        self.lock().get(&handle).map(f)
    }

    /// Run `f` over every object.
    pub fn find<R>(&self, mut f: impl FnMut(u64, &T) -> Option<R>) -> Option<R> {
        self.lock().iter().find_map(|(&h, t)| f(h, t))
    }

    /// What `f` picks from each object.
    pub fn collect<R>(&self, mut f: impl FnMut(u64, &T) -> Option<R>) -> Vec<R> {
        self.lock().iter().filter_map(|(&h, t)| f(h, t)).collect()
    }

    /// Every handle with its object, removed.
    pub fn drain(&self) -> Vec<(u64, T)> {
        self.lock().drain().collect()
    }
}
