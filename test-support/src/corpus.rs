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
}
