//! The simulator's open files: `/dev/kfd` and the render nodes.
//!
//! Every open returns a real file descriptor (a memfd), so sim fds never collide with real files
//! and leaks show up in `/proc/self/fd`. A file is identified by its memfd's inode, not by the fd
//! number: a `dup` of a sim fd is the same file, a closed-and-reused number is not. The table
//! keeps its own duplicate of each memfd, so an inode cannot be recycled while its entry lives.

use std::collections::HashMap;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kfd::Errno;
use nix::sys::memfd::{MFdFlags, memfd_create};

use crate::driver::drm_file::DrmFile;
use crate::driver::fork_gate::TableMutex;
use crate::driver::process::Process;

/// `(st_dev, st_ino)` of a memfd.
type Identity = (u64, u64);

/// What a sim file is.
#[derive(Debug)]
pub(crate) enum FileKind {
    /// `/dev/kfd`, bound at open to the opener's process (`filep->private_data`).
    Kfd(Arc<Process>),
    /// `/dev/dri/renderD<minor>` of the GPU with this index.
    Render(usize),
}

/// One open file description.
#[derive(Debug)]
pub(crate) struct SimFile {
    /// Unique per machine, never 0.
    pub id: u64,
    pub kind: FileKind,
    /// The pid of the process that opened it.
    pub opener: i32,
    /// For render files: the render node's state of this file (`None` for `/dev/kfd`).
    pub drm: Option<Arc<DrmFile>>,
    _keep: OwnedFd,
}

struct Entry {
    file: Arc<SimFile>,
    /// Sim fds open on this file (opened through the simulator and not yet closed through it).
    fds: u32,
}

/// The table of open sim files.
pub(crate) struct FileTable {
    next_id: AtomicU64,
    entries: TableMutex<HashMap<Identity, Entry>>,
}

impl std::fmt::Debug for FileTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileTable").finish_non_exhaustive()
    }
}

fn identity(fd: BorrowedFd<'_>) -> Result<Identity, Errno> {
    let stat = nix::sys::stat::fstat(fd).map_err(Errno::from)?;
    Ok((stat.st_dev, stat.st_ino))
}

impl FileTable {
    pub(crate) fn new() -> Self {
        Self {
            next_id: AtomicU64::new(1),
            entries: TableMutex::new(HashMap::new()),
        }
    }

    /// Create a file of `kind` opened by `opener`; returns the new fd (the caller owns it).
    pub(crate) fn open(
        &self,
        name: &str,
        kind: FileKind,
        opener: i32,
        cloexec: bool,
    ) -> Result<(RawFd, Arc<SimFile>), Errno> {
        let flags = if cloexec {
            MFdFlags::MFD_CLOEXEC
        } else {
            MFdFlags::empty()
        };
        let user_fd = memfd_create(name, flags).map_err(Errno::from)?;
        let keep = user_fd
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| Errno::from(&e))?;
        let key = identity(user_fd.as_fd())?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let drm = matches!(kind, FileKind::Render(_)).then(|| Arc::new(DrmFile::new(id)));
        let file = Arc::new(SimFile {
            id,
            kind,
            opener,
            drm,
            _keep: keep,
        });
        self.entries.lock().insert(
            key,
            Entry {
                file: file.clone(),
                fds: 1,
            },
        );
        Ok((std::os::fd::IntoRawFd::into_raw_fd(user_fd), file))
    }

    /// The sim file `fd` refers to. `Err(EBADF)` if `fd` is not open at all, `Ok(None)` if it
    /// is a host file.
    pub(crate) fn lookup(&self, fd: RawFd) -> Result<Option<Arc<SimFile>>, Errno> {
        let key = identity_of_number(fd)?;
        Ok(self.entries.lock().get(&key).map(|e| e.file.clone()))
    }

    /// A sim fd is being closed. Returns the file if the fd was a sim fd (and, when it was the
    /// last one, removes the file from the table; references elsewhere keep it alive).
    pub(crate) fn close(&self, fd: RawFd) -> Result<Option<Arc<SimFile>>, Errno> {
        let key = identity_of_number(fd)?;
        let removed = {
            let mut entries = self.entries.lock();
            let Some(entry) = entries.get_mut(&key) else {
                return Ok(None);
            };
            entry.fds = entry.fds.saturating_sub(1);
            if entry.fds == 0 {
                entries.remove(&key).map(|e| e.file)
            } else {
                Some(entry.file.clone())
            }
        };
        Ok(removed)
    }

    /// Sim fds open, by opener pid (`None`: all).
    pub(crate) fn open_fds(&self, pid: Option<i32>) -> u64 {
        self.entries
            .lock()
            .values()
            .filter(|e| pid.is_none_or(|p| e.file.opener == p))
            .map(|e| u64::from(e.fds))
            .sum()
    }

    /// Drop every entry (machine teardown); the files are dropped outside the lock.
    pub(crate) fn clear(&self) -> Vec<Arc<SimFile>> {
        self.entries.lock().drain().map(|(_, e)| e.file).collect()
    }
}

/// The identity of whatever a caller-supplied fd number refers to; EBADF for a negative
/// number or one that is not open, as the kernel answers.
fn identity_of_number(fd: RawFd) -> Result<Identity, Errno> {
    if fd < 0 {
        return Err(Errno::EBADF);
    }
    // SAFETY: `fd` is not -1 (checked above), which is `borrow_raw`'s only validity
    // requirement on the number; the borrow lives only for this fstat(2), which validates the
    // number itself (EBADF for a closed one) and keeps nothing, so no I/O can reach a file that
    // reuses the number later.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    identity(borrowed)
}
