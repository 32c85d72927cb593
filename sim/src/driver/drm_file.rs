//! What the render node keeps for each open file (amdgpu's per-file private data,
//! `amdgpu_fpriv`): the file's identity and whose compute VM it became at ACQUIRE_VM. A KFD
//! process names its GPUs' DRM files through this, not through the file table.

use std::sync::atomic::{AtomicU64, Ordering};

use kfd::Errno;

/// One render-node file's DRM state.
#[derive(Debug)]
pub(crate) struct DrmFile {
    /// The open file description's id (unique per machine, never 0).
    pub id: u64,
    /// The process and GPU whose compute VM this file became at ACQUIRE_VM
    /// (`pid << 16 | gpu index + 1`; 0 while it is a plain DRM file). Lock-free so that a
    /// forked child can inspect an inherited file.
    compute_vm_owner: AtomicU64,
}

impl DrmFile {
    /// The DRM state of a newly opened render-node file with id `id`.
    pub(crate) fn new(id: u64) -> Self {
        Self {
            id,
            compute_vm_owner: AtomicU64::new(0),
        }
    }

    /// Claim this render file as the compute VM of `pid` on GPU `device`; fails if some VM
    /// claim exists already (`amdgpu_amdkfd_gpuvm_acquire_process_vm`: EINVAL).
    pub(crate) fn claim_compute_vm(&self, pid: i32, device: usize) -> Result<(), Errno> {
        let claim = (u64::from(pid as u32) << 16) | (device as u64 + 1);
        self.compute_vm_owner
            .compare_exchange(0, claim, Ordering::AcqRel, Ordering::Acquire)
            .map(drop)
            .map_err(|_| Errno::EINVAL)
    }

    /// The compute VM's process went away (`amdgpu_amdkfd_gpuvm_release_process_vm`): the DRM
    /// file is a plain one again.
    pub(crate) fn release_compute_vm(&self) {
        self.compute_vm_owner.store(0, Ordering::Release);
    }
}
