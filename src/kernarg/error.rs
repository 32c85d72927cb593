//! What can be wrong with a launch's arguments or geometry, found before anything is dispatched.

/// An error from building a kernarg segment. Every variant names the kernel, and the argument
/// where one is at fault, with what the kernel expects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KernargError {
    /// The caller passed more or fewer explicit arguments than the kernel declares.
    #[error("kernel `{kernel}` takes {expected} explicit argument(s), {given} given")]
    ArgumentCount {
        /// The kernel's name.
        kernel: String,
        /// Explicit arguments in the kernel's metadata.
        expected: usize,
        /// Arguments given.
        given: usize,
    },
    /// An argument's value does not fit what the metadata declares (kind or size).
    #[error("kernel `{kernel}`, argument {index}{}: the kernel expects {expected}, got {given}", name_part(.name.as_deref()))]
    ArgumentMismatch {
        /// The kernel's name.
        kernel: String,
        /// Index among the kernel's explicit arguments (0-based, the order of the source).
        index: usize,
        /// The argument's `.name` from the metadata, if it has one.
        name: Option<String>,
        /// What the metadata declares, e.g. `a 4-byte by_value scalar`.
        expected: String,
        /// What was given, e.g. `an 8-byte value`.
        given: String,
    },
    /// The kernel needs something aqueduct does not provide.
    #[error("kernel `{kernel}`, argument {index} ({what}): {why}")]
    Unsupported {
        /// The kernel's name.
        kernel: String,
        /// Index of the argument in the metadata's `.args` (hidden arguments included).
        index: usize,
        /// The argument's value kind, e.g. `hidden_printf_buffer`.
        what: String,
        /// Why it cannot be served.
        why: &'static str,
    },
    /// The grid, the work-group or the LDS request is not acceptable for this kernel.
    #[error("kernel `{kernel}`: {detail}")]
    Geometry {
        /// The kernel's name.
        kernel: String,
        /// What is wrong.
        detail: String,
    },
    /// The kernel's metadata contradicts itself (an argument outside the kernarg segment, a
    /// preload range past its end, ...).
    #[error("kernel `{kernel}`: inconsistent metadata: {detail}")]
    Metadata {
        /// The kernel's name.
        kernel: String,
        /// What is inconsistent.
        detail: String,
    },
    /// The destination is smaller than the kernel's kernarg segment.
    #[error("kernel `{kernel}`: the kernarg buffer has {len} bytes, the segment needs {needed}")]
    BufferTooSmall {
        /// The kernel's name.
        kernel: String,
        /// Bytes given.
        len: usize,
        /// Bytes the segment needs.
        needed: usize,
    },
}

fn name_part(name: Option<&str>) -> String {
    name.map_or_else(String::new, |n| format!(" `{n}`"))
}
