//! Every kernel of the test corpus built for gfx1100, wave32 (`<kernel>.co5`, `.co6`, the
//! compilers' default) and wave64 (`<kernel>.w64.co5`, `.w64.co6`, built with
//! `-mwavefrontsize64`), through the safe API on the simulated Radeon RX 7900 XTX
//! (`rx7900xtx`): loaded with `Device::load_code_object`, launched with `Queue::launch` on the
//! GFX11 shader core, results checked against the same CPU references as on gfx90a and gfx942
//! (`tests/kernels/checks/`; the wave-size dependent ones take the build's wave size).
//!
//! [`KNOWN_GAPS`] lists the kernels whose checks do not pass yet, and why: a listed kernel
//! whose check passes fails the test, so the list stays true. [`NOT_BUILT`] lists the kernels
//! the corpus has no gfx1100 build of, and why: their checks do not run here, and a listed
//! kernel whose gfx1100 build appears fails the test.

#[path = "corpus_support/mod.rs"]
mod shader_support;

/// Every run is a `Queue::launch`.
const LAUNCH_PATH: shader_support::LaunchPath = shader_support::LaunchPath::Launch;

/// The RDNA3 preset, running the wave32 and the wave64 builds.
pub(crate) const TARGETS: &[shader_support::Target] = &[
    shader_support::Target::Gfx1100,
    shader_support::Target::Gfx1100Wave64,
];

/// Kernels (or single code objects) whose gfx1100 checks fail today: (kernel, why). None.
pub(crate) const KNOWN_GAPS: &[(&str, &str)] = &[];

/// Kernels tests/kernels/build.sh does not build for gfx1100, and why: not applicable there,
/// not a gap.
const NOT_BUILT_FOR_GFX1100: &[(&str, &str)] = &[(
    "preload",
    "kernarg preloading (-amdgpu-kernarg-preload-count) exists only on gfx90a, gfx94x and \
     gfx950; build.sh builds preload.cl for those targets alone",
)];

/// What the corpus support skips (see [`NOT_BUILT_FOR_GFX1100`]).
pub(crate) const NOT_BUILT: &[(&str, &str)] = NOT_BUILT_FOR_GFX1100;

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
