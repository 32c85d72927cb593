//! The DRM GEM object behind every KFD buffer object, as far as the render node sees it: a fake
//! mmap offset in the device's offset space and the one DRM file allowed to map it
//! (`drm_vma_node_allow` at ALLOC, revoked at FREE).
//!
//! A mapping through the render node keeps the object (and its memory) alive after FREE, as the
//! kernel's VMA holds a GEM reference; a new mmap of a freed object's offset gets EACCES while
//! the object lives and EINVAL after.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use kfd::Errno;

use crate::driver::fork_gate::TableMutex;
use crate::driver::host_memory::Backing;

/// `DRM_FILE_PAGE_OFFSET_START` in bytes: fake offsets start above 4 GiB.
const FIRST_FAKE_OFFSET: u64 = 1 << 32;

/// What backs a GEM object.
#[derive(Clone, Debug)]
pub(crate) enum GemMemory {
    /// Memory the simulator allocated (VRAM, GTT, doorbell, MMIO).
    Backed(Arc<Backing>),
    /// User pages (a USERPTR BO): never mappable through the render node (EPERM).
    User,
}

/// One GEM object.
#[derive(Debug)]
pub(crate) struct GemObject {
    offset: u64,
    size: u64,
    memory: GemMemory,
    allowed_file: AtomicU64,
}

impl GemObject {
    /// The fake mmap offset ALLOC returns.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Its memory.
    pub(crate) fn memory(&self) -> &GemMemory {
        &self.memory
    }

    /// `drm_vma_node_revoke`: no file may map it any more.
    pub(crate) fn revoke(&self) {
        self.allowed_file.store(0, Ordering::Release);
    }
}

/// One device's fake-offset space.
#[derive(Debug)]
pub(crate) struct GemOffsets {
    next: AtomicU64,
    objects: TableMutex<BTreeMap<u64, Weak<GemObject>>>,
}

impl Default for GemOffsets {
    fn default() -> Self {
        Self {
            next: AtomicU64::new(FIRST_FAKE_OFFSET),
            objects: TableMutex::new(BTreeMap::new()),
        }
    }
}

impl GemOffsets {
    /// Create an object of `size` bytes that `file` may map.
    pub(crate) fn create(&self, size: u64, memory: GemMemory, file: u64) -> Arc<GemObject> {
        let offset = self.next.fetch_add(size.max(4096), Ordering::AcqRel);
        let object = Arc::new(GemObject {
            offset,
            size,
            memory,
            allowed_file: AtomicU64::new(file),
        });
        let mut objects = self.objects.lock();
        objects.retain(|_, weak| weak.strong_count() > 0);
        objects.insert(offset, Arc::downgrade(&object));
        object
    }

    /// `drm_gem_mmap`'s lookup: the object must start exactly at `offset` and cover `len`
    /// bytes (else EINVAL) and `file` must be allowed (else EACCES).
    pub(crate) fn lookup_for_mmap(
        &self,
        offset: u64,
        len: u64,
        file: u64,
    ) -> Result<Arc<GemObject>, Errno> {
        let object = {
            let objects = self.objects.lock();
            objects.get(&offset).and_then(Weak::upgrade)
        }
        .ok_or(Errno::EINVAL)?;
        if len > object.size {
            return Err(Errno::EINVAL);
        }
        if object.allowed_file.load(Ordering::Acquire) != file {
            return Err(Errno::EACCES);
        }
        Ok(object)
    }
}
