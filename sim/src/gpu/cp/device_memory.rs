//! The command processor's view of device memory: naturally aligned atomic loads, stores and
//! read-modify-writes at GPU virtual addresses, each translated through the queue's [`GpuVm`].
//!
//! Everything the CP touches (ring slots, the read and write indices, `amd_queue_t`, signals,
//! event mailboxes) is shared with the host and with running waves, so every access is atomic.
//! An address outside a mapping, or a write to a read-only one, is a [`MemoryFault`] for the
//! caller to report, never an access to host memory the GPU was not given.
//!
//! Alignment: the CP issues naturally aligned requests. Its address registers drop the low bits
//! (the MQD's `CP_HQD_PQ_RPTR_REPORT_ADDR` and `WPTR_POLL_ADDR` fields start at bit 2 and 3, and
//! signal handles are masked to 64 bytes before use), so an address that is not a multiple of
//! the access size is aligned down here rather than turned into a misaligned host atomic.
//! Whether the firmware does the same for every field it reads is not documented.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU16, AtomicU32, AtomicU64, Ordering};

use crate::gpu::vm::{Access, FaultKind, GpuVm, HostSpan, MemoryFault, SpanCache};

/// How many translated mappings the CP keeps at once (ring, queue descriptor, a few signals).
const CACHED_SPANS: usize = 8;

/// Atomic access to one process' GPU virtual memory, with a small translation cache (the CP's
/// UTCL2 entries). Owned by one processor thread.
pub(crate) struct DeviceMemory {
    vm: Arc<dyn GpuVm>,
    spans: SpanCache,
}

impl std::fmt::Debug for DeviceMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceMemory")
            .field("spans", &self.spans)
            .finish_non_exhaustive()
    }
}

/// Types the CP accesses atomically.
trait DeviceWord: Copy {
    const SIZE: u64;
}
impl DeviceWord for u16 {
    const SIZE: u64 = 2;
}
impl DeviceWord for u32 {
    const SIZE: u64 = 4;
}
impl DeviceWord for u64 {
    const SIZE: u64 = 8;
}

impl DeviceMemory {
    /// Access `vm`.
    pub(crate) fn new(vm: Arc<dyn GpuVm>) -> Self {
        let spans = SpanCache::new(&*vm, CACHED_SPANS);
        Self { vm, spans }
    }

    /// The VM itself (handed to the shader core).
    pub(crate) fn vm(&self) -> &dyn GpuVm {
        &*self.vm
    }

    /// Check that `[va, va + len)` is mapped for `access`, without touching it.
    pub(crate) fn probe(&mut self, va: u64, len: u64, access: Access) -> Result<(), MemoryFault> {
        self.span(va, len, access).map(|_| ())
    }

    /// The mapping that holds `[va, va + len)` and permits `access`. Mappings are re-checked
    /// on every access: the host may unmap memory the CP is polling at any time.
    fn span(&mut self, va: u64, len: u64, access: Access) -> Result<&HostSpan, MemoryFault> {
        self.spans.refresh(&*self.vm);
        self.spans.span(&*self.vm, va, len, access)
    }

    /// The host address of the naturally aligned `T` at (aligned-down) `va`, checked for
    /// `access`. The span that backs it stays in the cache until the next call on `self`.
    fn host_word<T: DeviceWord>(&mut self, va: u64, access: Access) -> Result<*mut T, MemoryFault> {
        let va = va & !(T::SIZE - 1);
        let host = self.span(va, T::SIZE, access)?.host_address(va);
        if host.align_offset(T::SIZE as usize) != 0 {
            // The simulator maps GPU address = host address, so this cannot happen with its own
            // VM; a foreign GpuVm that breaks the rule gets a fault instead of a misaligned
            // host atomic.
            return Err(MemoryFault {
                va,
                access,
                kind: FaultKind::NotPresent,
            });
        }
        Ok(host.cast())
    }

    /// Atomic 16-bit store.
    pub(crate) fn store_u16(
        &mut self,
        va: u64,
        value: u16,
        order: Ordering,
    ) -> Result<(), MemoryFault> {
        let host = self.host_word::<u16>(va, Access::Write)?;
        // SAFETY: `host` is 2-byte aligned (checked by host_word) and lies inside a writable
        // span whose backing memory stays alive while the span is cached in `self`, which is
        // at least until this call returns. Device memory is only ever accessed atomically or
        // volatilely by the simulator, as the HostSpan contract requires.
        unsafe { AtomicU16::from_ptr(host) }.store(value, order);
        Ok(())
    }

    /// Atomic 32-bit store.
    pub(crate) fn store_u32(
        &mut self,
        va: u64,
        value: u32,
        order: Ordering,
    ) -> Result<(), MemoryFault> {
        let host = self.host_word::<u32>(va, Access::Write)?;
        // SAFETY: as in `store_u16`, for a 4-byte aligned word in a writable span.
        unsafe { AtomicU32::from_ptr(host) }.store(value, order);
        Ok(())
    }

    /// Atomic 32-bit load.
    pub(crate) fn load_u32(&mut self, va: u64, order: Ordering) -> Result<u32, MemoryFault> {
        let host = self.host_word::<u32>(va, Access::Read)?;
        // SAFETY: as in `store_u16`, for a 4-byte aligned word in a readable span.
        Ok(unsafe { AtomicU32::from_ptr(host) }.load(order))
    }

