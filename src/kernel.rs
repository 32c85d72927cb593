//! A kernel of a loaded executable: what a dispatch packet and its kernarg segment need, and a
//! hold on the load so its code stays in place while the kernel (or a launch of it) exists.
//! Below launching (which takes a [`Kernel`]) and executables (which hand them out).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use amdgpu_loader::KernelArg;

use crate::kernarg::KernargLayout;

/// A kernel of an executable: what a dispatch packet and its kernarg segment need.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Kernel {
    /// Its name (without `.kd`).
    pub name: String,
    /// The kernel descriptor's GPU address: the dispatch packet's `kernel_object`.
    pub kernel_object: u64,
    /// The GPU address of its first instruction.
    pub entry_address: u64,
    /// The second entry point of a kernel that takes preloaded kernel arguments (the first
    /// skips the preload prologue on firmware that preloads); `None` otherwise.
    pub preload_entry_address: Option<u64>,
    /// Bytes of its kernarg segment.
    pub kernarg_size: u32,
    /// Alignment of its kernarg segment.
    pub kernarg_align: u32,
    /// Static group (LDS) bytes per work-group.
    pub group_segment_size: u32,
    /// Private (scratch) bytes per work-item.
    pub private_segment_size: u32,
    /// The wavefront size it was compiled for.
    pub wavefront_size: u32,
    /// Its arguments from the metadata (explicit, then hidden), in order.
    pub args: Vec<KernelArg>,
    /// Where its kernel arguments go: what [`Queue::launch`] fills.
    ///
    /// [`Queue::launch`]: crate::Queue::launch
    pub layout: Arc<KernargLayout>,
    /// The GPU it is loaded on.
    pub gpu_id: u32,
    /// Keeps the code loaded while this kernel (or a clone) exists, so a launch can never run
    /// code that was unloaded under it.
    pub(crate) loaded: KeepLoaded,
}

/// A kernel's hold on its load (whatever the executable layer keeps a load alive with; `None`
/// for the view a teardown callback gets). Two kernels compare by what they describe, not by
/// this.
#[derive(Clone)]
pub(crate) struct KeepLoaded(pub(crate) Option<Arc<dyn Any + Send + Sync>>);

impl PartialEq for KeepLoaded {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for KeepLoaded {}

impl fmt::Debug for KeepLoaded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "loaded" } else { "view" })
    }
}
