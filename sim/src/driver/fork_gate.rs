//! Keeping the machine-wide tables usable in a forked child.
//!
//! `fork()` copies the address space with every mutex in whatever state another thread left it.
//! A forked child must still be able to ask the simulator about an inherited fd (and get EBADF,
//! as from the kernel) and to open its own KFD process, so the tables those operations touch
//! (open files, processes, CPU mappings, GEM offsets) are guarded by [`TableMutex`] and
//! [`TableRwLock`]: every critical section on them runs inside a *gate section*, and a
//! `pthread_atfork` prepare handler closes the gate and waits until no thread is inside, so no
//! such lock is held at the moment of the fork.
//!
//! Rules that make this deadlock-free: a gate section only takes table locks (never a process
//! lock, never waits for a command processor), and nested sections of one thread do not wait
//! for the gate. Threads that hold no table lock are unaffected by a fork.
//!
//! A raw `clone()` that bypasses libc's `fork` also bypasses the handlers (libhsakmt documents
//! the same limitation); the simulator makes no promise for such children.

use std::cell::Cell;
use std::io::Write;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, Once, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

static FORKING: AtomicBool = AtomicBool::new(false);
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
static INSTALL: Once = Once::new();
/// Whether the handlers are registered (then [`FORKS`] counts every fork).
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// Forks begun in this process (and, copied, in its children) since the handlers were
/// registered.
static FORKS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Register the fork handlers (once per process).
pub(crate) fn install() {
    INSTALL.call_once(|| {
        // SAFETY: the three handlers are `extern "C"` functions without arguments that only
        // touch atomics and yield; pthread_atfork has no other precondition.
        let rc = unsafe { libc::pthread_atfork(Some(prepare), Some(finish), Some(finish)) };
        if rc == 0 {
            INSTALLED.store(true, Ordering::SeqCst);
        } else {
            let _ = std::io::stderr().write_all(
                b"amdgpu-sim: pthread_atfork failed; forked children may deadlock in the simulator\n",
            );
        }
    });
}

extern "C" fn prepare() {
    FORKING.store(true, Ordering::SeqCst);
    while ACTIVE.load(Ordering::SeqCst) != 0 {
        std::thread::yield_now();
    }
    // Counted once no section runs and none can begin: a section sees either the count
    // before this fork, and everything it mapped is inherited, or the count after it, and
    // nothing it maps is.
    FORKS.fetch_add(1, Ordering::SeqCst);
}

extern "C" fn finish() {
    FORKING.store(false, Ordering::SeqCst);
}

/// How many forks this process has begun, or `None` if forks are not counted (the handlers
/// could not be registered). Read inside a [`GateSection`], the answer stays true until the
/// section ends: a fork waits for the section.
pub(crate) fn forks() -> Option<u64> {
    INSTALLED
        .load(Ordering::SeqCst)
        .then(|| FORKS.load(Ordering::SeqCst))
}

/// One thread's stay inside the gate. Not `Send`: it must end on the thread that began it.
pub(crate) struct GateSection {
    _not_send: std::marker::PhantomData<*const ()>,
}

impl GateSection {
    pub(crate) fn enter() -> Self {
        let depth = DEPTH.with(Cell::get);
        if depth == 0 {
            loop {
                // Announce first, then look: with SeqCst on both sides either the forking
                // thread sees this section or this thread sees the fork (Dekker).
                ACTIVE.fetch_add(1, Ordering::SeqCst);
                if !FORKING.load(Ordering::SeqCst) {
                    break;
                }
                ACTIVE.fetch_sub(1, Ordering::SeqCst);
                while FORKING.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
            }
        }
        DEPTH.with(|d| d.set(depth + 1));
        Self {
            _not_send: std::marker::PhantomData,
        }
    }
}

impl Drop for GateSection {
    fn drop(&mut self) {
        let depth = DEPTH.with(Cell::get);
        DEPTH.with(|d| d.set(depth.saturating_sub(1)));
        if depth == 1 {
            ACTIVE.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A mutex for a machine-wide table (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct TableMutex<T> {
    inner: Mutex<T>,
}

/// A locked [`TableMutex`]; the lock is released before the gate section ends.
pub(crate) struct TableGuard<'a, T> {
    guard: MutexGuard<'a, T>,
    _section: GateSection,
}

impl<T> TableMutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Self {
            inner: Mutex::new(value),
        }
    }

    pub(crate) fn lock(&self) -> TableGuard<'_, T> {
        let section = GateSection::enter();
        // Table updates are single statements on collections; a panic in one leaves the
        // collection consistent, so a poisoned lock is still usable.
        let guard = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        TableGuard {
            guard,
            _section: section,
        }
    }
}

impl<T> Deref for TableGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> DerefMut for TableGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

/// A reader-writer lock for a machine-wide table read on hot paths (doorbell notification).
#[derive(Debug, Default)]
pub(crate) struct TableRwLock<T> {
    inner: RwLock<T>,
}

/// A read-locked [`TableRwLock`].
pub(crate) struct TableReadGuard<'a, T> {
    guard: RwLockReadGuard<'a, T>,
    _section: GateSection,
}

/// A write-locked [`TableRwLock`].
pub(crate) struct TableWriteGuard<'a, T> {
    guard: RwLockWriteGuard<'a, T>,
    _section: GateSection,
}

impl<T> TableRwLock<T> {
    pub(crate) fn read(&self) -> TableReadGuard<'_, T> {
        let section = GateSection::enter();
        let guard = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        TableReadGuard {
            guard,
            _section: section,
        }
    }

    pub(crate) fn write(&self) -> TableWriteGuard<'_, T> {
        let section = GateSection::enter();
        let guard = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        TableWriteGuard {
            guard,
            _section: section,
        }
    }
}

impl<T> Deref for TableReadGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> Deref for TableWriteGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> DerefMut for TableWriteGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}
