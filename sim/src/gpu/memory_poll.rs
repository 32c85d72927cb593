//! Polling GPU memory that changes without a doorbell: a real GPU's engines (the command
//! processor waiting on a signal, an SDMA engine's POLL_REGMEM) re-read it on a timer, since
//! host stores to memory ring no doorbell. Shared by the command processor and the copy
//! engines.

use std::time::Duration;

/// A capped exponential backoff for polling memory that changes without a doorbell: an engine of
/// a real GPU re-reads it on a timer, and host stores to signals do not ring doorbells.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Backoff {
    next: Duration,
}

impl Backoff {
    /// The first re-check comes after this long.
    const FIRST: Duration = Duration::from_micros(20);
    /// Re-checks never come further apart than this: it bounds the latency of noticing a host
    /// store at ~1 ms while costing a parked processor only ~1000 wake-ups a second.
    const CAP: Duration = Duration::from_millis(1);

    /// A fresh backoff.
    pub(crate) const fn new() -> Self {
        Self { next: Self::FIRST }
    }

    /// The delay before the next re-check, growing towards the cap.
    pub(crate) fn step(&mut self) -> Duration {
        let delay = self.next;
        self.next = (self.next * 2).min(Self::CAP);
        delay
    }
}

#[cfg(test)]
mod tests {
    use super::Backoff;

    #[test]
    fn backoff_grows_to_its_cap() {
        let mut backoff = Backoff::new();
        let first = backoff.step();
        assert_eq!(first, Backoff::FIRST);
        assert!(backoff.step() > first);
        for _ in 0..64 {
            backoff.step();
        }
        assert_eq!(backoff.step(), Backoff::CAP);
    }
}
