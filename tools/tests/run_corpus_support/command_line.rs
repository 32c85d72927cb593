//! The checks of kernels without a shared check (`tests/kernels/checks/`) that the command line
//! can express, on the including suite's targets (`run_corpus.rs`, `run_corpus_rdna3.rs`).

use crate::shader_support::{Arg, for_each_build, for_each_built};

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
