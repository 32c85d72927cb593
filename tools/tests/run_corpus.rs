//! Every kernel of the test corpus (`tests/kernels`) that takes only buffers and scalars, run
//! by the `aqueduct` binary as a user would (`aqueduct run ... --arg buf=PATH ... --out N=PATH
//! --json` on simulated gfx90a, gfx942 and gfx1100 (its wave32 and its wave64 builds), code
//! objects V4 where built, V5 and V6), with the
//! outputs compared against the CPU references of `tests/kernels/checks/` that the safe-API
//! and shader-core suites run too.
//!
//! What the command line cannot express is listed with its reason in
//! `run_corpus_support/inexpressible.rs` (`INEXPRESSIBLE`, `NOT_IN_THE_SHARED_CHECKS`); the
//! kernels without a shared check that it can express are checked at the end of this file.

#[path = "run_corpus_support/mod.rs"]
mod shader_support;

#[path = "../../tests/kernels/checks/atomics.rs"]
mod atomics;
#[path = "../../tests/kernels/checks/basic.rs"]
mod basic;
#[path = "../../tests/kernels/checks/float.rs"]
mod float;
#[path = "../../tests/kernels/checks/lds.rs"]
mod lds;
#[path = "../../tests/kernels/checks/private.rs"]
mod private;

use shader_support::{
    Arg, Gpu, INEXPRESSIBLE, NOT_IN_THE_SHARED_CHECKS, SKIPPED_CHECKS, Target, for_each_build,
    for_each_built, kernels_bin,
};

/// The lists of skipped kernels name real corpus kernels (a renamed kernel must not stay
/// skipped by a stale entry), and say why.
#[test]
fn every_skipped_kernel_exists_and_has_a_reason() {
    for (kernel, reason) in INEXPRESSIBLE.iter().chain(NOT_IN_THE_SHARED_CHECKS) {
        for target in ["gfx90a", "gfx942"] {
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

/// `implicit_args` derives the launch geometry from the V5/V6 hidden block the binary filled
/// (the reference of its source: grid 200, work-group 64).
#[test]
fn implicit_args_derives_the_geometry_the_command_line_asked_for() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("implicit_args.{v}"));
        let (dump, derived) = (gpu.buffer(64 * 4), gpu.buffer(4 * 4 * 4));
        gpu.run(
            &co,
            "implicit_args",
            [200, 1, 1],
            [64, 1, 1],
            &[Arg::Ptr(dump.va), Arg::Ptr(derived.va)],
        );
        let want: Vec<u32> = [64, 64, 64, 8]
            .iter()
            .flat_map(|&size| [4, 200, size, 1])
            .collect();
        assert_eq!(derived.u32s(), want, "{} {v}", gpu.dir());
        // Block count x, group size x and remainder x as the kernel saw them.
        let h = dump.u32s();
        assert_eq!(
            [h[0], h[3] & 0xffff, h[4] >> 16],
            [3, 64, 8],
            "{} {v}",
            gpu.dir()
        );
    });
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

/// `dispatch_ptr` copies the packet it was dispatched with and numbers a 3-D grid from the
/// packet's sizes.
#[test]
fn dispatch_ptr_sees_the_packet_of_the_command_line_geometry() {
    for_each_built("dispatch_ptr", |gpu, v| {
        let co = gpu.load(&format!("dispatch_ptr.{v}"));
        let (grid, wg) = ([64u32, 4, 2], [16u32, 2, 1]);
        let n = (grid[0] * grid[1] * grid[2]) as usize;
        let (pkt, ids) = (gpu.buffer(16 * 4), gpu.buffer(n * 4));
        gpu.run(
            &co,
            "dispatch_ptr",
            grid,
            wg,
            &[Arg::Ptr(pkt.va), Arg::Ptr(ids.va)],
        );
        let p = pkt.u32s();
        let what = format!("{} {v}", gpu.dir());
        assert_eq!(p[0] >> 16, 3, "{what}: setup = 3 dimensions");
        assert_eq!([p[1], p[2] & 0xffff], [16 | 2 << 16, 1], "{what}");
        assert_eq!(p[3..6], grid, "{what}");
        assert_eq!(ids.u32s(), (0..n as u32).collect::<Vec<_>>(), "{what}");
    });
}
