//! Barrier packets (aql.md §1.4, §1.5): the conditions a barrier-AND, barrier-OR or AMD
//! barrier-value packet waits for. The processor polls them (host stores to signals ring no
//! doorbell); a waiting barrier blocks the launch of every later packet of its queue.

use aql::{BarrierPacket, BarrierValuePacket, SignalCondition};

use super::device_memory::DeviceMemory;
use super::signal::Signal;
use crate::gpu::vm::MemoryFault;

/// The condition a barrier packet waits for, with what it has observed so far.
#[derive(Clone, Copy, Debug)]
pub(crate) enum BarrierCondition {
    /// Every dependency has been observed at 0. A null handle counts as satisfied. A
    /// dependency once seen at 0 stays satisfied even if it changes again, as gem5's packet
    /// processor treats it (it re-reads only the signals not yet seen at 0); the HSA text
    /// ("observed") allows this, and hardware behaviour beyond it is not documented.
    And {
        /// The dependencies not yet observed at 0.
        pending: [Option<Signal>; 5],
    },
    /// Some dependency is 0. A null handle counts as not satisfied, so a packet with five
    /// null handles waits until its queue is destroyed, as on hardware.
    Or {
        /// The dependencies.
        dependencies: [Option<Signal>; 5],
    },
    /// `(signal.value & mask) cond value`, signed 64-bit. A null signal counts as satisfied.
    Value {
        /// The signal watched.
        signal: Option<Signal>,
        /// The comparand.
        value: i64,
        /// Applied to the signal value first.
        mask: i64,
        /// The comparison (validated when the packet was decoded).
        condition: SignalCondition,
    },
}

impl BarrierCondition {
    /// A barrier-AND packet's condition.
    pub(crate) fn and(packet: &BarrierPacket) -> Self {
        Self::And {
            pending: packet.dep_signal.map(Signal::from_handle),
        }
    }

    /// A barrier-OR packet's condition.
    pub(crate) fn or(packet: &BarrierPacket) -> Self {
        Self::Or {
            dependencies: packet.dep_signal.map(Signal::from_handle),
        }
    }

    /// A barrier-value packet's condition.
    pub(crate) fn value(packet: &BarrierValuePacket) -> Self {
        Self::Value {
            signal: Signal::from_handle(packet.signal),
            value: packet.value,
            mask: packet.mask,
            condition: SignalCondition(packet.cond),
        }
    }

    /// Read the signals involved and say whether the condition holds now. A dependency signal
    /// outside mapped memory is a fault.
    pub(crate) fn holds(&mut self, memory: &mut DeviceMemory) -> Result<bool, MemoryFault> {
        match self {
            Self::And { pending } => {
                for slot in pending.iter_mut() {
                    if let Some(signal) = *slot {
                        if signal.value(memory)? == 0 {
                            *slot = None;
                        }
                    }
                }
                Ok(pending.iter().all(Option::is_none))
            }
            Self::Or { dependencies } => {
                for signal in dependencies.iter().flatten() {
                    if signal.value(memory)? == 0 {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Self::Value {
                signal,
                value,
                mask,
                condition,
            } => {
                let Some(signal) = signal else {
                    return Ok(true);
                };
                let current = signal.value(memory)? & *mask;
                // Conditions are validated at decode; an unknown one never holds.
                Ok(condition.holds(current, *value).unwrap_or(false))
            }
        }
    }
}
