//! Host waits on a signal (aql.md §3.3): spin for [`SPIN_BUDGET`], then sleep until the
//! condition holds or the timeout passes, re-checking the value after every sleep.
//!
//! Sleeping is in the kernel, on the signal's KFD event, through a [`SignalSleeper`] the
//! caller hands in (this crate makes no system call): the CP stores the event id to the
//! signal's mailbox and raises an interrupt after it updates the value, which wakes the
//! sleeper. Sleeps last at most [`SLEEP_SLICE`] each, so an update that wakes nobody (a host
//! store without [`SignalRef::notify`], a kernel that writes the value without `s_sendmsg`) is
//! still seen within a slice. Without a sleeper the wait naps in growing thread sleeps.

use std::thread;
use std::time::{Duration, Instant};

use crossbeam_utils::Backoff;
use thiserror::Error;

use super::{MemoryOrder, SignalRef, SignalSleeper};
use crate::packet::SignalCondition;

/// How long a wait polls before it sleeps: ROCr's `kMaxElapsed` in `InterruptSignal`, "a few
/// times bigger than null kernel latency", so a short dispatch is caught without the cost of
/// an interrupt and a wake-up.
pub const SPIN_BUDGET: Duration = Duration::from_micros(200);

/// The longest single sleep of a wait: bounds how late a wait notices an update that woke
/// nobody. 50 sleeps a second cost well under a millisecond of CPU.
pub const SLEEP_SLICE: Duration = Duration::from_millis(20);

/// First nap of a wait without a sleeper (ROCr's busy-wait signal naps 20 µs each time).
const FIRST_NAP: Duration = Duration::from_micros(20);
/// Longest nap of a wait without a sleeper: the naps double up to this, so a long wait wakes
/// about a thousand times a second (a few ms of CPU per second), at the price of noticing an
/// update up to a millisecond late.
const LONGEST_NAP: Duration = Duration::from_millis(1);

/// `hsa_signal_condition_t`, HSA numbering; compares signed 64-bit values.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Condition {
    /// `value == compare`.
    Eq = 0,
    /// `value != compare`.
    Ne = 1,
    /// `value < compare`.
    Lt = 2,
    /// `value >= compare`.
    Gte = 3,
}

impl Condition {
    /// Whether `value <condition> compare` holds.
    pub const fn holds(self, value: i64, compare: i64) -> bool {
        match self {
            Self::Eq => value == compare,
            Self::Ne => value != compare,
            Self::Lt => value < compare,
            Self::Gte => value >= compare,
        }
    }
}

impl From<Condition> for SignalCondition {
    fn from(condition: Condition) -> Self {
        Self(condition as u32)
    }
}

impl TryFrom<SignalCondition> for Condition {
    type Error = u32;

    /// The condition with this code, or the unknown code.
    fn try_from(condition: SignalCondition) -> Result<Self, u32> {
        match condition {
            SignalCondition::EQ => Ok(Self::Eq),
            SignalCondition::NE => Ok(Self::Ne),
            SignalCondition::LT => Ok(Self::Lt),
            SignalCondition::GTE => Ok(Self::Gte),
            SignalCondition(other) => Err(other),
        }
    }
}

/// Why a wait returned without its condition holding.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum WaitError {
    /// The timeout passed; `last` is the last value observed.
    #[error("signal wait timed out; last value {last}")]
    Timeout {
        /// The last value observed.
        last: i64,
    },
    /// The sleeper failed; `last` is the last value observed.
    #[error("signal wait failed while sleeping ({reason}); last value {last}")]
    Sleep {
        /// The sleeper's error.
        reason: String,
        /// The last value observed.
        last: i64,
    },
}

impl SignalRef {
    /// Wait until `condition(value, compare)` holds and return the value that satisfied it
    /// (loaded with acquire order, as `hsa_signal_wait_scacquire` does), or fail after
    /// `timeout` (`None`: never) with the last value seen.
    ///
    /// Spins for [`SPIN_BUDGET`] (with [`Backoff`], which yields the CPU after a few rounds),
    /// then sleeps: with `sleeper`, in slices of at most [`SLEEP_SLICE`]; without, in thread
    /// sleeps growing from 20 µs to 1 ms. A long wait therefore costs almost no CPU, and
    /// a sleeper makes it wake as soon as the signal's event fires.
    pub fn wait(
        &self,
        condition: Condition,
        compare: i64,
        timeout: Option<Duration>,
        sleeper: Option<&dyn SignalSleeper>,
    ) -> Result<i64, WaitError> {
        let start = Instant::now();
        // A timeout too large to represent is no timeout.
        let deadline = timeout.and_then(|t| start.checked_add(t));
        let spin_end = start + SPIN_BUDGET;
        let backoff = Backoff::new();
        let mut nap = FIRST_NAP;
        loop {
            let last = self.load(MemoryOrder::Acquire);
            if condition.holds(last, compare) {
                return Ok(last);
            }
            let now = Instant::now();
            let remaining = match deadline {
                Some(deadline) if now >= deadline => return Err(WaitError::Timeout { last }),
                Some(deadline) => deadline - now,
                None => Duration::MAX,
            };
            if now < spin_end {
                backoff.snooze();
                continue;
            }
            if let Some(sleeper) = sleeper {
                sleeper
                    .sleep(remaining.min(SLEEP_SLICE))
                    .map_err(|reason| WaitError::Sleep { reason, last })?;
            } else {
                thread::sleep(remaining.min(nap));
                nap = (nap * 2).min(LONGEST_NAP);
            }
        }
    }
}
