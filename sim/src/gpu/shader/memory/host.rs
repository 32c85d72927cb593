//! The shader core's only access to host memory: loads, stores and atomics through a
//! [`HostSpan`], with atomic operations so that racing device accesses (other waves, other
//! workgroups, the host) are never undefined behaviour.
//!
//! Every function checks that the range lies inside the span and returns `None` otherwise, so
//! the `unsafe` blocks here rely only on the span's contract: `[host, host + len)` stays valid
//! while the span is alive, and all accesses to it are atomic or volatile.

use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, Ordering};

use crate::gpu::vm::HostSpan;

/// Pointer to `va` in `span` if `[va, va + len)` lies inside it.
fn ptr(span: &HostSpan, va: u64, len: usize) -> Option<*mut u8> {
    span.contains(va, len as u64).then(|| span.host_address(va))
}

/// Read `out.len()` bytes at `va` (natural-width atomic loads when aligned, else bytewise).
pub fn load(span: &HostSpan, va: u64, out: &mut [u8]) -> Option<()> {
    let p = ptr(span, va, out.len())?;
    let aligned = |n: usize| (p as usize) % n == 0;
    match out.len() {
        4 if aligned(4) => {
            // SAFETY: `p` is inside the live span (checked by `ptr`) and 4-aligned, so it is
            // valid for an atomic 4-byte access for the duration of this call.
            let v = unsafe { AtomicU32::from_ptr(p.cast()) }.load(Ordering::Relaxed);
            out.copy_from_slice(&v.to_le_bytes());
        }
        8 if aligned(8) => {
            // SAFETY: as above, 8 bytes, 8-aligned.
            let v = unsafe { AtomicU64::from_ptr(p.cast()) }.load(Ordering::Relaxed);
            out.copy_from_slice(&v.to_le_bytes());
        }
        2 if aligned(2) => {
            // SAFETY: as above, 2 bytes, 2-aligned.
            let v = unsafe { AtomicU16::from_ptr(p.cast()) }.load(Ordering::Relaxed);
            out.copy_from_slice(&v.to_le_bytes());
        }
        n if n % 4 == 0 && aligned(4) => {
            for (i, chunk) in out.chunks_exact_mut(4).enumerate() {
                // SAFETY: `p + 4i` is inside the checked range and 4-aligned.
                let a = unsafe { AtomicU32::from_ptr(p.add(4 * i).cast()) };
                chunk.copy_from_slice(&a.load(Ordering::Relaxed).to_le_bytes());
            }
        }
        _ => {
            for (i, b) in out.iter_mut().enumerate() {
                // SAFETY: `p + i` is inside the checked range; bytes need no alignment.
                *b = unsafe { AtomicU8::from_ptr(p.add(i)) }.load(Ordering::Relaxed);
            }
        }
    }
    Some(())
}

/// Write `data` at `va` (natural-width atomic stores when aligned, else bytewise).
pub fn store(span: &HostSpan, va: u64, data: &[u8]) -> Option<()> {
    let p = ptr(span, va, data.len())?;
    let aligned = |n: usize| (p as usize) % n == 0;
    match data.len() {
        4 if aligned(4) => {
            let v = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
            // SAFETY: `p` is inside the live span and 4-aligned.
            unsafe { AtomicU32::from_ptr(p.cast()) }.store(v, Ordering::Relaxed);
        }
        8 if aligned(8) => {
            let mut b = [0u8; 8];
            b.copy_from_slice(data);
            // SAFETY: `p` is inside the live span and 8-aligned.
            unsafe { AtomicU64::from_ptr(p.cast()) }
                .store(u64::from_le_bytes(b), Ordering::Relaxed);
        }
        2 if aligned(2) => {
            let v = u16::from_le_bytes([data[0], data[1]]);
            // SAFETY: `p` is inside the live span and 2-aligned.
            unsafe { AtomicU16::from_ptr(p.cast()) }.store(v, Ordering::Relaxed);
        }
        n if n % 4 == 0 && aligned(4) => {
            for (i, chunk) in data.chunks_exact(4).enumerate() {
                let v = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                // SAFETY: `p + 4i` is inside the checked range and 4-aligned.
                unsafe { AtomicU32::from_ptr(p.add(4 * i).cast()) }.store(v, Ordering::Relaxed);
            }
        }
        _ => {
            for (i, b) in data.iter().enumerate() {
                // SAFETY: `p + i` is inside the checked range.
                unsafe { AtomicU8::from_ptr(p.add(i)) }.store(*b, Ordering::Relaxed);
            }
        }
    }
    Some(())
}

/// Atomically replace the dword at `va` with `f(old)` and return `old`. `None` if the range is
/// outside the span or `va` is not 4-aligned (the hardware requires naturally aligned
/// atomics).
pub fn rmw32(span: &HostSpan, va: u64, f: impl Fn(u32) -> u32) -> Option<u32> {
    if va % 4 != 0 {
        return None;
    }
    let p = ptr(span, va, 4)?;
    if (p as usize) % 4 != 0 {
        return None;
    }
    // SAFETY: `p` is inside the live span and 4-aligned (checked just above).
    let a = unsafe { AtomicU32::from_ptr(p.cast()) };
    let old = a
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| Some(f(v)))
        .unwrap_or_else(|v| v);
    Some(old)
}

/// 64-bit version of [`rmw32`].
pub fn rmw64(span: &HostSpan, va: u64, f: impl Fn(u64) -> u64) -> Option<u64> {
    if va % 8 != 0 {
        return None;
    }
    let p = ptr(span, va, 8)?;
    if (p as usize) % 8 != 0 {
        return None;
    }
    // SAFETY: `p` is inside the live span and 8-aligned (checked just above).
    let a = unsafe { AtomicU64::from_ptr(p.cast()) };
    let old = a
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| Some(f(v)))
        .unwrap_or_else(|v| v);
    Some(old)
}
