//! The kernel-driver model: amdkfd and the amdgpu render node as a process sees them through
//! files, ioctls and mmap, with the machine-wide and per-process state behind them.
//!
//! It reaches the GPU only through the contracts in `gpu/` (queue, dispatch, vm, target, clock);
//! nothing in `gpu/` imports a module of this folder.

pub(crate) mod accounting;
pub(crate) mod cpu_mappings;
pub mod cwsr;
pub(crate) mod device;
pub(crate) mod drm_file;
pub(crate) mod faulting_sys;
pub(crate) mod files;
pub(crate) mod fork_gate;
pub(crate) mod gem;
pub(crate) mod gpu_vm;
pub(crate) mod host_memory;
pub(crate) mod injection;
pub(crate) mod ip_discovery;
pub(crate) mod kfd_ioctl;
pub(crate) mod mmap;
pub(crate) mod os_kernel;
pub(crate) mod process;
pub(crate) mod render_node;
pub(crate) mod shared;
pub(crate) mod topology;
pub(crate) mod user_memory;
