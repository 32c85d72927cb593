//! The process-wide table of open devices: while a device is open, every `open()` in the
//! process gets a handle to the same one.
//!
//! One entry per kernel ([`kfd::Sys::kernel_id`]): the host kernel, or each in-process
//! simulated machine. The table starts empty (a `const` initialiser: a fresh copy of this
//! library, loaded again after an unload, starts from zero too) and holds only weak
//! references, so it never keeps a device alive. Opening runs under the table's lock, so
//! concurrent first opens build one device, not several.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError, Weak};

use super::DeviceShared;

/// One open device.
struct Entry {
    kernel_id: u64,
    /// The process that opened it: a fork child never reuses its parent's device.
    pid: i32,
    device: Weak<DeviceShared>,
}

static OPEN_DEVICES: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// The locked table.
pub(crate) struct Registry(MutexGuard<'static, Vec<Entry>>);

impl Registry {
    /// Lock the table (opens and shutdowns are serialised by it).
    pub(crate) fn lock() -> Self {
        Self(OPEN_DEVICES.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Lock the table unless another thread holds it (opening or shutting down a device).
    pub(crate) fn try_lock() -> Option<Self> {
        match OPEN_DEVICES.try_lock() {
            Ok(guard) => Some(Self(guard)),
            Err(TryLockError::Poisoned(poisoned)) => Some(Self(poisoned.into_inner())),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Whether no device is alive in the table.
    pub(crate) fn is_empty(&mut self) -> bool {
        self.0.retain(|e| e.device.strong_count() > 0);
        self.0.is_empty()
    }

    /// Give the (empty) table's memory back, as at the start (the library is being unloaded).
    pub(crate) fn release(&mut self) {
        *self.0 = Vec::new();
    }

    /// The open device of `kernel_id` in process `pid`, if one is alive and not shut down.
    pub(crate) fn find(&mut self, kernel_id: u64, pid: i32) -> Option<Arc<DeviceShared>> {
        self.0.retain(|e| e.device.strong_count() > 0);
        self.0
            .iter()
            .filter(|e| e.kernel_id == kernel_id && e.pid == pid)
            .find_map(|e| e.device.upgrade())
            .filter(|device| !device.is_closed())
    }

    /// Record a newly opened device.
    pub(crate) fn insert(&mut self, kernel_id: u64, pid: i32, device: &Arc<DeviceShared>) {
        self.0.push(Entry {
            kernel_id,
            pid,
            device: Arc::downgrade(device),
        });
    }

    /// Forget `device` (it is being shut down).
    pub(crate) fn remove(&mut self, device: &Arc<DeviceShared>) {
        self.0
            .retain(|e| !std::ptr::eq(e.device.as_ptr(), Arc::as_ptr(device)));
    }
}
