//! The contract between the simulated GPU's memory system (owned by the kernel-driver model,
//! which maps buffer objects into a per-process, per-GPU virtual address space) and its users,
//! the command processor and the shader core.
//!
//! Every device access goes through [`GpuVm::translate`]: an address outside a mapping, a write
//! to a read-only mapping or an instruction fetch from a non-executable one is a
//! [`MemoryFault`], never an access to host memory that was not mapped for the GPU.

use std::any::Any;
use std::sync::Arc;

/// What the device wants to do with the memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// A load (or the read half of an atomic).
    Read,
    /// A store or an atomic.
    Write,
    /// An instruction fetch.
    Execute,
}

/// Why an access faulted, as `kfd_memory_exception_failure` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// No mapping covers the address.
    NotPresent,
    /// A write to a read-only mapping.
    ReadOnly,
    /// An instruction fetch from a mapping without execute permission.
    NoExecute,
}

/// A device access that the page table refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[error("GPU memory fault at {va:#x} ({kind:?}, {access:?})")]
pub struct MemoryFault {
    /// The first faulting byte address.
    pub va: u64,
    /// What was attempted.
    pub access: Access,
    /// Why it failed.
    pub kind: FaultKind,
}

/// One whole GPU mapping, translated to host memory.
///
/// `host` points at the byte that backs `va_start`, and `[host, host + (va_end - va_start))`
/// stays valid for as long as this span (its `keep_alive`) lives, even if the mapping is removed
/// meanwhile, so a running dispatch can never touch freed host memory. Device accesses through it
/// are racy by nature (the host and other waves use the same memory): use atomics or volatile
/// accesses, never `&`/`&mut` references.
#[derive(Clone)]
pub struct HostSpan {
    /// First GPU address of the mapping.
    pub va_start: u64,
    /// One past the last GPU address of the mapping.
    pub va_end: u64,
    /// Host address backing `va_start`.
    pub host: *mut u8,
    /// Whether the GPU may write.
    pub writable: bool,
    /// Whether the GPU may fetch instructions.
    pub executable: bool,
    /// Keeps the backing memory alive.
    pub keep_alive: Arc<dyn Any + Send + Sync>,
}

// SAFETY: a HostSpan is an address range plus an owner that keeps it alive; all accesses through
// `host` are made with atomic or volatile operations by contract, so sharing it between threads
// is sound.
unsafe impl Send for HostSpan {}
// SAFETY: as above.
unsafe impl Sync for HostSpan {}

impl std::fmt::Debug for HostSpan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostSpan")
            .field(
                "va",
                &format_args!("{:#x}..{:#x}", self.va_start, self.va_end),
            )
            .field("host", &self.host)
            .field("writable", &self.writable)
            .field("executable", &self.executable)
            .finish_non_exhaustive()
    }
}

impl HostSpan {
    /// Whether `[va, va + len)` lies inside this span.
    pub fn contains(&self, va: u64, len: u64) -> bool {
        va >= self.va_start && va.checked_add(len).is_some_and(|end| end <= self.va_end)
    }

    /// Check the span's permissions for `access`.
    pub fn permits(&self, access: Access) -> Result<(), FaultKind> {
        match access {
            Access::Read => Ok(()),
            Access::Write if self.writable => Ok(()),
            Access::Write => Err(FaultKind::ReadOnly),
            Access::Execute if self.executable => Ok(()),
            Access::Execute => Err(FaultKind::NoExecute),
        }
    }

    /// The host address of `va`, which must lie inside the span.
    pub fn host_address(&self, va: u64) -> *mut u8 {
        debug_assert!(self.contains(va, 1));
        self.host.wrapping_add((va - self.va_start) as usize)
    }
}

/// A GPU virtual address space: one process on one GPU.
pub trait GpuVm: Send + Sync {
    /// Translate `[va, va + len)` for `access`. The whole range must lie inside one mapping that
    /// permits the access; the span returned is the entire mapping, so callers may cache it and
    /// check later accesses themselves while [`GpuVm::generation`] is unchanged.
    fn translate(&self, va: u64, len: u64, access: Access) -> Result<HostSpan, MemoryFault>;

    /// A counter bumped whenever a mapping is added or removed; cached spans are stale once it
    /// changes.
    fn generation(&self) -> u64;
}

/// The translations a device engine keeps (its TLB): whole spans of one [`GpuVm`], reused until
/// the VM's generation changes. The command processor and the shader core each keep one per
/// thread; translating through the VM takes its lock, a cached span does not.
#[derive(Debug)]
pub struct SpanCache {
    generation: u64,
    capacity: usize,
    /// Most recently translated first.
    spans: Vec<HostSpan>,
}

impl SpanCache {
    /// An empty cache for `vm`, keeping at most `capacity` spans.
    pub fn new(vm: &dyn GpuVm, capacity: usize) -> Self {
        Self {
            generation: vm.generation(),
            capacity: capacity.max(1),
            spans: Vec::with_capacity(capacity.max(1)),
        }
    }

    /// Forget every span if `vm`'s mappings changed since they were translated.
    #[inline]
    pub fn refresh(&mut self, vm: &dyn GpuVm) {
        let generation = vm.generation();
        if generation != self.generation {
            self.spans.clear();
            self.generation = generation;
        }
    }

    /// The span holding `[va, va + len)` with `access` permitted: a cached one, or a new
    /// translation through `vm` (which then evicts the least recently translated span). Call
    /// [`SpanCache::refresh`] first whenever mappings may have changed.
    pub fn span(
        &mut self,
        vm: &dyn GpuVm,
        va: u64,
        len: u64,
        access: Access,
    ) -> Result<&HostSpan, MemoryFault> {
        if let Some(i) = self.spans.iter().position(|s| s.contains(va, len)) {
            self.spans[i]
                .permits(access)
                .map_err(|kind| MemoryFault { va, access, kind })?;
            return Ok(&self.spans[i]);
        }
        let span = vm.translate(va, len, access)?;
        if self.spans.len() == self.capacity {
            self.spans.pop();
        }
        self.spans.insert(0, span);
        Ok(&self.spans[0])
    }

    /// Spans currently cached.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}
