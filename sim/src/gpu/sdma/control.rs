//! What the kernel-driver model changes from outside an SDMA queue's thread (the doorbell,
//! UPDATE_QUEUE, DESTROY_QUEUE) and the parking that keeps an idle or polling queue off the CPU.
//!
//! Every event bumps a counter under one lock; the queue takes the counter's value before it
//! looks at memory and parks only while it is unchanged, so a doorbell rung between "the ring
//! looked empty" and "park" is never lost. A doorbell costs a lock and, when the queue sleeps,
//! a condition-variable notification: copy queues are rung once per submission, not per packet.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use crate::gpu::queue::ProcessorProgress;

/// Where the ring is and whether the queue may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RingConfig {
    pub(crate) ring_va: u64,
    pub(crate) ring_bytes: u64,
    /// `queue_percentage` (bits 7:0); 0 suspends the queue.
    pub(crate) percentage: u32,
}

impl RingConfig {
    /// Whether the queue may execute: a ring of a power-of-two size and a non-zero share.
    pub(crate) fn runnable(&self) -> bool {
        self.ring_va != 0
            && self.ring_bytes.is_power_of_two()
            && self.ring_bytes >= 256
            && self.percentage & 0xFF != 0
    }
}

/// What the queue saw at one look.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Look {
    pub(crate) events: u64,
    /// The last value stored to the doorbell (the write pointer), if any since the last look.
    pub(crate) doorbell: Option<u64>,
    pub(crate) config: RingConfig,
}

#[derive(Debug)]
struct State {
    events: u64,
    doorbell: Option<u64>,
    config: RingConfig,
    looks: u64,
    /// While parked: the looks begun when the park began, and whether only an event ends it.
    parked: Option<(u64, bool)>,
}

/// Shared between a queue's thread and the handle the driver holds.
#[derive(Debug)]
pub(crate) struct Control {
    state: Mutex<State>,
    wake: Condvar,
    stopped: AtomicBool,
}

impl Control {
    pub(crate) fn new(config: RingConfig) -> Self {
        Self {
            state: Mutex::new(State {
                events: 0,
                doorbell: None,
                config,
                looks: 0,
                parked: None,
            }),
            wake: Condvar::new(),
            stopped: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update is a plain store of whole fields: a poisoned lock is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn event(&self, change: impl FnOnce(&mut State)) {
        let mut state = self.lock();
        change(&mut state);
        state.events += 1;
        drop(state);
        self.wake.notify_all();
    }

    /// The driver stored `value` (the new write pointer, in bytes) to the doorbell.
    pub(crate) fn ring_doorbell(&self, value: u64) {
        self.event(|s| s.doorbell = Some(value));
    }

    /// UPDATE_QUEUE.
    pub(crate) fn update(&self, config: RingConfig) {
        self.event(|s| s.config = config);
    }

    /// DESTROY_QUEUE.
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.event(|_| {});
    }

    pub(crate) fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// Begin a look: the events so far, the doorbell value stored since the last look, and
    /// the ring.
    pub(crate) fn observe(&self) -> Look {
        let mut state = self.lock();
        state.looks += 1;
        Look {
            events: state.events,
            doorbell: state.doorbell.take(),
            config: state.config,
        }
    }

    /// Park until an event newer than `look` (or `timeout`, if given).
    pub(crate) fn park(&self, look: &Look, timeout: Option<Duration>) {
        let mut state = self.lock();
        if state.events != look.events || self.stopped() {
            return;
        }
        state.parked = Some((state.looks, timeout.is_none()));
        let waiting = |s: &mut State| s.events == look.events && !self.stopped();
        let mut state = match timeout {
            Some(t) => {
                self.wake
                    .wait_timeout_while(state, t, waiting)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
            None => self
                .wake
                .wait_while(state, waiting)
                .unwrap_or_else(PoisonError::into_inner),
        };
        state.parked = None;
    }

    /// Looks begun and whether the queue sleeps (for tests).
    pub(crate) fn progress(&self) -> ProcessorProgress {
        let state = self.lock();
        ProcessorProgress {
            looks: state.looks,
            asleep_after_look: state.parked.map(|(looks, _)| looks),
            asleep_until_event: state.parked.is_some_and(|(_, until_event)| until_event),
        }
    }
}
