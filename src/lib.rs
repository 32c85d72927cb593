//! aqueduct: a pure-Rust userspace driver for AMD GPUs.
//!
//! It talks to `/dev/kfd` and the amdgpu DRM render node directly (no ROCr, libhsakmt, libdrm
//! or comgr), builds AQL queues and signals on memory it maps itself, and loads AMDGPU code
//! objects with its own loader. Where no GPU exists, a simulator that executes the kernels'
//! real machine code stands in for the kernel driver and the GPU.
//!
//! The crates below this one are re-exported for users who need the raw layers.

pub use amdgpu_loader as loader;
pub use amdgpu_sim as sim;
pub use aql;
pub use drm_amdgpu;
pub use kfd;

pub mod backend;
pub mod code_object_source;
pub mod kernarg;
