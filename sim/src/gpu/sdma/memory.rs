//! The copy engine's view of device memory: bulk copies and fills, and the naturally aligned
//! atomic words its other packets use, every access translated through the queue's
//! [`GpuVm`] (the engine's UTCL2 path). An address outside a mapping, or a write to a
//! read-only one, is a [`MemoryFault`] at the first byte refused; bytes before it have been
//! copied, as on hardware, where a faulting copy stops part-way.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::gpu::vm::{Access, FaultKind, GpuVm, MemoryFault, SpanCache};

/// Mappings kept translated (ring, rptr/wptr page, source, destination, a signal or two).
const CACHED_SPANS: usize = 8;

/// Device memory as one SDMA queue reaches it.
pub(crate) struct EngineMemory {
    vm: Arc<dyn GpuVm>,
    spans: SpanCache,
}

impl EngineMemory {
    pub(crate) fn new(vm: Arc<dyn GpuVm>) -> Self {
        let spans = SpanCache::new(&*vm, CACHED_SPANS);
        Self { vm, spans }
    }

    /// The host address of `va` and how many bytes from it on stay inside its mapping.
    fn host_run(&mut self, va: u64, access: Access) -> Result<(*mut u8, u64), MemoryFault> {
        self.spans.refresh(&*self.vm);
        let span = self.spans.span(&*self.vm, va, 1, access)?;
        Ok((span.host_address(va), span.va_end - va))
    }

    /// The host address of the naturally aligned word of `size` bytes at `va` (aligned down:
    /// the engine's address fields drop the low bits).
    fn host_word(&mut self, va: u64, size: u64, access: Access) -> Result<*mut u8, MemoryFault> {
        let va = va & !(size - 1);
        self.spans.refresh(&*self.vm);
        let host = self
            .spans
            .span(&*self.vm, va, size, access)?
            .host_address(va);
        if host.align_offset(size as usize) != 0 {
            // Only a foreign GpuVm that breaks GPU address = host address gets here.
            return Err(MemoryFault {
                va,
                access,
                kind: FaultKind::NotPresent,
            });
        }
        Ok(host)
    }

    pub(crate) fn load_u32(&mut self, va: u64) -> Result<u32, MemoryFault> {
        let host = self.host_word(va, 4, Access::Read)?;
        // SAFETY: `host` is 4-aligned inside a live readable span (cached in `self` until
        // this call returns); device memory is only accessed atomically or through the
        // bulk paths below, as the HostSpan contract requires.
        Ok(unsafe { AtomicU32::from_ptr(host.cast()) }.load(Ordering::Acquire))
    }

    pub(crate) fn store_u32(&mut self, va: u64, value: u32) -> Result<(), MemoryFault> {
        let host = self.host_word(va, 4, Access::Write)?;
        // SAFETY: as in `load_u32`, in a writable span.
        unsafe { AtomicU32::from_ptr(host.cast()) }.store(value, Ordering::Release);
        Ok(())
    }

    pub(crate) fn load_u64(&mut self, va: u64) -> Result<u64, MemoryFault> {
        let host = self.host_word(va, 8, Access::Read)?;
        // SAFETY: as in `load_u32`, for an 8-aligned word.
        Ok(unsafe { AtomicU64::from_ptr(host.cast()) }.load(Ordering::Acquire))
    }

    pub(crate) fn store_u64(&mut self, va: u64, value: u64) -> Result<(), MemoryFault> {
        let host = self.host_word(va, 8, Access::Write)?;
        // SAFETY: as in `load_u32`, for an 8-aligned word in a writable span.
        unsafe { AtomicU64::from_ptr(host.cast()) }.store(value, Ordering::Release);
        Ok(())
    }

