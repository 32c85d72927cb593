//! Fork detection that costs one atomic load on hot paths.
//!
//! After `fork()` the child inherits every handle but none of the kernel state behind them:
//! the kernel refuses the parent's `/dev/kfd` file in the child (EBADF), and doorbell and ring
//! mappings are not copied (`MADV_DONTFORK`), so a doorbell store would fault. Slow paths
//! compare `getpid()` with the owner's pid (a raw `clone()` that bypasses libc's `fork` is
//! caught there); hot paths such as publishing a packet compare a fork epoch that a
//! `pthread_atfork` child handler bumps.

use std::io::Write;
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many forks this process has gone through as a child: 0 in the original process.
static FORK_EPOCH: AtomicU64 = AtomicU64::new(0);
static INSTALL: Once = Once::new();

extern "C" fn in_child() {
    FORK_EPOCH.fetch_add(1, Ordering::Relaxed);
}

/// The current fork epoch, installing the handler on first use.
pub(crate) fn epoch() -> u64 {
    INSTALL.call_once(|| {
        // SAFETY: the child handler is an `extern "C"` function without arguments that only
        // touches an atomic (async-signal-safe); pthread_atfork has no other precondition.
        // When this library is unloaded, glibc unregisters handlers of the unloaded object.
        let rc = unsafe { libc::pthread_atfork(None, None, Some(in_child)) };
        if rc != 0 {
            let _ = std::io::stderr().write_all(
                b"aqueduct: pthread_atfork failed; fork children are caught by pid only\n",
            );
        }
    });
    FORK_EPOCH.load(Ordering::Relaxed)
}
