//! The doorbell unit: a thread that watches the mapped doorbells of the simulated queues.
//!
//! A program under the interposer rings a doorbell the way it does on hardware, with a store
//! to the mapped doorbell page, and tells nobody. The GPU's doorbell unit sees every store;
//! here a thread looks at the doorbells of every queue ([`Machine::poll_doorbells`]) and wakes
//! the command processors whose doorbell changed. It polls quickly while queues are busy and
//! backs off to [`IDLE_PERIOD`] when nothing happens, which bounds the latency a quiet queue
//! adds to its first dispatch.

use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use amdgpu_sim::Machine;

use crate::guard;

/// The period right after a doorbell changed.
const BUSY_PERIOD: Duration = Duration::from_micros(10);
/// The longest period, while nothing happens.
const IDLE_PERIOD: Duration = Duration::from_micros(500);

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
    let mut period = BUSY_PERIOD;
    loop {
        if machine.poll_doorbells() > 0 {
            period = BUSY_PERIOD;
        } else {
            period = (period * 2).min(IDLE_PERIOD);
        }
        std::thread::sleep(period);
    }
}
