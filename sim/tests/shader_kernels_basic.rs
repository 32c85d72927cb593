//! Basic kernels of the corpus on simulated gfx90a and gfx942: launch state, integer ALU,
//! global memory, grids, control flow.

mod shader_support;

use shader_support::{Arg, for_each_build};

#[test]
fn tiny_writes_lane_ids() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("tiny.{v}"));
        let out = gpu.buffer(64 * 4);
        gpu.dispatch(&co, "tiny", [64, 1, 1], [64, 1, 1], &[Arg::Ptr(out.va)])
            .unwrap_or_else(|e| panic!("{} {v}: {e}", gpu.dir()));
        let expect: Vec<u32> = (0..64).map(|l| l + 42).collect();
        assert_eq!(out.u32s(), expect, "{} {v}", gpu.dir());
    });
}

#[test]
fn vector_add_matches_the_cpu() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("vector_add.{v}"));
        let n = 1000u32;
        let a: Vec<u32> = (0..n).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let b: Vec<u32> = (0..n).map(|i| i ^ 0xdead_beef).collect();
        let (ba, bb) = (gpu.buffer_u32(&a), gpu.buffer_u32(&b));
        let c = gpu.buffer(n as usize * 4 + 64);
        c.fill(0xcc);
        gpu.dispatch(
            &co,
            "vector_add",
            [n.next_multiple_of(64), 1, 1],
            [64, 1, 1],
            &[Arg::Ptr(ba.va), Arg::Ptr(bb.va), Arg::Ptr(c.va), Arg::U32(n)],
        )
        .unwrap_or_else(|e| panic!("{} {v}: {e}", gpu.dir()));
        let got = c.u32s();
        for i in 0..n as usize {
            assert_eq!(got[i], a[i].wrapping_add(b[i]), "{} {v}: c[{i}]", gpu.dir());
        }
        assert!(got[n as usize..].iter().all(|&x| x == 0xcccc_cccc), "c[n..] untouched");
    });
}
