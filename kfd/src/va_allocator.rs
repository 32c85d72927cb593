//! Bookkeeping of GPU virtual address ranges: which parts of the reserved address space are
//! free, first-fit aligned allocation, and coalescing on free. Pure arithmetic; the address
//! space itself (the reservations) is [`crate::address_space`].

use std::collections::BTreeMap;

/// Why a free was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VaFreeError {
    /// No allocation starts at this address.
    #[error("no allocation starts at {0:#x}")]
    NotAllocated(u64),
}

/// Free and allocated ranges of a set of donated address ranges. Ranges are half-open
/// `[start, end)`.
#[derive(Clone, Debug, Default)]
pub struct VaAllocator {
    /// Free ranges by start; never adjacent (coalesced) and never overlapping.
    free: BTreeMap<u64, u64>,
    /// Allocated ranges by start.
    allocated: BTreeMap<u64, u64>,
    /// Donated ranges by start.
    donated: BTreeMap<u64, u64>,
}

impl VaAllocator {
    /// An allocator with nothing to hand out.
    pub fn new() -> Self {
        Self::default()
    }

    /// Donate `[start, end)`, which must not overlap anything donated before.
    pub fn donate(&mut self, start: u64, end: u64) {
        debug_assert!(start < end);
        debug_assert!(
            self.donated
                .range(..end)
                .next_back()
                .is_none_or(|(_, &e)| e <= start)
        );
        self.donated.insert(start, end);
        self.insert_free(start, end);
    }

    /// Take back a donated range that is entirely free; returns whether it was.
    pub fn withdraw(&mut self, start: u64) -> bool {
        let Some(&end) = self.donated.get(&start) else {
            return false;
        };
        // A wholly free donated range is one free range, or part of a bigger free range when
        // neighbouring donations are free too.
        let Some((&free_start, &free_end)) = self.free.range(..=start).next_back() else {
            return false;
        };
        if free_start > start || free_end < end {
            return false;
        }
        self.free.remove(&free_start);
        if free_start < start {
            self.free.insert(free_start, start);
        }
        if end < free_end {
            self.free.insert(end, free_end);
        }
        self.donated.remove(&start);
        true
    }

    /// The donated range containing `address`.
    pub fn donation_of(&self, address: u64) -> Option<(u64, u64)> {
        self.donated
            .range(..=address)
            .next_back()
            .filter(|&(_, &end)| address < end)
            .map(|(&start, &end)| (start, end))
    }

    /// Allocate `size` bytes at an address that is a multiple of `align` (a power of two);
    /// first fit by address. `None` when nothing fits.
    pub fn allocate(&mut self, size: u64, align: u64) -> Option<u64> {
        debug_assert!(align.is_power_of_two() && size > 0);
        let (free_start, free_end, start) = self.free.iter().find_map(|(&fs, &fe)| {
            let start = fs.checked_next_multiple_of(align)?;
            let end = start.checked_add(size)?;
            (end <= fe).then_some((fs, fe, start))
        })?;
        let end = start + size;
        self.free.remove(&free_start);
        if free_start < start {
            self.free.insert(free_start, start);
        }
        if end < free_end {
            self.free.insert(end, free_end);
        }
        self.allocated.insert(start, end);
        Some(start)
    }

    /// Return the allocation starting at `start`; returns its size.
    pub fn free(&mut self, start: u64) -> Result<u64, VaFreeError> {
        let end = self
            .allocated
            .remove(&start)
            .ok_or(VaFreeError::NotAllocated(start))?;
        self.insert_free(start, end);
        Ok(end - start)
    }

    /// Number of live allocations.
    pub fn allocation_count(&self) -> usize {
        self.allocated.len()
    }

    /// Free bytes across all donated ranges.
    pub fn free_bytes(&self) -> u64 {
        self.free.iter().map(|(s, e)| e - s).sum()
    }

    /// The donated ranges.
    pub fn donations(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.donated.iter().map(|(&s, &e)| (s, e))
    }

