//! A [`Sys`] decorator that records every call the driver makes through the seam and can fail
//! any one of them: the tool of a fault sweep (run a path once to learn its calls, then once
//! per call with that call failing).
//!
//! It wraps any [`Sys`] (a simulated [`crate::Machine`], or [`kfd::Linux`] under the LD_PRELOAD
//! interposer), so the failures it injects come from above the kernel model, as a real kernel's
//! refusal would: the call it fails does not reach the wrapped interface at all, except
//! `close`, which Linux completes even when it reports an error (`close(2)`: "the file
//! descriptor is released whatever the error"), so here too.
//!
//! A call is named by what it does and to which file ([`SeamCall`]), and by which occurrence of
//! that call it is in the run, not by its position among all calls: a background thread or a
//! wait that ended early moves positions, not occurrences.

use std::collections::HashMap;
use std::ffi::{OsString, c_int, c_void};
use std::fmt;
use std::num::NonZeroUsize;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use kfd::Errno;
use kfd::ioctl::Opcode;
use kfd::ioctl::requests as request;
use kfd::sys::{Backend, MapFlags, MmapAdvise, OFlag, ProtFlags, Sys};

/// What a seam call does, and to which file (named by the path it was opened from).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CallKind {
    /// `open(path)`.
    Open(PathBuf),
    /// `close` of a file opened from this path.
    Close(PathBuf),
    /// `ioctl` on a file opened from this path.
    Ioctl {
        /// The file.
        file: PathBuf,
        /// The request.
        request: u32,
    },
    /// `mmap` of a file (`None`: anonymous).
    Mmap(Option<PathBuf>),
    /// `munmap`.
    Munmap,
    /// `madvise` with this advice (its `Debug` form).
    Madvise(String),
    /// Reading a file (sysfs).
    ReadFile(PathBuf),
    /// Listing a directory (sysfs).
    ReadDir(PathBuf),
    /// `fstat` of a file opened from this path.
    CharDevice(PathBuf),
}

impl CallKind {
    /// The ioctl request, for [`CallKind::Ioctl`].
    pub fn request(&self) -> Option<Opcode> {
        match self {
            Self::Ioctl { request, .. } => Some(Opcode::from_raw(*request)),
            _ => None,
        }
    }

    /// The C name of a KFD request (`AMDKFD_IOC_ALLOC_MEMORY_OF_GPU`), for [`CallKind::Ioctl`]
    /// on `/dev/kfd`.
    pub fn kfd_request_name(&self) -> Option<&'static str> {
        let opcode = self.request()?;
        request::ALL
            .iter()
            .find(|r| r.opcode.group() == opcode.group() && r.opcode.number() == opcode.number())
            .map(|r| r.name)
    }
}

impl fmt::Display for CallKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Open(path) => write!(f, "open {}", path.display()),
            Self::Close(path) => write!(f, "close {}", path.display()),
            Self::Ioctl { file, request } => {
                if let Some(name) = self.kfd_request_name() {
                    write!(f, "ioctl {name} on {}", file.display())
                } else {
                    let op = Opcode::from_raw(*request);
                    write!(
                        f,
                        "ioctl '{}' {:#04x} on {}",
                        op.group() as char,
                        op.number(),
                        file.display()
                    )
                }
            }
            Self::Mmap(Some(path)) => write!(f, "mmap {}", path.display()),
            Self::Mmap(None) => write!(f, "mmap anonymous"),
            Self::Munmap => write!(f, "munmap"),
            Self::Madvise(advice) => write!(f, "madvise {advice}"),
            Self::ReadFile(path) => write!(f, "read {}", path.display()),
            Self::ReadDir(path) => write!(f, "list {}", path.display()),
            Self::CharDevice(path) => write!(f, "fstat {}", path.display()),
        }
    }
}

/// One call of a run: what it did, and which occurrence of that it was (1 for the first).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeamCall {
    /// What the call did.
    pub kind: CallKind,
    /// Which occurrence of `kind` in the run, from 1.
    pub occurrence: u32,
}

impl fmt::Display for SeamCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (#{})", self.kind, self.occurrence)
    }
}

/// The file name [`CallKind`] gives an fd this decorator did not see opened (a memfd, an fd
/// inherited or opened around the seam).
pub const OPENED_ELSEWHERE: &str = "(fd opened elsewhere)";

#[derive(Debug, Default)]
struct RunState {
    /// Every call of the run, in order.
    calls: Vec<SeamCall>,
    /// Occurrences so far, by kind.
    seen: HashMap<CallKind, u32>,
    /// The call to fail, and with what.
    planned: Option<(SeamCall, Errno)>,
    /// Whether the planned call was made (and failed).
    delivered: bool,
    /// What each open fd was opened from.
    files: HashMap<RawFd, PathBuf>,
}

/// A [`Sys`] that forwards to another, recording each call and failing the planned one.
pub struct FaultingSys {
    inner: Arc<dyn Sys>,
    state: Mutex<RunState>,
}

