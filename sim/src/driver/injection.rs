//! Fault injection for the layers above the seam: interrupted waits and failing ioctls.
//!
//! GPU resets and VM faults are injected through [`crate::Machine::inject_gpu_reset`] and
//! [`crate::Machine::inject_vm_fault`].

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use kfd::Errno;

/// A planned interruption of WAIT_EVENTS calls.
#[derive(Clone, Copy, Debug)]
struct WaitPlan {
    remaining: u32,
    after: Duration,
}

/// When the current wait will be interrupted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Interruption {
    pub at: Instant,
}

#[derive(Clone, Copy, Debug)]
struct IoctlFailure {
    number: u8,
    errno: Errno,
    remaining: u32,
}

/// Faults to inject into the simulated kernel.
#[derive(Debug, Default)]
pub struct FaultInjection {
    wait: Mutex<Option<WaitPlan>>,
    ioctls: Mutex<Vec<IoctlFailure>>,
}

impl FaultInjection {
    /// The next `count` WAIT_EVENTS calls that have to sleep are interrupted by a (simulated)
    /// signal `after` into their sleep, unless their condition is met first: they fail with
    /// EINTR, `wait_result` FAIL, and a finite `timeout` rewritten to the time that remained,
    /// as the kernel does (`-ERESTARTSYS`, seen as EINTR by a handler without SA_RESTART).
    pub fn interrupt_waits(&self, count: u32, after: Duration) {
        *self.wait.lock().unwrap_or_else(PoisonError::into_inner) = Some(WaitPlan {
            remaining: count,
            after,
        });
    }

    /// The next `count` `/dev/kfd` ioctls with request number `number` fail with `errno`
    /// before the kernel looks at their arguments (as an interrupted or refused call would).
    pub fn fail_ioctls(&self, number: u8, errno: Errno, count: u32) {
        self.ioctls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(IoctlFailure {
                number,
                errno,
                remaining: count,
            });
    }

    /// Cancel every planned fault.
    pub fn clear(&self) {
        *self.wait.lock().unwrap_or_else(PoisonError::into_inner) = None;
        self.ioctls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Planned ioctl failures not yet delivered (a test checks it injected into calls that
    /// were made).
    pub fn pending_ioctl_failures(&self) -> u32 {
        self.ioctls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|f| f.remaining)
            .sum()
    }

    /// When a wait starting now would be interrupted.
    pub(crate) fn wait_interruption(&self) -> Option<Interruption> {
        let plan = *self.wait.lock().unwrap_or_else(PoisonError::into_inner);
        plan.filter(|p| p.remaining > 0).map(|p| Interruption {
            at: Instant::now() + p.after,
        })
    }

    /// A wait was interrupted.
    pub(crate) fn consume_wait_interruption(&self) {
        let mut plan = self.wait.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = plan.as_mut() {
            p.remaining = p.remaining.saturating_sub(1);
            if p.remaining == 0 {
                *plan = None;
            }
        }
    }

    /// The errno an ioctl with `number` must fail with, if one is planned.
    pub(crate) fn ioctl_failure(&self, number: u8) -> Option<Errno> {
        let mut failures = self.ioctls.lock().unwrap_or_else(PoisonError::into_inner);
        let index = failures
            .iter()
            .position(|f| f.number == number && f.remaining > 0)?;
        let failure = &mut failures[index];
        failure.remaining -= 1;
        let errno = failure.errno;
        if failure.remaining == 0 {
            failures.remove(index);
        }
        Some(errno)
    }
}
