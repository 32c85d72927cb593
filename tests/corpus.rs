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

use shader_support::{Arg, for_each_build, for_each_built};

/// `empty` (every build, V4 included) over a one-item grid and a 4096-item one.
#[test]
fn empty_kernel_for_big_and_small_grids() {
    for_each_built("empty", |gpu, v| {
        let co = gpu.load(&format!("empty.{v}"));
        gpu.run(&co, "empty", [1, 1, 1], [1, 1, 1], &[]);
        gpu.run(&co, "empty", [4096, 1, 1], [256, 1, 1], &[]);
    });
}

/// `oob_store` and `oob_load` with valid pointers, the control their source describes: the
/// store writes `value + i`, the load copies it back. (Their faults through `Queue::launch`
/// are in `tests/launches.rs`.)
#[test]
fn oob_kernels_round_trip_with_valid_pointers() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("oob_store.{v}"));
        let (p, out) = (gpu.buffer(64 * 4), gpu.buffer(64 * 4));
        gpu.run(
            &co,
            "oob_store",
            [64, 1, 1],
            [64, 1, 1],
            &[Arg::Ptr(p.va), Arg::U32(1000)],
        );
        gpu.run(
            &co,
            "oob_load",
            [64, 1, 1],
            [64, 1, 1],
            &[Arg::Ptr(p.va), Arg::Ptr(out.va)],
        );
        let want: Vec<u32> = (1000..1064).collect();
        assert_eq!(p.u32s(), want, "{} {v}", gpu.dir());
        assert_eq!(out.u32s(), want, "{} {v}", gpu.dir());
    });
}