impl fmt::Debug for FaultingSys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultingSys")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl FaultingSys {
    /// Forward to `inner`, recording, with no failure planned.
    pub fn new(inner: Arc<dyn Sys>) -> Self {
        Self {
            inner,
            state: Mutex::new(RunState::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, RunState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Start a new run: forget the calls recorded so far (not the open files) and plan to
    /// fail `fault`'s call with its errno (`None`: fail nothing).
    pub fn start_run(&self, fault: Option<(SeamCall, Errno)>) {
        let mut state = self.lock();
        state.calls.clear();
        state.seen.clear();
        state.planned = fault;
        state.delivered = false;
    }

    /// Stop failing (the planned call, if not made yet, will not fail); recording goes on.
    pub fn disarm(&self) {
        self.lock().planned = None;
    }

    /// The calls of the run so far, in order.
    pub fn calls(&self) -> Vec<SeamCall> {
        self.lock().calls.clone()
    }

    /// Whether the planned call was made and failed.
    pub fn delivered(&self) -> bool {
        self.lock().delivered
    }

    /// Record a call of `kind`; the errno it must fail with, if it is the planned one.
    fn enter(&self, kind: CallKind) -> Option<Errno> {
        let mut state = self.lock();
        let occurrence = {
            let n = state.seen.entry(kind.clone()).or_insert(0);
            *n += 1;
            *n
        };
        let call = SeamCall { kind, occurrence };
        let fail = match &state.planned {
            Some((planned, errno)) if *planned == call => Some(*errno),
            _ => None,
        };
        if fail.is_some() {
            state.planned = None;
            state.delivered = true;
        }
        state.calls.push(call);
        fail
    }

    fn file_of(&self, fd: RawFd) -> PathBuf {
        self.lock()
            .files
            .get(&fd)
            .cloned()
            .unwrap_or_else(|| PathBuf::from(OPENED_ELSEWHERE))
    }
}

impl Sys for FaultingSys {
    fn backend(&self) -> Backend {
        self.inner.backend()
    }

    fn open(&self, path: &Path, flags: OFlag) -> Result<RawFd, Errno> {
        if let Some(errno) = self.enter(CallKind::Open(path.to_owned())) {
            return Err(errno);
        }
        let fd = self.inner.open(path, flags)?;
        self.lock().files.insert(fd, path.to_owned());
        Ok(fd)
    }

    fn close(&self, fd: RawFd) -> Result<(), Errno> {
        let file = self.file_of(fd);
        let fail = self.enter(CallKind::Close(file));
        let result = self.inner.close(fd);
        if result.is_ok() {
            self.lock().files.remove(&fd);
        }
        // close(2) releases the descriptor even when it reports an error.
        match fail {
            Some(errno) => Err(errno),
            None => result,
        }
    }

    unsafe fn ioctl(&self, fd: RawFd, request: Opcode, arg: *mut c_void) -> Result<c_int, Errno> {
        let kind = CallKind::Ioctl {
            file: self.file_of(fd),
            request: request.raw(),
        };
        if let Some(errno) = self.enter(kind) {
            return Err(errno);
        }
        // SAFETY: forwarded to the caller (the `Sys::ioctl` contract).
        unsafe { self.inner.ioctl(fd, request, arg) }
    }

    unsafe fn mmap(
        &self,
        addr: Option<NonZeroUsize>,
        len: NonZeroUsize,
        prot: ProtFlags,
        flags: MapFlags,
        fd: Option<RawFd>,
        offset: u64,
    ) -> Result<NonNull<c_void>, Errno> {
        if let Some(errno) = self.enter(CallKind::Mmap(fd.map(|fd| self.file_of(fd)))) {
            return Err(errno);
        }
        // SAFETY: forwarded to the caller (the `Sys::mmap` contract).
        unsafe { self.inner.mmap(addr, len, prot, flags, fd, offset) }
    }

    unsafe fn munmap(&self, addr: NonNull<c_void>, len: usize) -> Result<(), Errno> {
        if let Some(errno) = self.enter(CallKind::Munmap) {
            return Err(errno);
        }
        // SAFETY: forwarded to the caller (the `Sys::munmap` contract).
        unsafe { self.inner.munmap(addr, len) }
    }

    unsafe fn madvise(
        &self,
        addr: NonNull<c_void>,
        len: usize,
        advice: MmapAdvise,
    ) -> Result<(), Errno> {
        if let Some(errno) = self.enter(CallKind::Madvise(format!("{advice:?}"))) {
            return Err(errno);
        }
        // SAFETY: forwarded to the caller (the `Sys::madvise` contract).
        unsafe { self.inner.madvise(addr, len, advice) }
    }

    fn read_file(&self, path: &Path) -> Result<Vec<u8>, Errno> {
        if let Some(errno) = self.enter(CallKind::ReadFile(path.to_owned())) {
            return Err(errno);
        }
        self.inner.read_file(path)
    }

    fn read_dir(&self, path: &Path) -> Result<Vec<OsString>, Errno> {
        if let Some(errno) = self.enter(CallKind::ReadDir(path.to_owned())) {
            return Err(errno);
        }
        self.inner.read_dir(path)
    }

    fn process_id(&self) -> i32 {
        self.inner.process_id()
    }

    fn page_size(&self) -> usize {
        self.inner.page_size()
    }

    fn kernel_id(&self) -> u64 {
        self.inner.kernel_id()
    }

    fn char_device(&self, fd: RawFd) -> Result<Option<(u32, u32)>, Errno> {
        if let Some(errno) = self.enter(CallKind::CharDevice(self.file_of(fd))) {
            return Err(errno);
        }
        self.inner.char_device(fd)
    }

    fn doorbell_needs_notify(&self) -> bool {
        self.inner.doorbell_needs_notify()
    }

    fn notify_doorbell(&self, doorbell: NonNull<u64>, value: u64) {
        self.inner.notify_doorbell(doorbell, value);
    }

    fn doorbell_notifier(
        &self,
        doorbell: NonNull<u64>,
    ) -> Option<std::sync::Arc<dyn kfd::DoorbellNotifier>> {
        self.inner.doorbell_notifier(doorbell)
    }
}
