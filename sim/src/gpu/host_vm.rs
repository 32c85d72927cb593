//! A GPU virtual address space over plain host memory, without the kernel-driver model: for
//! running the command processor or the shader core on their own (tests, benchmarks, research
//! on packets and kernels). As in the simulated machine, a buffer's GPU address is its host
//! address, so the device reads and writes it in place.
//!
//! The bytes are atomics: the host side reads and writes them through [`HostBuffer`] while the
//! device accesses them through [`HostSpan`]s, and neither side ever holds a reference that the
//! other could invalidate.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use crate::gpu::vm::{Access, FaultKind, GpuVm, HostSpan, MemoryFault};

/// The memory of one buffer. It lives as long as any [`HostBuffer`] or [`HostSpan`] holds it.
#[derive(Debug)]
struct Storage {
    bytes: Box<[AtomicU8]>,
}

/// A buffer mapped (or once mapped) into a [`HostVm`]: `len` bytes at GPU address `va`.
#[derive(Clone, Debug)]
pub struct HostBuffer {
    va: u64,
    len: usize,
    storage: Arc<Storage>,
    offset: usize,
    writable: bool,
    executable: bool,
}

impl HostBuffer {
    /// GPU (and host) address of the first byte.
    pub fn va(&self) -> u64 {
        self.va
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty (never: buffers have at least one byte).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn cells(&self, at: usize, len: usize) -> &[AtomicU8] {
        assert!(
            at.checked_add(len).is_some_and(|end| end <= self.len),
            "{len} bytes at offset {at} run past the {}-byte buffer at {:#x}",
            self.len,
            self.va
        );
        &self.storage.bytes[self.offset + at..self.offset + at + len]
    }

    /// Copy `data` into the buffer at byte offset `at` (relaxed byte stores). Panics if the
    /// range runs past the buffer.
    pub fn write(&self, at: usize, data: &[u8]) {
        for (cell, byte) in self.cells(at, data.len()).iter().zip(data) {
            cell.store(*byte, Ordering::Relaxed);
        }
    }

    /// Copy bytes from offset `at` into `out` (relaxed byte loads). Panics if the range runs
    /// past the buffer.
    pub fn read(&self, at: usize, out: &mut [u8]) {
        for (cell, byte) in self.cells(at, out.len()).iter().zip(out) {
            *byte = cell.load(Ordering::Relaxed);
        }
    }

    /// The whole buffer's bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut bytes = vec![0; self.len];
        self.read(0, &mut bytes);
        bytes
    }

    /// Set every byte to `byte`.
    pub fn fill(&self, byte: u8) {
        for cell in self.cells(0, self.len) {
            cell.store(byte, Ordering::Relaxed);
        }
    }

    /// The naturally aligned `T` at byte offset `at`, inside the buffer (both checked).
    fn word<T>(&self, at: usize) -> *mut T {
        let size = size_of::<T>();
        let ptr = self.cells(at, size)[0].as_ptr();
        assert_eq!(
            ptr.align_offset(align_of::<T>()),
            0,
            "offset {at} is not {size}-byte aligned"
        );
        ptr.cast()
    }

    /// Atomic 32-bit word at byte offset `at` (which must be 4-byte aligned).
    pub fn atomic_u32(&self, at: usize) -> &AtomicU32 {
        let ptr = self.word::<u32>(at);
        // SAFETY: `ptr` points at 4 bytes inside `storage` (checked by `cells`), is 4-byte
        // aligned (checked by `word`), and those bytes are only ever accessed atomically (as
        // AtomicU8 here, through spans by the device), which is what `from_ptr` requires; the
        // returned reference borrows `self`, which keeps `storage` alive.
        unsafe { AtomicU32::from_ptr(ptr) }
    }

    /// Atomic 64-bit word at byte offset `at` (which must be 8-byte aligned).
    pub fn atomic_u64(&self, at: usize) -> &AtomicU64 {
        let ptr = self.word::<u64>(at);
        // SAFETY: as in `atomic_u32`, for 8 aligned bytes inside `storage`.
        unsafe { AtomicU64::from_ptr(ptr) }
    }
}

/// A GPU VM whose mappings are [`HostBuffer`]s.
#[derive(Debug, Default)]
pub struct HostVm {
    mappings: RwLock<BTreeMap<u64, HostBuffer>>,
    generation: AtomicU64,
}

impl HostVm {
    /// An empty address space.
    pub fn new() -> Self {
        Self::default()
    }

