//! Scratch (private segment) kernels of the corpus on simulated gfx90a (MUBUF on the private
//! segment buffer) and gfx942 (architected flat scratch): private arrays, VGPR spills, calls
//! with stack frames, indirect calls with a dynamic stack.
//!
//! The checks live in `tests/kernels/checks/private.rs`, shared with the safe-API suite.

mod shader_support;

#[path = "../../tests/kernels/checks/private.rs"]
mod checks;

/// The CP counts scratch slots by COMPUTE_TMPRING_SIZE.WAVES: a queue that sets it and leaves
/// `scratch_backing_memory_byte_size` 0 (tinygrad's amd_queue_t) runs scratch kernels, with
/// the same results.
#[test]
fn scratch_slots_come_from_the_tmpring_waves() {
    use shader_support::{Arg, Opts, for_each_build, grid1};
    for_each_build(|gpu, v| {
        let co = gpu.load(&format!("private_array.{v}"));
        let n = 200u32;
        let idx: Vec<u32> = (0..16 * n).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let bi = gpu.buffer_u32(&idx);
        let results: Vec<Vec<u32>> = [false, true]
            .into_iter()
            .map(|tmpring_only| {
                let out = gpu.buffer(2 * n as usize * 4);
                gpu.run_opts(
                    &co,
                    "private_array",
                    grid1(n, 64),
                    [64, 1, 1],
                    &[Arg::Ptr(bi.va), Arg::Ptr(out.va), Arg::U32(n)],
                    Opts {
                        scratch_in_tmpring_only: tmpring_only,
                        ..Opts::default()
                    },
                );
                out.u32s()
            })
            .collect();
        assert!(results[0].iter().any(|&w| w != 0));
        assert_eq!(results[0], results[1], "{} {v}", gpu.dir());
    });
}
