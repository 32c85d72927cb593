//! Threads started with `pthread_create` instead of `std::thread`, so that starting one leaves
//! nothing on the thread that started it. The simulator's command processors run on them, and
//! so does aqueduct's GPU-program RPC server; neither knows the other.
//!
//! Why not `std::thread::spawn`: it reads a thread-local of the *spawning* thread (std's
//! spawn hooks; seen with Rust 1.95 under gdb, in `std::thread::spawnhook::run_spawn_hooks`),
//! and the first touch of that thread-local registers its destructor with glibc
//! (`__cxa_thread_atexit_impl`) on the spawning thread. A processor is started by
//! CREATE_QUEUE, on whatever thread of the program created the queue. glibc does not unmap a
//! shared object while a thread-local destructor of it is pending on a living thread:
//! `dlclose` returns 0 and the object stays, statics and all (rust-lang/rust#59629,
//! reliability.md §1.5). So with `std::thread`, a plugin that embeds the simulator and creates
//! one queue could never be unloaded while the program thread that called it lives.
//!
//! The same holds for any thread aqueduct starts on a caller's behalf: its GPU-program RPC
//! server uses this crate too.
//!
//! A thread started here runs its body under `catch_unwind` (a panic must not unwind into
//! `pthread`'s frames) and carries the name the kernel shows in `/proc/self/task/*/comm`. The
//! body may itself use std's thread-locals (the shader core's `std::thread::scope` does):
//! glibc runs their destructors as the thread exits, before [`UnloadSafeThread::join`]
//! returns, so a joined processor leaves nothing behind either.

#![deny(unsafe_op_in_unsafe_fn)]

use std::ffi::{CString, c_void};
use std::io;
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The stack of a processor thread: std's default for spawned threads (the command
/// processor and the shader core it runs for a one-thread dispatch were sized for it).
/// Unlike std, `RUST_MIN_STACK` does not change it.
const STACK_BYTES: usize = 2 << 20;
/// The kernel keeps 15 bytes of a thread's name (`TASK_COMM_LEN` is 16 with the NUL).
const NAME_BYTES: usize = 15;
/// What a thread whose body panicked returns to `pthread_join`.
const PANICKED: *mut c_void = std::ptr::dangling_mut::<c_void>();

/// What the new thread takes over.
struct Start {
    name: CString,
    body: Box<dyn FnOnce() + Send + 'static>,
}

/// A running processor thread. Dropping it without [`UnloadSafeThread::join`] detaches it.
#[derive(Debug)]
pub struct UnloadSafeThread {
    thread: libc::pthread_t,
}

impl UnloadSafeThread {
    /// Start `body` on a new thread named `name` (cut to what the kernel keeps; a name with a
    /// NUL byte is cut there).
    pub fn spawn(name: &str, body: impl FnOnce() + Send + 'static) -> io::Result<Self> {
        let mut name = name.as_bytes().to_vec();
        name.truncate(NAME_BYTES);
        if let Some(nul) = name.iter().position(|&b| b == 0) {
            name.truncate(nul);
        }
        let name = CString::new(name).unwrap_or_default();
        let start = Box::into_raw(Box::new(Start {
            name,
            body: Box::new(body),
        }));
        let mut attr = MaybeUninit::<libc::pthread_attr_t>::uninit();
        let mut thread = MaybeUninit::<libc::pthread_t>::uninit();
        // SAFETY: `attr` is initialised by pthread_attr_init before any other use and
        // destroyed once below; `thread` is written by pthread_create before it is read (only
        // on success). `run` is an `extern "C"` function taking the `Start` box that
        // `start` points to; on success that box belongs to the new thread, on failure it is
        // never seen by any thread and is taken back below.
        let rc = unsafe {
            let rc = libc::pthread_attr_init(attr.as_mut_ptr());
            if rc != 0 {
                drop(Box::from_raw(start));
                return Err(io::Error::from_raw_os_error(rc));
            }
            // EINVAL only below PTHREAD_STACK_MIN (16 KiB); then the default stack is used.
            let _ = libc::pthread_attr_setstacksize(attr.as_mut_ptr(), STACK_BYTES);
            let rc = libc::pthread_create(
                thread.as_mut_ptr(),
                attr.as_ptr(),
                run,
                start.cast::<c_void>(),
            );
            libc::pthread_attr_destroy(attr.as_mut_ptr());
            if rc != 0 {
                drop(Box::from_raw(start));
            }
            rc
        };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        // SAFETY: pthread_create succeeded, so it wrote the thread's id.
        let thread = unsafe { thread.assume_init() };
        Ok(Self { thread })
    }

    /// Whether the calling thread is this one.
    pub fn is_current(&self) -> bool {
        // SAFETY: both ids are valid: ours is joinable (neither joined nor detached yet).
        unsafe { libc::pthread_equal(libc::pthread_self(), self.thread) != 0 }
    }

    /// Wait for the thread to end (its thread-local destructors have run when this returns).
    /// `false`: its body panicked (the panic message went to stderr). Must not be called from
    /// the thread itself (see [`UnloadSafeThread::is_current`]): that would deadlock
    /// (`EDEADLK`), and then reports `false`.
    pub fn join(self) -> bool {
        let thread = self.thread;
        std::mem::forget(self);
        let mut result: *mut c_void = std::ptr::null_mut();
        // SAFETY: `thread` is joinable: made by pthread_create, neither joined nor detached
        // (this consumes the only handle, and `forget` keeps Drop from detaching it).
        let rc = unsafe { libc::pthread_join(thread, &raw mut result) };
        rc == 0 && result != PANICKED
    }
}

impl Drop for UnloadSafeThread {
    fn drop(&mut self) {
        // SAFETY: the thread is joinable (not joined: `join` forgets the handle); detaching
        // lets glibc free its resources when it exits.
        unsafe {
            libc::pthread_detach(self.thread);
        }
    }
}

/// The thread's entry point.
extern "C" fn run(start: *mut c_void) -> *mut c_void {
    // SAFETY: `start` is the `Box<Start>` that `spawn` leaked for this thread alone.
    let Start { name, body } = *unsafe { Box::from_raw(start.cast::<Start>()) };
    // SAFETY: `name` is a NUL-terminated string of at most 15 bytes (ERANGE otherwise, which
    // only leaves the thread unnamed); `pthread_self` is this thread.
    unsafe {
        libc::pthread_setname_np(libc::pthread_self(), name.as_ptr());
    }
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(()) => std::ptr::null_mut(),
        Err(_) => PANICKED,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;

    #[test]
    fn runs_named_joins_and_reports_a_panic() {
        let ran = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&ran);
        let thread = UnloadSafeThread::spawn("cp-test-a-long-name", move || {
            let mut comm = [0u8; 16];
            // SAFETY: a 16-byte buffer, as the kernel's names need.
            let rc = unsafe {
                libc::pthread_getname_np(libc::pthread_self(), comm.as_mut_ptr().cast(), 16)
            };
            assert_eq!(rc, 0);
            let comm = std::ffi::CStr::from_bytes_until_nul(&comm).unwrap();
            assert_eq!(comm.to_bytes(), b"cp-test-a-long-");
            seen.store(true, Ordering::Release);
        })
        .unwrap();
        assert!(!thread.is_current());
        assert!(thread.join(), "the body's assertions failed");
        assert!(ran.load(Ordering::Acquire));

        let panicking = UnloadSafeThread::spawn("cp-test-panic", || {
            // Unwinds like a panic, without the panic hook's message.
            std::panic::resume_unwind(Box::new("on purpose"))
        })
        .unwrap();
        assert!(!panicking.join());
    }
}
