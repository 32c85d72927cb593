//! The program's simulated file descriptors, by number.
//!
//! The simulator knows its files by the identity of the memfd behind them; this table knows
//! which fd numbers the program holds on them, so that `dup`s share one file and the file is
//! released on the last `close`, as the kernel releases a file description. An fd number the
//! program closed behind the interposer's back (`close_range`, a raw system call) and reused
//! for another file is detected by its identity and forgotten.

use std::collections::HashMap;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::next;

/// Which device a simulated file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Device {
    /// `/dev/kfd`.
    Kfd,
    /// `/dev/dri/renderD<minor>`.
    Render(u32),
}

/// One open file description of a simulated device.
#[derive(Debug)]
pub(crate) struct Description {
    pub device: Device,
    /// `(st_dev, st_ino)` of the memfd behind it.
    identity: (u64, u64),
}

/// The identity of whatever `fd` refers to now, asked of libc directly.
fn identity(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: an all-zero `stat` is a valid value of the plain C struct.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `stat` is a valid out-pointer; fstat validates the number itself.
    let rc = unsafe { next::FSTAT.get()(fd, &raw mut stat) };
    (rc == 0).then_some((stat.st_dev, stat.st_ino))
}

/// The table.
#[derive(Debug, Default)]
pub(crate) struct FdTable {
    by_number: Mutex<HashMap<RawFd, Arc<Description>>>,
    /// How many numbers are in the table: 0 lets every call skip the lock.
    count: AtomicUsize,
}

impl FdTable {
    fn lock(&self) -> MutexGuard<'_, HashMap<RawFd, Arc<Description>>> {
        // Inserts and removes cannot leave the map inconsistent.
        self.by_number
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Record `fd`, just opened on `device`. `None` if its identity cannot be read (then the
    /// caller closes it again).
    pub(crate) fn opened(&self, fd: RawFd, device: Device) -> Option<Arc<Description>> {
        let description = Arc::new(Description {
            device,
            identity: identity(fd)?,
        });
        self.insert(fd, description.clone());
        Some(description)
    }

    fn insert(&self, fd: RawFd, description: Arc<Description>) {
        if self.lock().insert(fd, description).is_none() {
            self.count.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// `new` is a duplicate of `old` (`dup`, `dup2`, `F_DUPFD`): if `old` is simulated, so is
    /// `new`, on the same description.
    pub(crate) fn duplicated(&self, old: RawFd, new: RawFd) {
        if let Some(description) = self.get(old) {
            self.insert(new, description);
        }
    }

    /// The description `fd` is open on, if it is a simulated fd.
    pub(crate) fn get(&self, fd: RawFd) -> Option<Arc<Description>> {
        if self.count.load(Ordering::Acquire) == 0 {
            return None;
        }
        let description = self.lock().get(&fd).cloned()?;
        if identity(fd) == Some(description.identity) {
            Some(description)
        } else {
            self.forget(fd);
            None
        }
    }

    /// `fd` is being closed: forget it. Returns its description and whether it was the last
    /// number open on it; `None` for a host fd.
    pub(crate) fn closing(&self, fd: RawFd) -> Option<(Arc<Description>, bool)> {
        let description = self.get(fd)?;
        let mut map = self.lock();
        map.remove(&fd)?;
        self.count.fetch_sub(1, Ordering::AcqRel);
        let last = !map.values().any(|d| Arc::ptr_eq(d, &description));
        Some((description, last))
    }

    fn forget(&self, fd: RawFd) {
        if self.lock().remove(&fd).is_some() {
            self.count.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn dups_share_a_description_and_the_last_close_says_so() {
        let table = FdTable::default();
        let file = std::fs::File::open("/dev/null").unwrap();
        let fd = file.as_raw_fd();
        assert!(table.get(fd).is_none());
        table.opened(fd, Device::Kfd).unwrap();
        let copy = file.try_clone().unwrap();
        table.duplicated(fd, copy.as_raw_fd());
        assert_eq!(table.get(copy.as_raw_fd()).unwrap().device, Device::Kfd);
        let (_, last) = table.closing(fd).unwrap();
        assert!(!last);
        let (_, last) = table.closing(copy.as_raw_fd()).unwrap();
        assert!(last);
        assert!(table.closing(fd).is_none());
    }

    #[test]
    fn a_reused_number_is_not_simulated() {
        let table = FdTable::default();
        let file = std::fs::File::open("/dev/null").unwrap();
        let fd = file.as_raw_fd();
        table.opened(fd, Device::Render(128)).unwrap();
        // The number now names another file, replaced behind the table's back.
        let other = std::fs::File::open("/proc/self/status").unwrap();
        // SAFETY: both numbers are open and owned by this test; dup2 replaces `fd` atomically.
        assert_eq!(unsafe { libc::dup2(other.as_raw_fd(), fd) }, fd);
        assert!(table.get(fd).is_none());
        assert!(table.closing(fd).is_none());
    }
}
