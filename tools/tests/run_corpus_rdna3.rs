//! Every kernel of the test corpus built for gfx1100 (wave32, and wave64 as
//! `<kernel>.w64.co5`/`.co6`) that takes only buffers and scalars, run by the `aqueduct` binary on the simulated Radeon RX 7900 XTX
//! (`AQUEDUCT_SIM_MACHINE=rx7900xtx`) as a user would (`aqueduct run ... --arg buf=PATH ...
//! --out N=PATH --json`, code objects V5 and V6), the outputs compared against the CPU
//! references of `tests/kernels/checks/`: the same checks as `run_corpus.rs` on gfx90a and
//! gfx942, and as `tests/corpus_rdna3.rs` through the safe API on this preset.
//!
//! What the command line cannot express is skipped as in `run_corpus.rs`
//! (`run_corpus_support/inexpressible.rs`); [`KNOWN_GAPS`] would list the kernels whose gfx1100
//! checks do not pass, and why (as `tests/corpus_rdna3.rs` does; both are empty now): a listed
//! kernel whose check passes fails the test, so the list stays true.

#[path = "run_corpus_support/mod.rs"]
mod shader_support;

/// The RDNA3 preset, running the wave32 and the wave64 builds.
pub(crate) const TARGETS: &[shader_support::Target] = &[
    shader_support::Target::Gfx1100,
    shader_support::Target::Gfx1100Wave64,
];

/// Kernels (or single code objects) whose gfx1100 checks fail today: (kernel, why). None:
/// `preload`, which has no gfx1100 build, is in `NOT_BUILT` instead.
pub(crate) const KNOWN_GAPS: &[(&str, &str)] = &[];

#[path = "../../tests/kernels/checks/atomics.rs"]
mod atomics;
#[path = "../../tests/kernels/checks/basic.rs"]
mod basic;
#[path = "run_corpus_support/command_line.rs"]
mod command_line;
#[path = "../../tests/kernels/checks/float.rs"]
mod float;
#[path = "../../tests/kernels/checks/lds.rs"]
mod lds;
#[path = "../../tests/kernels/checks/private.rs"]
mod private;
