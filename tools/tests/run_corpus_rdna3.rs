//! Every kernel of the test corpus built for gfx1100 (wave32) that takes only buffers and
//! scalars, run by the `aqueduct` binary on the simulated Radeon RX 7900 XTX
//! (`AQUEDUCT_SIM_MACHINE=rx7900xtx`) as a user would (`aqueduct run ... --arg buf=PATH ...
//! --out N=PATH --json`, code objects V5 and V6), the outputs compared against the CPU
//! references of `tests/kernels/checks/`: the same checks as `run_corpus.rs` on gfx90a and
//! gfx942, and as `tests/corpus_rdna3.rs` through the safe API on this preset.
//!
//! What the command line cannot express is skipped as in `run_corpus.rs`
//! (`run_corpus_support/inexpressible.rs`); [`KNOWN_GAPS`] lists the kernels whose gfx1100
//! checks do not pass yet, and why (`tests/corpus_rdna3.rs` has the same list): a listed
//! kernel whose check passes fails the test, so the list stays true.

#[path = "run_corpus_support/mod.rs"]
mod shader_support;

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
    (
        "divergence.co6",
        "clang-22 emits v_and_b16, a 16-bit VALU op the GFX9 interpreter has no twin for",
    ),
    (
        "f32_ops.co6",
        "clang-22 emits v_mov_b16 (16-bit VALU, no GFX9 twin)",
    ),
    (
        "stack_string.co6",
        "clang-22 emits v_mov_b16 (16-bit VALU, no GFX9 twin)",
    ),
];

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
