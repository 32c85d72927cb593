//! The CPU mappings the simulator made for the driver (through `Sys::mmap` on a sim fd), by
//! address: what keeps their memory alive (a GEM object's VMA holds a reference, so a freed BO
//! lives until it is unmapped), which doorbell slice a doorbell write lands in, and how many
//! mappings a process still holds (leak accounting).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::driver::fork_gate::TableRwLock;
use crate::driver::gem::GemObject;
use crate::driver::host_memory::Backing;
use crate::driver::process::DoorbellSlice;

/// What a CPU mapping maps.
#[derive(Clone, Debug)]
pub(crate) enum Mapped {
    /// A BO through the render node (the VMA's reference keeps a freed BO alive).
    Gem { _object: Arc<GemObject> },
    /// A process doorbell slice through `/dev/kfd`.
    Doorbell(Arc<DoorbellSlice>),
    /// The event page, the MMIO page or the CWSR trap pages through `/dev/kfd`.
    Kernel { _memory: Arc<Backing> },
}

#[derive(Clone, Debug)]
struct CpuMapping {
    end: usize,
    pid: i32,
    mapped: Mapped,
    /// Offset into the mapped object of the mapping's first byte.
    offset: usize,
}

/// The registry.
#[derive(Debug, Default)]
pub(crate) struct CpuMappings {
    map: TableRwLock<BTreeMap<usize, CpuMapping>>,
}

/// Cut `[start, end)` out of `map`, returning what was removed (to be dropped by the caller,
/// outside the lock).
fn cut(map: &mut BTreeMap<usize, CpuMapping>, start: usize, end: usize) -> Vec<CpuMapping> {
    let mut removed = Vec::new();
    let overlapping: Vec<usize> = map
        .range(..end)
        .rev()
        .take_while(|(_, m)| m.end > start)
        .map(|(&s, _)| s)
        .collect();
    for s in overlapping {
        let Some(m) = map.remove(&s) else {
            continue;
        };
        if s < start {
            let mut head = m.clone();
            head.end = start;
            map.insert(s, head);
        }
        if m.end > end {
            let mut tail = m.clone();
            tail.offset += end - s;
            map.insert(end, tail);
        }
        removed.push(m);
    }
    removed
}

impl CpuMappings {
    /// Record a mapping of `[start, start + len)` made by `pid` (replacing whatever the
    /// simulator had recorded there: a `MAP_FIXED` mapping replaces the old one).
    pub(crate) fn insert(&self, start: usize, len: usize, pid: i32, mapped: Mapped) {
        let end = start.saturating_add(len);
        let removed = {
            let mut map = self.map.write();
            let removed = cut(&mut map, start, end);
            map.insert(
                start,
                CpuMapping {
                    end,
                    pid,
                    mapped,
                    offset: 0,
                },
            );
            removed
        };
        drop(removed);
    }

    /// `[start, start + len)` was unmapped.
    pub(crate) fn remove(&self, start: usize, len: usize) {
        let removed = cut(&mut self.map.write(), start, start.saturating_add(len));
        drop(removed);
    }

    /// The doorbell slice and byte offset of a doorbell at `address`, if it is inside a
    /// doorbell mapping.
    pub(crate) fn doorbell_at(&self, address: usize) -> Option<(Arc<DoorbellSlice>, usize)> {
        let map = self.map.read();
        let (&start, m) = map.range(..=address).next_back()?;
        if address >= m.end {
            return None;
        }
        match &m.mapped {
            Mapped::Doorbell(slice) => Some((slice.clone(), m.offset + address - start)),
            _ => None,
        }
    }

    /// Mappings held by `pid` (`None`: all).
    pub(crate) fn count(&self, pid: Option<i32>) -> u64 {
        self.map
            .read()
            .values()
            .filter(|m| pid.is_none_or(|p| m.pid == p))
            .count() as u64
    }

    /// Forget everything (machine teardown); returned to be dropped outside the lock.
    pub(crate) fn clear(&self) -> Vec<Mapped> {
        std::mem::take(&mut *self.map.write())
            .into_values()
            .map(|m| m.mapped)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::host_memory::MemoryFile;

    #[test]
    fn partial_unmaps_split_mappings() {
        let memory = MemoryFile::new().unwrap();
        let page = memory.allocate(4 * 4096, None).unwrap();
        let maps = CpuMappings::default();
        maps.insert(
            0x10000,
            0x4000,
            1,
            Mapped::Kernel {
                _memory: page.clone(),
            },
        );
        assert_eq!(maps.count(None), 1);
        maps.remove(0x11000, 0x1000);
        assert_eq!(maps.count(Some(1)), 2);
        assert_eq!(maps.count(Some(2)), 0);
        // MAP_FIXED over the tail replaces it.
        maps.insert(
            0x12000,
            0x2000,
            2,
            Mapped::Kernel {
                _memory: page.clone(),
            },
        );
        assert_eq!((maps.count(Some(1)), maps.count(Some(2))), (1, 1));
        maps.remove(0, usize::MAX);
        assert_eq!(maps.count(None), 0);
        // Only the test's handle is left.
        assert_eq!(Arc::strong_count(&page), 1);
    }
}
