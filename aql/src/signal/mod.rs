//! Signals: `amd_signal_t`, the 64-byte signal object whose address is the HSA signal handle
//! (aql.md §3.1, layout per ROCr's `amd_hsa_signal.h`), and what the host does with one:
//!
//! - [`SignalRef`] (module `view`): atomic operations on a signal the caller mapped, with HSA's
//!   memory orders, its profiling timestamps and its event mailbox; [`init_signal`];
//! - [`SignalRef::wait`] (module `wait`): host waits on a condition that spin for a short,
//!   documented budget and then sleep in the kernel through a [`SignalSleeper`].

mod sleeper;
mod view;
mod wait;

pub use sleeper::SignalSleeper;
pub use view::{MemoryOrder, SignalRef, init_signal};
pub use wait::{Condition, SLEEP_SLICE, SPIN_BUDGET, WaitError};

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// `AMD_SIGNAL_ALIGN_BYTES`: signals are 64-byte aligned so one never crosses a page.
pub const AMD_SIGNAL_ALIGN_BYTES: usize = 64;

/// Low bits of a signal handle that newer ROCr uses as hints; consumers strip them before
/// dereferencing (aql.md §3.1). aqueduct never sets them.
pub const SIGNAL_HANDLE_HINT_MASK: u64 = 0x3F;

/// `amd_signal_kind_t`.
#[repr(transparent)]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct SignalKind(pub i64);

impl SignalKind {
    /// `AMD_SIGNAL_KIND_INVALID`.
    pub const INVALID: Self = Self(0);
    /// `AMD_SIGNAL_KIND_USER`: a memory signal (the only kind aqueduct creates).
    pub const USER: Self = Self(1);
    /// `AMD_SIGNAL_KIND_DOORBELL`: `value` holds the doorbell pointer.
    pub const DOORBELL: Self = Self(-1);
    /// `AMD_SIGNAL_KIND_LEGACY_DOORBELL`.
    pub const LEGACY_DOORBELL: Self = Self(-2);
}

/// `amd_signal_t`.
#[repr(C, align(64))]
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, FromBytes, IntoBytes, Immutable, KnownLayout,
)]
pub struct AmdSignal {
    /// [`SignalKind`].
    pub kind: i64,
    /// The signal value for USER signals; for doorbell kinds the doorbell pointer (a union in C).
    pub value: i64,
    /// Address of the KFD event-page slot to write `event_id` to after an update, or 0.
    pub event_mailbox_ptr: u64,
    /// KFD event id written to the mailbox.
    pub event_id: u32,
    /// Must be 0.
    pub reserved1: u32,
    /// Start timestamp written by the CP when the queue profiles (GPU ticks).
    pub start_ts: u64,
    /// End timestamp written by the CP when the queue profiles.
    pub end_ts: u64,
    /// For doorbell kinds: the owning `amd_queue_t` (a union with `reserved2` in C).
    pub queue_ptr: u64,
    /// Must be 0.
    pub reserved3: [u32; 2],
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_is_one_aligned_cache_line() {
        assert_eq!(size_of::<AmdSignal>(), 64);
        assert_eq!(align_of::<AmdSignal>(), AMD_SIGNAL_ALIGN_BYTES);
    }
}
