//! The interface the shared corpus checks (`tests/kernels/checks/`) are written against, common
//! to the simulator's shader-core suite (`sim/tests/shader_support`) and the safe-API suite
//! (`tests/corpus_support`): each suite supplies its own `Gpu` that runs kernels its way.

/// A kernel argument value, in the order of the kernel's explicit arguments (integers are
/// narrowed to the argument's size).
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    /// A device address.
    Ptr(u64),
    /// A 32-bit unsigned integer.
    U32(u32),
    /// A 32-bit signed integer.
    I32(i32),
    /// A 64-bit unsigned integer.
    U64(u64),
    /// A 64-bit signed integer.
    I64(i64),
    /// A 32-bit float.
    F32(f32),
    /// A dynamic LDS pointer (`__local T*` argument): [`Opts::dynamic_lds`] bytes, placed by
    /// the runner.
    Lds,
}

/// Optional launch settings.
#[derive(Clone, Copy, Debug, Default)]
pub struct Opts {
    /// Dynamic LDS bytes per work-group.
    pub dynamic_lds: u32,
    /// Private bytes per lane beyond the kernel's fixed size (the simulator's dispatcher only;
    /// a launch through the safe API provides what the kernel declares).
    pub extra_scratch: u32,
    /// Describe the queue's scratch the way tinygrad does (the simulator's dispatcher only):
    /// COMPUTE_TMPRING_SIZE carries the wave count and size, and
    /// `scratch_backing_memory_byte_size` is left 0.
    pub scratch_in_tmpring_only: bool,
}

/// The code-object versions built for every corpus kernel on both targets (V4 is built for some
/// kernels on gfx90a: see [`for_each_built`]).
pub const VERSIONS: [&str; 2] = ["co5", "co6"];

/// A suite's GPU for one target, as the shared iteration needs it.
pub trait SuiteGpu: Sized {
    /// The suite's name for a target.
    type Target: Copy;
    /// A GPU of `target`.
    fn for_target(target: Self::Target) -> Self;
    /// The target's directory under `tests/kernels/bin` (`gfx90a`, ...).
    fn bin_dir(&self) -> &'static str;
    /// The code-object suffixes built for every corpus kernel on this GPU's target:
    /// [`VERSIONS`], or another kind of build of the same kernels (the wave64 builds of a
    /// wave32 target, `w64.co5` and `w64.co6`).
    fn versions(&self) -> &'static [&'static str] {
        &VERSIONS
    }
}

/// Run `f` for every target and every version of its [`SuiteGpu::versions`].
pub fn for_each_build<G: SuiteGpu>(targets: &[G::Target], mut f: impl FnMut(&G, &str)) {
    for &target in targets {
        let gpu = G::for_target(target);
        for v in gpu.versions() {
            f(&gpu, v);
        }
    }
}

/// Run `f` for every (target, version) `kernel` is built for: the target's
/// [`SuiteGpu::versions`] (V5 and V6) always, V4 where `bin/<target>/<kernel>.co4` exists
/// (gfx90a, some kernels).
pub fn for_each_built<G: SuiteGpu>(
    bin: &std::path::Path,
    targets: &[G::Target],
    kernel: &str,
    mut f: impl FnMut(&G, &str),
) {
    for &target in targets {
        let gpu = G::for_target(target);
        for v in std::iter::once("co4").chain(gpu.versions().iter().copied()) {
            if v != "co4"
                || bin
                    .join(gpu.bin_dir())
                    .join(format!("{kernel}.{v}"))
                    .exists()
            {
                f(&gpu, v);
            }
        }
    }
}