    /// Atomic 64-bit load.
    pub(crate) fn load_u64(&mut self, va: u64, order: Ordering) -> Result<u64, MemoryFault> {
        let host = self.host_word::<u64>(va, Access::Read)?;
        // SAFETY: as in `store_u16`, for an 8-byte aligned word in a readable span.
        Ok(unsafe { AtomicU64::from_ptr(host) }.load(order))
    }

    /// Atomic 64-bit signed load (signal values).
    pub(crate) fn load_i64(&mut self, va: u64, order: Ordering) -> Result<i64, MemoryFault> {
        self.load_u64(va, order).map(|v| v as i64)
    }

    /// Atomic 64-bit store.
    pub(crate) fn store_u64(
        &mut self,
        va: u64,
        value: u64,
        order: Ordering,
    ) -> Result<(), MemoryFault> {
        let host = self.host_word::<u64>(va, Access::Write)?;
        // SAFETY: as in `store_u16`, for an 8-byte aligned word in a writable span.
        unsafe { AtomicU64::from_ptr(host) }.store(value, order);
        Ok(())
    }

    /// Atomic 64-bit signed store (signal values).
    pub(crate) fn store_i64(
        &mut self,
        va: u64,
        value: i64,
        order: Ordering,
    ) -> Result<(), MemoryFault> {
        self.store_u64(va, value as u64, order)
    }

    /// Atomic 64-bit signed subtraction; returns the previous value.
    pub(crate) fn fetch_sub_i64(
        &mut self,
        va: u64,
        value: i64,
        order: Ordering,
    ) -> Result<i64, MemoryFault> {
        let host = self.host_word::<u64>(va, Access::Write)?;
        // SAFETY: as in `store_u16`, for an 8-byte aligned word in a writable span; AtomicI64
        // has the same size and alignment as u64.
        Ok(unsafe { AtomicI64::from_ptr(host.cast()) }.fetch_sub(value, order))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::host_vm::HostVm;

    #[test]
    fn words_round_trip_and_sub_returns_the_old_value() {
        let vm = Arc::new(HostVm::new());
        let buffer = vm.map(32, 8, true, false);
        let base = buffer.va();
        let mut mem = DeviceMemory::new(vm.clone());
        mem.store_u64(base + 8, 0x1122_3344_5566_7788, Ordering::Release)
            .unwrap();
        assert_eq!(
            buffer.atomic_u64(8).load(Ordering::Relaxed),
            0x1122_3344_5566_7788
        );
        assert_eq!(
            mem.load_u32(base + 12, Ordering::Acquire).unwrap(),
            0x1122_3344
        );
        mem.store_u16(base + 8, 1, Ordering::Release).unwrap();
        assert_eq!(
            buffer.atomic_u64(8).load(Ordering::Relaxed),
            0x1122_3344_5566_0001
        );
        mem.store_i64(base, 5, Ordering::Relaxed).unwrap();
        assert_eq!(mem.fetch_sub_i64(base, 1, Ordering::AcqRel).unwrap(), 5);
        assert_eq!(mem.load_i64(base, Ordering::Relaxed).unwrap(), 4);
    }

    #[test]
    fn unaligned_addresses_are_aligned_down() {
        let vm = Arc::new(HostVm::new());
        let buffer = vm.map(16, 8, true, false);
        let mut mem = DeviceMemory::new(vm.clone());
        mem.store_u64(buffer.va() + 8 + 3, 7, Ordering::Relaxed)
            .unwrap();
        assert_eq!(buffer.atomic_u64(8).load(Ordering::Relaxed), 7);
    }

    #[test]
    fn outside_or_read_only_is_a_fault() {
        let vm = Arc::new(HostVm::new());
        let base = vm.map(16, 8, false, false).va();
        let mut mem = DeviceMemory::new(vm.clone());
        assert_eq!(mem.load_u64(base + 8, Ordering::Relaxed).unwrap(), 0);
        let fault = mem.store_u64(base, 1, Ordering::Relaxed).unwrap_err();
        assert_eq!(fault.kind, FaultKind::ReadOnly);
        assert_eq!(fault.va, base);
        let fault = mem.load_u64(base + 16, Ordering::Relaxed).unwrap_err();
        assert_eq!(fault.kind, FaultKind::NotPresent);
        assert_eq!(fault.va, base + 16);
        assert!(mem.probe(base, 16, Access::Read).is_ok());
        assert!(mem.probe(base, 17, Access::Read).is_err());
    }

    #[test]
    fn a_span_cached_before_an_unmap_is_not_used_after_it() {
        let vm = Arc::new(HostVm::new());
        let base = vm.map(64, 64, true, false).va();
        let mut mem = DeviceMemory::new(vm.clone());
        mem.store_u64(base, 1, Ordering::Relaxed).unwrap();
        let _held = vm.unmap(base).unwrap();
        let fault = mem.load_u64(base, Ordering::Relaxed).unwrap_err();
        assert_eq!((fault.va, fault.kind), (base, FaultKind::NotPresent));
    }
}
