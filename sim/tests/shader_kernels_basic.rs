//! Basic kernels of the corpus on simulated gfx90a and gfx942: launch state, integer ALU,
//! global memory, grids, control flow.
//!
//! The checks live in `tests/kernels/checks/basic.rs`, shared with the safe-API suite.
//! The checks below need the shader core's own view (statistics, the last packet and
//! kernarg segment, loader externals).

// Reference implementations use the kernels' mathematical names (a, b, x, n, ...).
#![allow(clippy::many_single_char_names)]

mod shader_support;

#[path = "../../tests/kernels/checks/basic.rs"]
mod checks;

use shader_support::{Arg, for_each_build, grid1};

#[test]
fn empty_kernel_completes_for_big_and_small_grids() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("empty.{v}"));
        let stats = gpu.run(&co, "empty", [1, 1, 1], [1, 1, 1], &[]);
        assert_eq!(stats.waves, 1);
        let stats = gpu.run(&co, "empty", [4096, 1, 1], [256, 1, 1], &[]);
        assert_eq!(stats.waves, 64, "{} {v}", gpu.dir());
        assert!(stats.instructions >= 64);
    });
}

#[test]
fn dispatch_ptr_reads_the_packet() {
    for target in crate::shader_support::TARGETS {
        let gpu = crate::shader_support::Gpu::new(target);
        for v in ["co4", "co5", "co6"] {
            if v == "co4" && target != amdgpu_sim::target::GfxTarget::Gfx90a {
                continue;
            }
            let co = gpu.load(&format!("dispatch_ptr.{v}"));
            let pkt = gpu.buffer(64);
            let (gx, gy, gz) = (64u32, 4u32, 2u32);
            let ids = gpu.buffer((gx * gy * gz) as usize * 4);
            gpu.run(
                &co,
                "dispatch_ptr",
                [gx, gy, gz],
                [16, 2, 1],
                &[Arg::Ptr(pkt.va), Arg::Ptr(ids.va)],
            );
            let (_, packet) = gpu.last.lock().expect("lock").clone().expect("dispatched");
            let want: Vec<u32> = zerocopy::IntoBytes::as_bytes(&packet)
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            assert_eq!(pkt.u32s(), want, "{} {v}", gpu.dir());
            let got = ids.u32s();
            assert!(got.iter().enumerate().all(|(i, &x)| x == i as u32));
        }
    }
}

#[test]
fn implicit_args_match_what_the_dispatcher_wrote() {
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("implicit_args.{v}"));
        let dump = gpu.buffer(64 * 4);
        let derived = gpu.buffer(4 * 4 * 4);
        gpu.run(
            &co,
            "implicit_args",
            [200, 1, 1],
            [64, 1, 1],
            &[Arg::Ptr(dump.va), Arg::Ptr(derived.va)],
        );
        let (kernarg, _) = gpu.last.lock().expect("lock").clone().expect("dispatched");
        let k = co.image.kernel("implicit_args").expect("kernel");
        let block = k.implicit_args.expect("implicit args").offset as usize;
        let mut h = vec![0u8; 256];
        kernarg.read(block, &mut h);
        let h: Vec<u32> = h
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        assert_eq!(dump.u32s(), h[..64].to_vec());
        let d = derived.u32s();
        for g in 0..4 {
            let want = if g < 3 {
                [4, 200, 64, 1]
            } else {
                [4, 200, 8, 1]
            };
            assert_eq!(d[4 * g..4 * g + 4], want, "group {g}");
        }
    });
}

#[test]
fn external_variable_resolved_by_the_loader() {
    for_each_build(|gpu, v| {
        let var = gpu.buffer_u32(&[0x0a0a_0001, 0x0b0b_0002, 0x0c0c_0003]);
        let mut externals = amdgpu_loader::ExternalDefinitions::new();
        externals.define("aq_external_var", var.va).expect("define");
        let co = gpu.load_with(&format!("extern_sym.{v}"), &externals);
        let out = gpu.buffer(12);
        gpu.run(&co, "extern_sym", [1, 1, 1], [1, 1, 1], &[Arg::Ptr(out.va)]);
        assert_eq!(out.u32s(), vec![0x0c0c_0003, 0x0a0a_0001, 2]);
    });
}

#[test]
fn code_object_v4_kernels_read_the_dispatch_packet() {
    let gpu = crate::shader_support::Gpu::new(amdgpu_sim::target::GfxTarget::Gfx90a);
    let co = gpu.load("vector_add.co4");
    let n = 300u32;
    let a: Vec<u32> = (0..n).collect();
    let b: Vec<u32> = (0..n).map(|i| i * 1000).collect();
    let (ba, bb) = (gpu.buffer_u32(&a), gpu.buffer_u32(&b));
    let c = gpu.buffer(n as usize * 4);
    gpu.run(
        &co,
        "vector_add",
        grid1(n, 128),
        [128, 1, 1],
        &[
            Arg::Ptr(ba.va),
            Arg::Ptr(bb.va),
            Arg::Ptr(c.va),
            Arg::U32(n),
        ],
    );
    assert_eq!(c.u32s(), (0..n).map(|i| i * 1001).collect::<Vec<u32>>());
    let co = gpu.load("reduce_lds.co4");
    let x: Vec<u32> = (0..512).map(|i| i * 3).collect();
    let bx = gpu.buffer_u32(&x);
    let partial = gpu.buffer(8);
    gpu.run(
        &co,
        "reduce_lds",
        [512, 1, 1],
        [256, 1, 1],
        &[Arg::Ptr(bx.va), Arg::Ptr(partial.va), Arg::U32(512)],
    );
    let sums: Vec<u32> = (0..2)
        .map(|g| x[256 * g..256 * g + 256].iter().sum())
        .collect();
    assert_eq!(partial.u32s(), sums);
}