    /// Map `len` (at least 1) zeroed bytes at a GPU address aligned to `align` (a power of two),
    /// with the given GPU permissions (reads are always allowed).
    pub fn map(&self, len: usize, align: usize, writable: bool, executable: bool) -> HostBuffer {
        assert!(
            align.is_power_of_two(),
            "alignment {align} is not a power of two"
        );
        let len = len.max(1);
        let storage = Arc::new(Storage {
            bytes: (0..len + align).map(|_| AtomicU8::new(0)).collect(),
        });
        let base = storage.bytes.as_ptr() as usize;
        let offset = base.next_multiple_of(align) - base;
        let buffer = HostBuffer {
            va: (base + offset) as u64,
            len,
            storage,
            offset,
            writable,
            executable,
        };
        self.mappings
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(buffer.va, buffer.clone());
        self.generation.fetch_add(1, Ordering::SeqCst);
        buffer
    }

    /// Remove the mapping that starts at `va`; the device faults on it from now on. The buffer
    /// is returned: while it (or a span) is held its memory, and so its address, stays
    /// allocated and cannot be handed to a later mapping.
    pub fn unmap(&self, va: u64) -> Option<HostBuffer> {
        let removed = self
            .mappings
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&va);
        if removed.is_some() {
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        removed
    }

    /// The mapped buffer containing `va`, and the offset of `va` inside it.
    pub fn buffer_at(&self, va: u64) -> Option<(HostBuffer, usize)> {
        let mappings = self.mappings.read().unwrap_or_else(PoisonError::into_inner);
        let (_, buffer) = mappings.range(..=va).next_back()?;
        let offset = usize::try_from(va - buffer.va)
            .ok()
            .filter(|&o| o < buffer.len)?;
        Some((buffer.clone(), offset))
    }
}

impl GpuVm for HostVm {
    fn translate(&self, va: u64, len: u64, access: Access) -> Result<HostSpan, MemoryFault> {
        let mappings = self.mappings.read().unwrap_or_else(PoisonError::into_inner);
        let not_present = |va| MemoryFault {
            va,
            access,
            kind: FaultKind::NotPresent,
        };
        let Some((_, buffer)) = mappings.range(..=va).next_back() else {
            return Err(not_present(va));
        };
        let span = HostSpan {
            va_start: buffer.va,
            va_end: buffer.va + buffer.len as u64,
            host: buffer.storage.bytes[buffer.offset..]
                .as_ptr()
                .cast::<u8>()
                .cast_mut(),
            writable: buffer.writable,
            executable: buffer.executable,
            keep_alive: Arc::clone(&buffer.storage) as Arc<dyn std::any::Any + Send + Sync>,
        };
        if !span.contains(va, len) {
            // The first byte that no mapping covers.
            return Err(not_present(va.max(span.va_end)));
        }
        span.permits(access)
            .map_err(|kind| MemoryFault { va, access, kind })?;
        Ok(span)
    }

    fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_and_host_see_the_same_bytes_and_faults_are_precise() {
        let vm = HostVm::new();
        let buffer = vm.map(100, 4096, true, false);
        assert_eq!(buffer.va() % 4096, 0);
        buffer
            .atomic_u64(8)
            .store(0x1122_3344_5566_7788, Ordering::Relaxed);
        let span = vm.translate(buffer.va() + 8, 8, Access::Write).unwrap();
        assert_eq!(
            span.host_address(buffer.va() + 8) as u64,
            buffer.va() + 8,
            "GPU VA = host address"
        );
        let mut bytes = [0u8; 2];
        buffer.read(8, &mut bytes);
        assert_eq!(bytes, [0x88, 0x77]);
        // Past the end: the first byte not covered. Execute is refused; so are writes to a
        // read-only buffer.
        let fault = vm.translate(buffer.va() + 96, 8, Access::Read).unwrap_err();
        assert_eq!(
            (fault.va, fault.kind),
            (buffer.va() + 100, FaultKind::NotPresent)
        );
        assert_eq!(
            vm.translate(buffer.va(), 4, Access::Execute)
                .unwrap_err()
                .kind,
            FaultKind::NoExecute
        );
        let read_only = vm.map(8, 8, false, true);
        assert_eq!(
            vm.translate(read_only.va(), 4, Access::Write)
                .unwrap_err()
                .kind,
            FaultKind::ReadOnly
        );
        assert_eq!(vm.buffer_at(buffer.va() + 99).map(|(_, o)| o), Some(99));
        assert!(vm.buffer_at(buffer.va() + 100).is_none());
    }

    #[test]
    fn unmapped_buffers_fault_and_keep_their_address_while_held() {
        let vm = HostVm::new();
        let buffer = vm.map(64, 64, true, false);
        let before = vm.generation();
        let held = vm.unmap(buffer.va()).unwrap();
        assert!(vm.generation() > before);
        assert!(vm.unmap(buffer.va()).is_none());
        let fault = vm.translate(held.va(), 4, Access::Read).unwrap_err();
        assert_eq!((fault.va, fault.kind), (held.va(), FaultKind::NotPresent));
        // While `held` lives no new mapping can be placed at its address.
        for _ in 0..64 {
            assert_ne!(vm.map(64, 64, true, false).va(), held.va());
        }
    }
}
