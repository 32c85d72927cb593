//! Acquire and release fences from packet headers (aql.md §1.1, §7.5, §7.8a).
//!
//! On hardware an AGENT acquire invalidates the instruction, scalar and L1 caches and a SYSTEM
//! acquire also L2; a SYSTEM release writes L2 back. The simulator has no caches (every device
//! access is an atomic on host memory), so a fence is a host memory fence: it orders the CP's
//! accesses before and after the packet's active phase with everything the host and the waves
//! did. NONE still costs nothing.

use std::sync::atomic::{Ordering, fence};

use aql::FenceScope;

/// Apply the acquire fence of a packet entering its active phase.
pub(crate) fn acquire(scope: FenceScope) {
    match scope {
        FenceScope::None => {}
        FenceScope::Agent => fence(Ordering::Acquire),
        FenceScope::System => fence(Ordering::SeqCst),
    }
}

/// Apply the release fence of a packet completing, before its completion signal changes.
pub(crate) fn release(scope: FenceScope) {
    match scope {
        FenceScope::None => {}
        FenceScope::Agent => fence(Ordering::Release),
        FenceScope::System => fence(Ordering::SeqCst),
    }
}
