//! Wave64 on the GFX11 shader core: the corpus' wave64 gfx1100 builds (`*.w64.co5`,
//! `*.w64.co6`, clang `-mwavefrontsize64`) have `ENABLE_WAVEFRONT_SIZE32` clear in their
//! kernel descriptors, and a dispatch of one runs 64-lane waves (half as many waves as the
//! wave32 build of the same kernel, lanes 32..63 included in the results).

mod shader_support;

use amdgpu_sim::target::GfxTarget;
use shader_support::{Arg, Gpu};

#[test]
fn a_wave64_gfx1100_build_runs_64_lane_waves() {
    let gpu = Gpu::new(GfxTarget::Gfx1100);
    for (file, wave) in [
        ("vector_add.co5", 32),
        ("vector_add.co6", 32),
        ("vector_add.w64.co5", 64),
        ("vector_add.w64.co6", 64),
    ] {
        let co = gpu.load(file);
        let kernel = co.image.kernel("vector_add").expect("vector_add kernel");
        assert_eq!(
            kernel.descriptor.wavefront_size(),
            wave,
            "{file}: descriptor"
        );
        let n = 1000u32;
        let a: Vec<u32> = (0..n).map(|i| i * 7 + 1).collect();
        let b: Vec<u32> = (0..n).map(|i| i ^ 0x5a5a).collect();
        let (ba, bb, out) = (gpu.buffer_u32(&a), gpu.buffer_u32(&b), gpu.buffer(4 * 1024));
        let stats = gpu.run(
            &co,
            "vector_add",
            [1024, 1, 1],
            [256, 1, 1],
            &[
                Arg::Ptr(ba.va),
                Arg::Ptr(bb.va),
                Arg::Ptr(out.va),
                Arg::U32(n),
            ],
        );
        assert_eq!(
            stats.waves,
            u64::from(1024 / wave),
            "{file}: waves of {wave} lanes"
        );
        let got = out.u32s();
        for i in 0..n as usize {
            assert_eq!(got[i], a[i].wrapping_add(b[i]), "{file} item {i}");
        }
    }
}
