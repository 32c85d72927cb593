//! Every kernel of the test corpus built for gfx1100 (wave32; the corpus has no wave64
//! gfx1100 builds) through the safe API on the simulated Radeon RX 7900 XTX (`rx7900xtx`):
//! loaded with `Device::load_code_object`, launched with `Queue::launch` on the GFX11 shader
//! core, results checked against the same CPU references as on gfx90a and gfx942
//! (`tests/kernels/checks/`).
//!
//! [`KNOWN_GAPS`] lists the kernels whose checks do not pass yet, and why: a listed kernel
//! whose check passes fails the test, so the list stays true.

#[path = "corpus_support/mod.rs"]
mod shader_support;

/// Every run is a `Queue::launch`.
const LAUNCH_PATH: shader_support::LaunchPath = shader_support::LaunchPath::Launch;

/// The RDNA3 preset only.
pub(crate) const TARGETS: &[shader_support::Target] = &[shader_support::Target::Gfx1100];

/// Kernels (or single code objects) whose gfx1100 checks fail today: (kernel, why).
pub(crate) const KNOWN_GAPS: &[(&str, &str)] = &[
    (
        "cross_lane",
        "its CPU reference is written for 64-lane waves (wave sums, ballots, lane counts); \
         a wave32 reference is still to be written",
    ),
    (
        "preload",
        "no gfx1100 build: kernarg preloading is a gfx90a/gfx942 feature",
    ),
];

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