    /// Atomically replace the word at `va` (32 or 64 bits) by `update(old)` unless it returns
    /// `None`; returns the old value.
    pub(crate) fn update(
        &mut self,
        va: u64,
        wide: bool,
        mut update: impl FnMut(u64) -> Option<u64>,
    ) -> Result<u64, MemoryFault> {
        if wide {
            let host = self.host_word(va, 8, Access::Write)?;
            // SAFETY: as in `store_u64`.
            let word = unsafe { AtomicU64::from_ptr(host.cast()) };
            Ok(word
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, update)
                .unwrap_or_else(|old| old))
        } else {
            let host = self.host_word(va, 4, Access::Write)?;
            // SAFETY: as in `store_u32`.
            let word = unsafe { AtomicU32::from_ptr(host.cast()) };
            let old = word
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                    update(u64::from(old)).map(|new| new as u32)
                })
                .unwrap_or_else(|old| old);
            Ok(u64::from(old))
        }
    }

    /// Copy up to `len` bytes from `src` to `dst`, stopping at the first mapping boundary of
    /// either side; returns the bytes copied (at least 1 unless `len` is 0).
    pub(crate) fn copy_run(&mut self, src: u64, dst: u64, len: u64) -> Result<u64, MemoryFault> {
        if len == 0 {
            return Ok(0);
        }
        let (from, src_room) = self.host_run(src, Access::Read)?;
        let (to, dst_room) = self.host_run(dst, Access::Write)?;
        let n = len.min(src_room).min(dst_room);
        // SAFETY: `[from, from + n)` lies inside a readable span and `[to, to + n)` inside a
        // writable one; both stay alive while their spans are cached in `self` (until the
        // next translation, after this copy). `ptr::copy` is a memmove, so overlapping
        // source and destination (one buffer) are handled. The bytes are plain data with no
        // validity invariant; accesses by the host or by waves to the same bytes during the
        // copy are a race of the program's, as they are on hardware, and at worst leave any
        // mix of old and new bytes (the simulator never holds a reference to device memory).
        unsafe { std::ptr::copy(from, to, n as usize) };
        Ok(n)
    }

    /// Fill up to `len` bytes from `dst` with `pattern` (`unit` bytes of it repeated; `dst`
    /// aligned to the unit), stopping at the mapping boundary; returns the bytes written.
    pub(crate) fn fill_run(
        &mut self,
        dst: u64,
        pattern: u32,
        unit: u64,
        len: u64,
    ) -> Result<u64, MemoryFault> {
        if len == 0 {
            return Ok(0);
        }
        let (to, room) = self.host_run(dst, Access::Write)?;
        let n = len.min(room);
        let bytes = pattern.to_le_bytes();
        // SAFETY: `[to, to + n)` lies inside a writable span alive while cached in `self`;
        // plain byte stores of data without invariants (see `copy_run` on races).
        let out = unsafe { std::slice::from_raw_parts_mut(to, n as usize) };
        if unit == 1 || bytes.iter().all(|&b| b == bytes[0]) {
            out.fill(bytes[0]);
        } else {
            for (i, byte) in out.iter_mut().enumerate() {
                *byte = bytes[i % unit as usize];
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::host_vm::HostVm;

    #[test]
    fn copies_stop_at_a_mapping_boundary_and_fault_past_it() {
        let vm = Arc::new(HostVm::new());
        let a = vm.map(4096, 4096, true, false);
        let b = vm.map(8192, 4096, true, false);
        a.fill(7);
        let mut mem = EngineMemory::new(vm.clone());
        assert_eq!(mem.copy_run(a.va(), b.va(), 8192).unwrap(), 4096);
        assert_eq!(b.to_vec()[..4096], vec![7u8; 4096][..]);
        let fault = mem.copy_run(a.va() + 4096, b.va(), 1).unwrap_err();
        assert_eq!(fault.va, a.va() + 4096);
        assert_eq!(fault.kind, FaultKind::NotPresent);
    }

    #[test]
    fn fills_repeat_the_unit_and_refuse_read_only_memory() {
        let vm = Arc::new(HostVm::new());
        let a = vm.map(64, 64, true, false);
        let mut mem = EngineMemory::new(vm.clone());
        assert_eq!(mem.fill_run(a.va(), 0x0403_0201, 4, 8).unwrap(), 8);
        assert_eq!(a.to_vec()[..9], [1, 2, 3, 4, 1, 2, 3, 4, 0]);
        let ro = vm.map(64, 64, false, false);
        let fault = mem.fill_run(ro.va(), 0, 4, 4).unwrap_err();
        assert_eq!(fault.kind, FaultKind::ReadOnly);
    }
}
