//! Re-entry: the simulator's own system calls must reach libc, not the simulator.
//!
//! While a thread runs simulator code on behalf of an interposed call, every interposed
//! function it reaches (the simulator opens memfds, maps memory, closes files, all through
//! libc's exported names, which resolve to this library) goes straight to the next definition.

use std::cell::Cell;

thread_local! {
    /// Whether this thread is inside the simulator. A `const` initialiser and no destructor:
    /// reading it never allocates or registers anything, so it is safe at any point of a
    /// thread's life.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is running simulator code (then calls pass through).
pub(crate) fn inside() -> bool {
    INSIDE.with(Cell::get)
}

/// A stay inside the simulator; leaving restores what was there before.
pub(crate) struct Inside {
    was: bool,
    _not_send: std::marker::PhantomData<*const ()>,
}

/// Enter the simulator on this thread.
pub(crate) fn enter() -> Inside {
    Inside {
        was: INSIDE.with(|inside| inside.replace(true)),
        _not_send: std::marker::PhantomData,
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        INSIDE.with(|inside| inside.set(self.was));
    }
}
