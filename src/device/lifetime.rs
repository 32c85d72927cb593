//! How handles die: every object a device hands out (queue, signal, buffer, executable) keeps
//! its kernel objects in an [`Owned`] cell that the device can empty.
//!
//! Two ways to tear down, one rule for both:
//! - The last handle goes: handles hold the device ([`DeviceShared`]) through an `Arc`, so the
//!   device outlives every object; each object destroys its kernel objects in its own `Drop`,
//!   and the device's own state goes last.
//! - [`Device::shutdown`] while handles remain: the device marks itself closed, wakes every
//!   sleeping waiter, then empties every registered cell in stage order (queues before the
//!   signals and buffers they use). A cell is emptied under its write lock, so it waits for
//!   calls in progress (each holds the read lock only briefly; waits sleep in bounded slices
//!   and leave when they see the device closed). Every later call finds the cell empty and
//!   fails with [`Error::Closed`].
//!
//! [`Device::shutdown`]: crate::Device::shutdown

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, Weak};

use super::DeviceShared;
use crate::error::{Error, Result};

/// When an object is emptied during a shutdown: earlier stages first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Stage {
    /// Queues: nothing may run on the GPU while its memory goes.
    Queues,
    /// Loaded code objects.
    Executables,
    /// Signals (their events and memory slots).
    Signals,
    /// Buffers.
    Buffers,
}

/// What the device does to a live object at shutdown.
pub(crate) trait Teardown: Send + Sync {
    /// Wake whoever sleeps on this object (before anything is emptied).
    fn wake(&self) {}
    /// Destroy the kernel objects; later calls fail with [`Error::Closed`].
    fn teardown(&self);
}

/// The objects a device has handed out and that are still alive.
#[derive(Default)]
pub(crate) struct ObjectTable {
    next_key: u64,
    objects: HashMap<u64, (Stage, Weak<dyn Teardown>)>,
}

impl ObjectTable {
    fn insert(&mut self, stage: Stage, object: Weak<dyn Teardown>) -> u64 {
        self.next_key += 1;
        self.objects.insert(self.next_key, (stage, object));
        self.next_key
    }

    fn remove(&mut self, key: u64) {
        self.objects.remove(&key);
    }

    /// Take every live object out, in stage order.
    pub(crate) fn drain_in_stage_order(&mut self) -> Vec<Arc<dyn Teardown>> {
        let mut live: Vec<(Stage, u64, Arc<dyn Teardown>)> = self
            .objects
            .drain()
            .filter_map(|(key, (stage, weak))| weak.upgrade().map(|o| (stage, key, o)))
            .collect();
        live.sort_by_key(|(stage, key, _)| (*stage, *key));
        live.into_iter().map(|(_, _, object)| object).collect()
    }

    /// Every live object (for waking sleepers).
    pub(crate) fn live(&self) -> Vec<Arc<dyn Teardown>> {
        self.objects
            .values()
            .filter_map(|(_, weak)| weak.upgrade())
            .collect()
    }

    /// How many objects are registered.
    pub(crate) fn len(&self) -> usize {
        self.objects.len()
    }
}

/// The kernel objects behind one handle, which a shutdown can take away.
pub(crate) struct Owned<T: Send + Sync + Wake + 'static> {
    device: Arc<DeviceShared>,
    key: u64,
    state: RwLock<Option<T>>,
}

impl<T: Send + Sync + Wake + 'static> Owned<T> {
    /// Register `value` with `device` under `stage`.
    pub(crate) fn new(device: &Arc<DeviceShared>, stage: Stage, value: T) -> Arc<Self> {
        Arc::new_cyclic(|weak: &Weak<Self>| {
            let weak: Weak<dyn Teardown> = weak.clone();
            let key = device.objects().insert(stage, weak);
            Self {
                device: Arc::clone(device),
                key,
                state: RwLock::new(Some(value)),
            }
        })
    }

    /// The device the object belongs to.
    pub(crate) fn device(&self) -> &Arc<DeviceShared> {
        &self.device
    }

    /// Run `f` on the live object: fails with [`Error::Closed`] after a shutdown and with
    /// [`Error::ForkedChild`] in a fork child. Keeps the object alive (and a shutdown
    /// waiting) while `f` runs: `f` must not block for long.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&T) -> Result<R>) -> Result<R> {
        let guard = self.read()?;
        match guard.as_ref() {
            Some(value) => f(value),
            None => Err(Error::Closed),
        }
    }

    /// Like [`Owned::with`], checking the fork epoch only (no system call): for hot paths.
    pub(crate) fn with_fast<R>(&self, f: impl FnOnce(&T) -> Result<R>) -> Result<R> {
        self.device.check_fast()?;
        let guard = self.state.read().unwrap_or_else(PoisonError::into_inner);
        match guard.as_ref() {
            Some(value) => f(value),
            None => Err(Error::Closed),
        }
    }

    fn read(&self) -> Result<RwLockReadGuard<'_, Option<T>>> {
        self.device.check()?;
        Ok(self.state.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Take the object out now (its kernel objects are destroyed when the value drops).
    pub(crate) fn take(&self) -> Option<T> {
        self.state
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// Objects that know how to wake their sleepers implement this on their value type.
pub(crate) trait Wake {
    /// Wake sleepers.
    fn wake(&self) {}
}

impl<T: Send + Sync + Wake + 'static> Teardown for Owned<T> {
    fn wake(&self) {
        // A try-read: a writer (another teardown) may already hold it; then nobody sleeps.
        if let Ok(guard) = self.state.try_read()
            && let Some(value) = guard.as_ref()
        {
            value.wake();
        }
    }

    fn teardown(&self) {
        drop(self.take());
    }
}

impl<T: Send + Sync + Wake + 'static> Drop for Owned<T> {
    fn drop(&mut self) {
        // The value goes first (its kernel objects), then the registration.
        drop(
            self.state
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        self.device.objects().remove(self.key);
    }
}
