//! Every kernel of the test corpus (`tests/kernels`) that takes only buffers and scalars, run
//! by the `aqueduct` binary as a user would (`aqueduct run ... --arg buf=PATH ... --out N=PATH
//! --json` on simulated gfx90a and gfx942, code objects V4 where built, V5 and V6), with the
//! outputs compared against the CPU references of `tests/kernels/checks/` that the safe-API
//! and shader-core suites run too.
//!
//! What the command line cannot express is listed with its reason in
//! `run_corpus_support/inexpressible.rs` (`INEXPRESSIBLE`, `NOT_IN_THE_SHARED_CHECKS`); the
//! kernels without a shared check that it can express are checked in
//! `run_corpus_support/command_line.rs` (and the V4-only `implicit_args_v4` at the end of this
//! file). `run_corpus_rdna3.rs` runs the same on the gfx1100 builds (wave32 and wave64).

#[path = "run_corpus_support/mod.rs"]
mod shader_support;

/// The GFX9 targets (`run_corpus_rdna3.rs` runs the gfx1100 builds).
pub(crate) const TARGETS: &[shader_support::Target] = &[
    shader_support::Target::Gfx90a,
    shader_support::Target::Gfx942,
];

/// None: every check passes on both GFX9 targets.
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

use shader_support::{
    Arg, Gpu, INEXPRESSIBLE, NOT_IN_THE_SHARED_CHECKS, SKIPPED_CHECKS, Target, kernels_bin,
};

/// The lists of skipped kernels name real corpus kernels (a renamed kernel must not stay
/// skipped by a stale entry), and say why.
#[test]
fn every_skipped_kernel_exists_and_has_a_reason() {
    for (kernel, reason) in INEXPRESSIBLE.iter().chain(NOT_IN_THE_SHARED_CHECKS) {
        for target in ["gfx90a", "gfx942", "gfx1100"] {
            let path = kernels_bin().join(target).join(format!("{kernel}.co5"));
            assert!(path.exists(), "{}: listed but not built", path.display());
        }
        assert!(reason.len() > 20, "{kernel}: say why");
    }
}

/// The list of skipped checks names real checks of `tests/kernels/checks/` (a renamed check
/// must not leave a stale entry behind), each with a kernel of [`INEXPRESSIBLE`], and every
/// inexpressible kernel is what some listed check reaches.
#[test]
fn every_skipped_check_exists_and_reaches_an_inexpressible_kernel() {
    let checks = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/checks");
    for (check, kernel) in SKIPPED_CHECKS {
        let (module, function) = check.split_once("::").expect("module::function");
        let source = std::fs::read_to_string(checks.join(format!("{module}.rs"))).unwrap();
        assert!(
            source.contains(&format!("fn {function}()")),
            "{check}: no such check in tests/kernels/checks/{module}.rs"
        );
        assert!(
            INEXPRESSIBLE.iter().any(|(k, _)| k == kernel),
            "{check}: {kernel} is not inexpressible"
        );
    }
    for (kernel, _) in INEXPRESSIBLE {
        assert!(
            SKIPPED_CHECKS.iter().any(|(_, k)| k == kernel),
            "{kernel}: inexpressible, but no check reaches it"
        );
    }
}

/// `implicit_args_v4` (gfx90a, code object V4 only): the V4 hidden block the binary filled
/// reads as zero (the command line sets no global offset) and the local sizes come from the
/// packet, partial groups included.
#[test]
fn implicit_args_v4_reads_a_zero_block_and_packet_sizes() {
    let gpu = Gpu::new(Target::Gfx90a);
    let co = gpu.load("implicit_args_v4.co4");
    let (grid, group) = ([20u32, 3, 2], [8u32, 2, 1]);
    let items = (grid[0] * grid[1] * grid[2]) as usize;
    let (dump, ids) = (gpu.buffer(14 * 4), gpu.buffer(items * 16));
    dump.fill(0xa5);
    gpu.run(
        &co,
        "implicit_args_v4",
        grid,
        group,
        &[Arg::Ptr(dump.va), Arg::Ptr(ids.va)],
    );
    assert_eq!(dump.u32s(), [0; 14]);
    let got = ids.u32s();
    let mut f = 0;
    for z in 0..grid[2] {
        for y in 0..grid[1] {
            for x in 0..grid[0] {
                let local_x = (grid[0] - x / group[0] * group[0]).min(group[0]);
                assert_eq!(got[4 * f..4 * f + 4], [x, y, z, local_x], "({x},{y},{z})");
                f += 1;
            }
        }
    }
}
