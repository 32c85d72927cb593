//! The doorbell unit: a thread that watches the mapped doorbells of the simulated queues.
//!
//! A program under the interposer rings a doorbell the way it does on hardware, with a store
//! to the mapped doorbell page, and tells nobody. The GPU's doorbell unit sees every store;
//! here a thread looks at the doorbells of every queue ([`Machine::poll_doorbells`]) and wakes
//! the command processors whose doorbell changed. It polls every [`BUSY_PERIOD`] until
//! [`HOT_WINDOW`] has passed without a doorbell (a program that dispatches, does some host
//! work and dispatches again sees the short latency every time), then backs off towards
//! [`IDLE_PERIOD`], which bounds the latency a quiet queue adds to its next dispatch.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use amdgpu_sim::Machine;

use crate::guard;

/// The period right after a doorbell changed.
const BUSY_PERIOD: Duration = Duration::from_micros(10);
/// The longest period, while nothing happens.
const IDLE_PERIOD: Duration = Duration::from_micros(500);
/// How long after the last doorbell the period stays at [`BUSY_PERIOD`].
const HOT_WINDOW: Duration = Duration::from_millis(5);

/// The watcher thread of this process, started with the first simulated ioctl.
#[derive(Debug, Default)]
pub(crate) struct DoorbellUnit {
    /// The pid the thread was started in (a forked child starts its own: threads do not
    /// survive `fork`).
    started_in: AtomicI32,
}

impl DoorbellUnit {
    /// Start the thread in this process unless it runs already.
    pub(crate) fn ensure_running(&self, machine: &Machine) {
        let pid = std::process::id() as i32;
        if self.started_in.load(Ordering::Acquire) == pid
            || self.started_in.swap(pid, Ordering::AcqRel) == pid
        {
            return;
        }
        let machine = machine.clone();
        let started = std::thread::Builder::new()
            .name("sim-doorbells".to_owned())
            .spawn(move || watch(&machine));
        if started.is_err() {
            // Let the next call try again.
            self.started_in.store(0, Ordering::Release);
        }
    }
}

fn watch(machine: &Machine) {
    // Everything this thread calls is the simulator's own business.
    let _inside = guard::enter();
    // The default timer slack (50 µs) would stretch every short sleep to about 60 µs, and
    // with it every dispatch's latency; 1 ns makes the period what it says.
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
    let mut period = BUSY_PERIOD;
    let mut last_doorbell = Instant::now();
    loop {
        if machine.poll_doorbells() > 0 {
            last_doorbell = Instant::now();
            period = BUSY_PERIOD;
        } else if last_doorbell.elapsed() > HOT_WINDOW {
            period = (period * 2).min(IDLE_PERIOD);
        }
        std::thread::sleep(period);
    }
}
