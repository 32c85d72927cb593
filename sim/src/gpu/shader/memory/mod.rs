//! Device memory as a wave sees it: every access is translated through the GPU page table
//! ([`GpuVm`]); translated spans are cached until the VM's generation changes. An access
//! outside the mappings is a [`MemoryFault`] with the first faulting address.

mod host;

use crate::gpu::vm::{Access, FaultKind, GpuVm, HostSpan, MemoryFault, SpanCache};

/// Spans kept per cache (most recently used first).
const CACHE_SPANS: usize = 16;

/// A worker's view of device memory with its span cache.
pub struct DeviceMemory<'a> {
    vm: &'a dyn GpuVm,
    spans: SpanCache,
}

impl std::fmt::Debug for DeviceMemory<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceMemory")
            .field("spans", &self.spans.len())
            .finish()
    }
}

impl<'a> DeviceMemory<'a> {
    /// A view of `vm` with an empty cache.
    pub fn new(vm: &'a dyn GpuVm) -> Self {
        Self {
            vm,
            spans: SpanCache::new(vm, CACHE_SPANS),
        }
    }

    /// The VM.
    pub fn vm(&self) -> &'a dyn GpuVm {
        self.vm
    }

    /// Drop cached spans if mappings changed since they were translated. Called once per
    /// memory instruction.
    #[inline]
    pub fn refresh(&mut self) {
        self.spans.refresh(self.vm);
    }

    /// The span holding `[va, va + len)` with `access` permitted.
    fn span(&mut self, va: u64, len: u64, access: Access) -> Result<&HostSpan, MemoryFault> {
        self.spans.span(self.vm, va, len, access)
    }

    /// Read `out.len()` bytes at `va`.
    pub fn read(&mut self, va: u64, out: &mut [u8]) -> Result<(), MemoryFault> {
        let len = out.len() as u64;
        match self.span(va, len, Access::Read) {
            Ok(span) => host::load(span, va, out).ok_or(MemoryFault {
                va,
                access: Access::Read,
                kind: FaultKind::NotPresent,
            }),
            Err(_) if len > 1 => {
                // The range may straddle two mappings: go byte by byte to find the first
                // faulting byte (or succeed).
                for (i, b) in out.iter_mut().enumerate() {
                    let a = va + i as u64;
                    let span = self.span(a, 1, Access::Read)?;
                    let mut one = [0u8];
                    host::load(span, a, &mut one).ok_or(MemoryFault {
                        va: a,
                        access: Access::Read,
                        kind: FaultKind::NotPresent,
                    })?;
                    *b = one[0];
                }
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Write `data` at `va`.
    pub fn write(&mut self, va: u64, data: &[u8]) -> Result<(), MemoryFault> {
        let len = data.len() as u64;
        match self.span(va, len, Access::Write) {
            Ok(span) => host::store(span, va, data).ok_or(MemoryFault {
                va,
                access: Access::Write,
                kind: FaultKind::NotPresent,
            }),
            Err(_) if len > 1 => {
                // Check every byte first so that a faulting store writes nothing.
                for i in 0..len {
                    self.span(va + i, 1, Access::Write)?;
                }
                for (i, b) in data.iter().enumerate() {
                    let a = va + i as u64;
                    let span = self.span(a, 1, Access::Write)?;
                    host::store(span, a, std::slice::from_ref(b)).ok_or(MemoryFault {
                        va: a,
                        access: Access::Write,
                        kind: FaultKind::NotPresent,
                    })?;
                }
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Read a little-endian dword.
    pub fn read_u32(&mut self, va: u64) -> Result<u32, MemoryFault> {
        let mut b = [0u8; 4];
        self.read(va, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Read `N` consecutive dwords.
    pub fn read_dwords<const N: usize>(&mut self, va: u64) -> Result<[u32; N], MemoryFault> {
        let mut out = [0u32; N];
        let mut b = [0u8; 64];
        let bytes = &mut b[..4 * N];
        self.read(va, bytes)?;
        for (i, v) in out.iter_mut().enumerate() {
            *v = u32::from_le_bytes([
                bytes[4 * i],
                bytes[4 * i + 1],
                bytes[4 * i + 2],
                bytes[4 * i + 3],
            ]);
        }
        Ok(out)
    }

    /// Atomically apply `f` to the dword at `va`; returns the old value. A misaligned atomic
    /// (undefined on hardware) is performed as a plain read-modify-write.
    pub fn rmw32(&mut self, va: u64, f: impl Fn(u32) -> u32) -> Result<u32, MemoryFault> {
        let span = self.span(va, 4, Access::Write)?;
        if let Some(old) = host::rmw32(span, va, &f) {
            return Ok(old);
        }
        let old = self.read_u32(va)?;
        self.write(va, &f(old).to_le_bytes())?;
        Ok(old)
    }

    /// Atomically apply `f` to the qword at `va`; returns the old value.
    pub fn rmw64(&mut self, va: u64, f: impl Fn(u64) -> u64) -> Result<u64, MemoryFault> {
        let span = self.span(va, 8, Access::Write)?;
        if let Some(old) = host::rmw64(span, va, &f) {
            return Ok(old);
        }
        let mut b = [0u8; 8];
        self.read(va, &mut b)?;
        let old = u64::from_le_bytes(b);
        self.write(va, &f(old).to_le_bytes())?;
        Ok(old)
    }

    /// Read code dwords at `va` for the decoder, up to `out.len()` of them, stopping at the end
    /// of the executable mapping. Returns how many were read.
    pub fn fetch_code(span: &HostSpan, va: u64, out: &mut [u32]) -> usize {
        let mut n = 0;
        for (i, w) in out.iter_mut().enumerate() {
            let mut b = [0u8; 4];
            if host::load(span, va + 4 * i as u64, &mut b).is_none() {
                break;
            }
            *w = u32::from_le_bytes(b);
            n += 1;
        }
        n
    }
}
