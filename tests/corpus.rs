//! Every kernel of the test corpus (`tests/kernels`) through the safe API, on simulated gfx90a
//! and gfx942, code objects V5 and V6: loaded with `Device::load_code_object`, launched with
//! `Queue::launch` (kernarg builder, hidden arguments, scratch for private segments and
//! dynamic stacks), results checked against the CPU references of `tests/kernels/checks/`,
//! which the simulator's shader-core suite runs too.
//!
//! Not here: `extern_sym` (an external symbol the executables work defines) and the checks
//! that read the simulator's own records (see `sim/tests/shader_kernels_basic.rs`); the
//! hidden-argument layouts are checked in `tests/launches.rs`.

#[path = "corpus_support/mod.rs"]
mod shader_support;

/// Every run is a `Queue::launch` (`tests/corpus_prepared.rs` runs the same checks through
/// prepared launches).
const LAUNCH_PATH: shader_support::LaunchPath = shader_support::LaunchPath::Launch;

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
