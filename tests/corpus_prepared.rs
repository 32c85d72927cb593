//! The corpus checks of `tests/kernels/checks/` through prepared launches: each run prepares
//! its kernel with placeholder values (null pointers, zero scalars) and issues it once with the
//! real ones, so every result checked against the CPU reference was computed from values
//! written at issue into the prepared kernarg segment (every check file: launch state, grids,
//! integer and float ALU, atomics, dynamic LDS, scratch and dynamic stacks). `tests/corpus.rs`
//! runs the same checks through `Queue::launch`.

#[path = "corpus_support/mod.rs"]
mod shader_support;

/// Every run is a prepared launch, issued once.
const LAUNCH_PATH: shader_support::LaunchPath = shader_support::LaunchPath::Prepared;

/// The GFX9 targets (`tests/corpus_rdna3.rs` runs the gfx1100 builds).
pub(crate) const TARGETS: &[shader_support::Target] = &shader_support::GFX9_TARGETS;

/// Every check passes on both targets.
pub(crate) const KNOWN_GAPS: &[(&str, &str)] = &[];

/// Kernels the corpus does not build for these targets: none.
pub(crate) const NOT_BUILT: &[(&str, &str)] = &[];

#[path = "kernels/checks/atomics.rs"]
mod atomics;
#[path = "kernels/checks/basic.rs"]
mod basic;
#[path = "kernels/checks/float.rs"]
mod float;
#[path = "kernels/checks/lds.rs"]
mod lds;
#[path = "kernels/checks/private.rs"]
mod private;
