//! Sleeping in the kernel for a signal: WAIT_EVENTS on the signal's event (and on the event
//! of the queue the caller waits on, whose error word the CP fires it with), leaving early
//! when the device is shut down or the queue reports an error.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use aql::signal::SignalSleeper;
use kfd::{EventWait, Kfd};

use crate::error::{Error, Result};

/// A [`SignalSleeper`] over KFD events. `check` runs before and after every sleep; its
/// error ends the wait and is kept for the caller ([`EventSleeper::take_failure`]).
pub(crate) struct EventSleeper<'a> {
    pub(crate) kfd: &'a Kfd,
    /// The signal's event (None: a signal without interrupt) and the queue's, if any.
    pub(crate) events: [Option<&'a kfd::Event>; 2],
    pub(crate) check: &'a (dyn Fn() -> Result<()> + Sync),
    failure: Mutex<Option<Error>>,
}

/// Longest nap of a sleep without any event (a polling signal).
const POLL_NAP: Duration = Duration::from_millis(1);

impl<'a> EventSleeper<'a> {
    pub(crate) fn new(
        kfd: &'a Kfd,
        events: [Option<&'a kfd::Event>; 2],
        check: &'a (dyn Fn() -> Result<()> + Sync),
    ) -> Self {
        Self {
            kfd,
            events,
            check,
            failure: Mutex::new(None),
        }
    }

    /// The error that ended the wait, if the sleeper ended it.
    pub(crate) fn take_failure(&self) -> Option<Error> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn fail(&self, error: Error) -> String {
        let text = error.to_string();
        *self.failure.lock().unwrap_or_else(PoisonError::into_inner) = Some(error);
        text
    }
}

impl SignalSleeper for EventSleeper<'_> {
    fn sleep(&self, timeout: Duration) -> std::result::Result<(), String> {
        (self.check)().map_err(|e| self.fail(e))?;
        let mut waits: Vec<EventWait<'_>> = self
            .events
            .iter()
            .flatten()
            .map(|e| EventWait::new(e))
            .collect();
        if waits.is_empty() {
            std::thread::sleep(timeout.min(POLL_NAP));
        } else {
            self.kfd
                .wait_events(&mut waits, false, Some(timeout))
                .map_err(|e| self.fail(Error::driver(|| "waiting for a signal".to_owned(), e)))?;
        }
        (self.check)().map_err(|e| self.fail(e))
    }

    fn wake(&self) -> std::result::Result<(), String> {
        match self.events[0] {
            Some(event) => event.set().map_err(|e| {
                self.fail(Error::driver(|| "waking a signal's waiters".to_owned(), e))
            }),
            None => Ok(()),
        }
    }
}
