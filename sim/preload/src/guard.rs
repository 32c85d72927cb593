//! Re-entry: the simulator's own system calls must reach libc, not the simulator.
//!
//! While a thread runs simulator code on behalf of an interposed call, every interposed
//! function it reaches (the simulator opens memfds, maps memory, closes files, all through
//! libc's exported names, which resolve to this library) goes straight to the next definition.
//! The simulator's own threads (the command processors and the shader workers they start)
//! run nothing but simulator code, so for them every call goes straight through too: a
//! processor that drops the last reference to simulator memory unmaps it as in the in-process
//! simulator, never through the simulated `munmap` (which takes the driver model's locks).

use std::cell::Cell;

use amdgpu_sim::cp::PROCESSOR_THREAD_PREFIX;

thread_local! {
    /// Whether this thread is inside the simulator. A `const` initialiser and no destructor:
    /// reading it never allocates or registers anything, so it is safe at any point of a
    /// thread's life.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread is one of the simulator's: 0 not known yet, 1 no, 2 yes.
    static SIMULATOR_THREAD: Cell<u8> = const { Cell::new(0) };
}

/// Whether the calling thread's name marks it as one of the simulator's. Asked of the kernel
/// once per thread: a processor names itself before it runs any simulator code.
fn simulator_thread() -> bool {
    SIMULATOR_THREAD.with(|known| match known.get() {
        0 => {
            let mut name = [0u8; 16];
            // SAFETY: PR_GET_NAME writes at most 16 bytes (NUL included) into the buffer.
            let rc = unsafe { libc::prctl(libc::PR_GET_NAME, name.as_mut_ptr()) };
            let ours = rc == 0 && name.starts_with(PROCESSOR_THREAD_PREFIX.as_bytes());
            known.set(if ours { 2 } else { 1 });
            ours
        }
        answer => answer == 2,
    })
}

/// Whether the calling thread is running simulator code (then calls pass through).
pub(crate) fn inside() -> bool {
    INSIDE.with(Cell::get) || simulator_thread()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entering_nests_and_simulator_threads_are_always_inside() {
        assert!(!inside());
        {
            let _outer = enter();
            {
                let _inner = enter();
                assert!(inside());
            }
            assert!(inside(), "leaving the inner stay keeps the outer one");
        }
        assert!(!inside());
        let named = std::thread::Builder::new()
            .name(format!("{PROCESSOR_THREAD_PREFIX}1234-q0"))
            .spawn(|| {
                // A worker the processor starts inherits its name.
                let worker = std::thread::spawn(inside).join().unwrap();
                (inside(), worker)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(named, (true, true));
        let other = std::thread::Builder::new()
            .name("worker".to_owned())
            .spawn(inside)
            .unwrap()
            .join()
            .unwrap();
        assert!(!other);
    }
}
