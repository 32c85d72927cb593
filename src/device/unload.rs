//! Unloading: what a copy of aqueduct gives back when the shared object that embeds it is
//! unloaded (`dlclose`) while the program goes on.
//!
//! A plugin (a cdylib, a Python extension module) that embeds aqueduct can be loaded, used
//! and unloaded any number of times. A device the plugin opened is torn down by its own
//! shutdown or last handle (every queue, event, buffer and thread of it), but two things are
//! made to last as long as the *process*, and a plugin is not a process:
//! - the process binding (`kfd`'s `/dev/kfd` file, render-node files and event page), kept
//!   because the real kernel ties them to the process (reliability.md §1.4);
//! - the simulator's default machine, built on first use.
//!
//! When the kernel behind a binding is an in-process simulator, it lives in the plugin's own
//! memory and dies with it: the binding's files (memfds) and mappings, and the machine's
//! memory file and mappings, would stay in the process with nothing left that can reach them,
//! and every load-use-unload round would leak them again. So at unload this module releases
//! exactly those: the bindings to in-process simulators that no open driver uses
//! ([`kfd::release_simulated_bindings`]: close their files, unmap their event pages, as the
//! end of the process would) and this copy's default machine
//! ([`amdgpu_sim::release_default_machine`]). A binding to the real kernel is never released:
//! the kernel keeps its KFD process until the process ends, and a fresh copy of the library
//! takes it over through the record the binding keeps in process memory (`kfd`'s binding
//! handoff; `tests/dlopen_adopt.rs`).
//!
//! ## How the release runs at unload
//!
//! The first [`Device::open`](crate::Device::open) of a copy registers one handler with
//! `__cxa_atexit(handler, null, &__dso_handle)`, `__dso_handle` being the object this code is
//! linked into. glibc runs such a handler when that object is finalised: at `dlclose` once
//! the object is really being unmapped (its `.fini_array` calls `__cxa_finalize` with its
//! handle), and at `exit` for everything still loaded (or when the code is linked into the
//! executable itself). Rust has no static destructors, and a `.fini_array` entry of our own
//! would run at the same two moments; `__cxa_atexit` costs nothing in a program that never
//! opens a device, and is the interface C++ uses for the same purpose. glibc finalises an
//! object only when it can unmap it: a thread-local destructor of it still pending on a
//! living thread keeps it loaded (and `dlclose` still returns 0) — which is why nothing of
//! aqueduct may leave one on a caller's thread (the simulator starts its command-processor
//! threads without `std::thread` for this reason; `amdgpu_sim::cp`).
//!
//! The handler does nothing while any device of this copy is open or being opened (it would
//! pull state out from under it), nor in a fork child (the parent's threads may have held
//! locks at the fork): so at a process `exit` with devices open it is a no-op, and at an
//! `exit` without open devices it only does early what the end of the process does anyway.
//! It never panics across the C boundary (`catch_unwind`).
//!
//! Not covered: an unload while another thread of the program is still inside aqueduct
//! (dlclose under a running call is undefined for any library), and a device or machine
//! handle the plugin keeps past its own unload (in a leaked static, say): its state is never
//! released.

use std::sync::Once;

use super::fork;
use super::registry::Registry;

/// Whether this copy registered its unload handler (a fresh copy starts unregistered).
static REGISTERED: Once = Once::new();

/// Register the unload handler of this copy of the library, once.
pub(crate) fn register_release_at_unload() {
    REGISTERED.call_once(finalizer::register);
}

/// Release the simulated process state if no device is open. Returns whether it did.
pub(crate) fn release_simulated_state() -> bool {
    if fork::epoch() != 0 {
        return false;
    }
    // A device being opened or shut down holds the table: leave it alone, never wait (at
    // `exit`, the holder may be a thread that will never run again).
    let Some(mut registry) = Registry::try_lock() else {
        return false;
    };
    if !registry.is_empty() {
        return false;
    }
    kfd::release_simulated_bindings();
    #[cfg(feature = "sim")]
    amdgpu_sim::release_default_machine();
    registry.release();
    true
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod finalizer {
    use std::ffi::{c_int, c_void};

    unsafe extern "C" {
        /// The handle of the object (shared library or executable) this code is linked
        /// into; defined by the C runtime's `crtbegin`, hidden, one per object.
        static __dso_handle: c_void;
        /// glibc: run `func(arg)` when the object of `dso_handle` is finalised (`dlclose`
        /// that unmaps it, or `exit`).
        fn __cxa_atexit(
            func: unsafe extern "C" fn(*mut c_void),
            arg: *mut c_void,
            dso_handle: *const c_void,
        ) -> c_int;
    }

    pub(super) fn register() {
        // SAFETY: `at_unload` is an `extern "C"` function that takes (and ignores) one
        // pointer and never unwinds; `__dso_handle` is this object's handle, only its
        // address is taken. `__cxa_atexit` fails only without memory, and then the state is
        // simply not released at unload (what the process would do anyway).
        let _ = unsafe { __cxa_atexit(at_unload, std::ptr::null_mut(), &raw const __dso_handle) };
    }

    /// Runs at `dlclose` (when this object is unmapped) or at `exit`.
    unsafe extern "C" fn at_unload(_: *mut c_void) {
        let _ = std::panic::catch_unwind(super::release_simulated_state);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod finalizer {
    /// Elsewhere (musl's `dlclose` unmaps nothing) the state lives until the process ends.
    pub(super) fn register() {}
}
