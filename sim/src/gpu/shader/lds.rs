//! The local data share of one workgroup. The waves of a workgroup run on one worker thread
//! (switching at barriers), so LDS is plain memory owned by that thread.
//!
//! Accesses outside the workgroup's allocation read zero and discard writes, as the hardware's
//! LDS range check does.

/// One workgroup's LDS.
#[derive(Debug, Default)]
pub struct Lds {
    bytes: Vec<u8>,
    size: usize,
}

impl Lds {
    /// An LDS of `size` bytes, zeroed (its contents at launch are undefined on hardware).
    pub fn reset(&mut self, size: usize) {
        self.size = size;
        self.bytes.clear();
        self.bytes.resize(size, 0);
    }

    /// Bytes allocated.
    pub fn size(&self) -> usize {
        self.size
    }

    fn range(&self, addr: u32, len: usize) -> Option<std::ops::Range<usize>> {
        let start = addr as usize;
        let end = start.checked_add(len)?;
        (end <= self.size).then_some(start..end)
    }

    /// Read `out.len()` bytes at `addr` (zeros if out of range).
    pub fn read(&self, addr: u32, out: &mut [u8]) {
        match self.range(addr, out.len()) {
            Some(r) => out.copy_from_slice(&self.bytes[r]),
            None => out.fill(0),
        }
    }

    /// Write `data` at `addr` (dropped if out of range).
    pub fn write(&mut self, addr: u32, data: &[u8]) {
        if let Some(r) = self.range(addr, data.len()) {
            self.bytes[r].copy_from_slice(data);
        }
    }

    /// Read a dword.
    pub fn read_u32(&self, addr: u32) -> u32 {
        let mut b = [0u8; 4];
        self.read(addr, &mut b);
        u32::from_le_bytes(b)
    }

    /// Write a dword.
    pub fn write_u32(&mut self, addr: u32, v: u32) {
        self.write(addr, &v.to_le_bytes());
    }

    /// Read a qword.
    pub fn read_u64(&self, addr: u32) -> u64 {
        let mut b = [0u8; 8];
        self.read(addr, &mut b);
        u64::from_le_bytes(b)
    }

    /// Write a qword.
    pub fn write_u64(&mut self, addr: u32, v: u64) {
        self.write(addr, &v.to_le_bytes());
    }

    /// Whether `[addr, addr + len)` is inside the allocation.
    pub fn in_range(&self, addr: u32, len: usize) -> bool {
        self.range(addr, len).is_some()
    }
}