    fn insert_free(&mut self, mut start: u64, mut end: u64) {
        if let Some((&prev_start, &prev_end)) = self.free.range(..start).next_back() {
            debug_assert!(prev_end <= start, "double free or overlap");
            if prev_end == start {
                self.free.remove(&prev_start);
                start = prev_start;
            }
        }
        if let Some(&next_end) = self.free.get(&end) {
            self.free.remove(&end);
            end = next_end;
        }
        self.free.insert(start, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_first_fit_without_overlap() {
        let mut va = VaAllocator::new();
        va.donate(0x1000, 0x10_0000);
        let a = va.allocate(0x1000, 0x1000).unwrap();
        let b = va.allocate(0x3000, 0x4000).unwrap();
        let c = va.allocate(0x1000, 0x1000).unwrap();
        assert_eq!(a, 0x1000);
        assert_eq!(b, 0x4000);
        assert_eq!(c, 0x2000, "the gap before b is used first");
        assert_eq!(va.allocation_count(), 3);
        assert_eq!(va.free_bytes(), 0x10_0000 - 0x1000 - 0x5000);
    }

    #[test]
    fn free_coalesces_and_everything_comes_back() {
        let mut va = VaAllocator::new();
        va.donate(0x10000, 0x20000);
        let blocks: Vec<u64> = (0..16)
            .map(|_| va.allocate(0x1000, 0x1000).unwrap())
            .collect();
        assert!(va.allocate(1, 1).is_none());
        for (i, &b) in blocks.iter().enumerate() {
            if i % 2 == 0 {
                assert_eq!(va.free(b), Ok(0x1000));
            }
        }
        assert!(
            va.allocate(0x2000, 0x1000).is_none(),
            "no two free pages are adjacent"
        );
        for (i, &b) in blocks.iter().enumerate() {
            if i % 2 == 1 {
                va.free(b).unwrap();
            }
        }
        assert_eq!(va.allocation_count(), 0);
        assert_eq!(va.free_bytes(), 0x10000);
        assert_eq!(va.allocate(0x10000, 0x10000), Some(0x10000));
    }

    #[test]
    fn double_free_is_refused() {
        let mut va = VaAllocator::new();
        va.donate(0x1000, 0x3000);
        let a = va.allocate(0x1000, 0x1000).unwrap();
        va.free(a).unwrap();
        assert_eq!(va.free(a), Err(VaFreeError::NotAllocated(a)));
        assert_eq!(va.free(0x9999), Err(VaFreeError::NotAllocated(0x9999)));
    }

    #[test]
    fn withdraw_only_wholly_free_donations() {
        let mut va = VaAllocator::new();
        va.donate(0x10000, 0x20000);
        va.donate(0x20000, 0x30000);
        assert_eq!(va.donation_of(0x20000), Some((0x20000, 0x30000)));
        assert_eq!(va.donation_of(0x30000), None);
        let a = va.allocate(0x1000, 0x1000).unwrap();
        assert_eq!(a, 0x10000);
        assert!(!va.withdraw(0x10000));
        assert!(
            va.withdraw(0x20000),
            "adjacent free donations coalesce but can still leave"
        );
        assert_eq!(va.free_bytes(), 0xF000);
        assert!(va.allocate(0x10000, 0x1000).is_none());
        va.free(a).unwrap();
        assert!(va.withdraw(0x10000));
        assert_eq!(va.free_bytes(), 0);
        assert_eq!(va.donations().count(), 0);
    }

    #[test]
    fn huge_alignments_and_sizes_do_not_overflow() {
        let mut va = VaAllocator::new();
        va.donate(u64::MAX - 0x10000, u64::MAX);
        assert!(va.allocate(0x1000, 1 << 63).is_none());
        assert!(va.allocate(u64::MAX, 0x1000).is_none());
        assert!(va.allocate(0x1000, 0x1000).is_some());
    }
}
