//! `amdgpu-loader`: a pure loader for AMDGPU HSA code objects.
//!
//! It takes code-object bytes and a destination (a byte slice plus the GPU address it will
//! have) and does no I/O and no GPU allocation.

pub mod kernel_descriptor;

pub use kernel_descriptor::KernelDescriptor;
