//! `aql`: the HSA Architected Queuing Language as AMD GPUs consume it.
//!
//! - [`packet`]: the 64-byte packets and the bit fields of their headers;
//! - [`queue`]: `amd_queue_t`, the queue descriptor, and the CP's queue-error words;
//! - [`signal`]: the signal object, `amd_signal_t`, atomic operations on it and host waits;
//! - [`ring`]: the producer side of an AQL ring (reserve, write, publish, doorbell);
//! - [`builder`]: packet builders that refuse what the CP would reject.
//!
//! This crate makes no system call; waiting in the kernel is a trait it is handed.

pub mod builder;
pub mod packet;
pub mod queue;
pub mod ring;
pub mod signal;

pub use builder::{
    AqlPacket, DispatchBuilder, DispatchLimits, PacketError, barrier_and, barrier_or,
    barrier_value, validate_dispatch,
};
pub use packet::{
    AmdFormat, AmdVendorPacketHeader, BarrierPacket, BarrierValuePacket, FenceScope, Header,
    KernelDispatchPacket, PacketType, RawPacket, SignalCondition,
};
pub use queue::{AmdQueue, HsaQueue, QueueProperties};
pub use ring::{Doorbell, RingError, RingProducer};
pub use signal::{
    AmdSignal, Condition, MemoryOrder, SignalKind, SignalRef, SignalSleeper, WaitError, init_signal,
};
