//! Kernel arguments: the kernarg segment a dispatch points at, built from the kernel's metadata.
//!
//! A [`KernargLayout`] is computed once per kernel from what the loader read (explicit
//! arguments with their offsets, sizes and kinds; the hidden arguments and the V4 or V5/V6
//! implicit-argument block). For each launch, [`KernargLayout::write`] checks the caller's
//! [`Arg`]s one by one and the [`Geometry`] against the kernel, then writes every explicit and
//! hidden argument straight into the kernarg memory the caller hands it, without allocating.
//! What each hidden argument gets is listed in [`hidden`].

mod error;
mod geometry;
pub mod hidden;
mod layout;
mod value;

pub use error::KernargError;
pub use geometry::{Geometry, MAX_WORKGROUP_SIZE};
pub use hidden::LaunchContext;
pub use layout::{ArgKind, DispatchShape, ExplicitArg, KernargLayout, PreloadedKernargs};
pub use value::{Arg, KeepAlive, MemoryRef, Scalar};
