//! The values a caller gives for a kernel's explicit arguments.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// One explicit kernel argument, in the order of the kernel's source. Building one never
/// allocates: scalars are held inline, aggregates and buffers are borrowed.
///
/// A buffer argument is typed: [`Arg::buffer`] takes the [`Buffer`](crate::Buffer) itself,
/// and the launch keeps the buffer's memory alive until the kernel has completed, even if
/// every handle to it is dropped first. [`Arg::ptr`] is the raw form for research code: any
/// device address, checked only for being a pointer, with nothing kept alive (the caller
/// answers for the memory).
///
/// ```
/// use aqueduct::kernarg::Arg;
/// let args = [Arg::ptr(0x7f00_0000_1000), Arg::u32(1024), Arg::f32(2.5)];
/// assert_eq!(args[1].size(), 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg<'a> {
    /// A device address for a `global_buffer` argument (a global or constant pointer), or for
    /// an image, sampler or pipe argument (the address of its descriptor or object): the raw
    /// form, for research code; nothing keeps the memory alive.
    Pointer(u64),
    /// Device memory the launch keeps alive until it completes ([`Arg::buffer`]), passed as
    /// its device address.
    Memory(MemoryRef<'a>),
    /// A `by_value` scalar of 1, 2, 4 or 8 bytes, little-endian.
    Scalar(Scalar),
    /// A `by_value` aggregate (a struct, a vector, an array), its exact bytes.
    Bytes(&'a [u8]),
    /// A `dynamic_shared_pointer` argument (OpenCL `__local T*`): this many bytes of LDS,
    /// placed by the builder after the kernel's static LDS.
    Local(u32),
}

/// What keeps device memory alive: a handle the launch clones and holds until its kernel has
/// completed.
pub trait KeepAlive: Sync {
    /// A reference that keeps the memory allocated and mapped while it lives.
    fn keep_alive(&self) -> Arc<dyn Any + Send + Sync>;
}

/// A typed reference to device memory used by a launch: the address passed to the kernel and
/// the owner whose memory the launch keeps alive.
#[derive(Clone, Copy)]
pub struct MemoryRef<'a> {
    address: u64,
    owner: &'a dyn KeepAlive,
}

impl<'a> MemoryRef<'a> {
    /// `address` inside the memory `owner` keeps alive.
    pub fn new(address: u64, owner: &'a dyn KeepAlive) -> Self {
        Self { address, owner }
    }

    /// The device address passed to the kernel.
    pub fn address(&self) -> u64 {
        self.address
    }

    /// A reference that keeps the memory alive.
    pub fn keep_alive(&self) -> Arc<dyn Any + Send + Sync> {
        self.owner.keep_alive()
    }
}

impl fmt::Debug for MemoryRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MemoryRef({:#x})", self.address)
    }
}

impl PartialEq for MemoryRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.address == other.address
            && std::ptr::addr_eq(
                std::ptr::from_ref(self.owner),
                std::ptr::from_ref(other.owner),
            )
    }
}

impl Eq for MemoryRef<'_> {}

/// A scalar of up to 8 bytes, kept inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scalar {
    bytes: [u8; 8],
    len: u8,
}

impl Scalar {
    /// The scalar's bytes, little-endian.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    fn new<const N: usize>(le: [u8; N]) -> Self {
        let mut bytes = [0; 8];
        bytes[..N].copy_from_slice(&le);
        Self {
            bytes,
            len: N as u8,
        }
    }
}

impl<'a> Arg<'a> {
    /// A raw device address (the research form): checked only for being a pointer argument,
    /// and nothing keeps the memory alive; prefer [`Arg::buffer`].
    pub fn ptr(address: u64) -> Self {
        Self::Pointer(address)
    }

    /// Device memory at `address` that `owner` keeps alive while the launch runs (what
    /// [`Arg::buffer`] builds from a [`Buffer`](crate::Buffer)).
    pub fn memory(address: u64, owner: &'a dyn KeepAlive) -> Self {
        Self::Memory(MemoryRef::new(address, owner))
    }

    /// The device address of a pointer argument, typed or raw.
    pub fn address(&self) -> Option<u64> {
        match self {
            Self::Pointer(address) => Some(*address),
            Self::Memory(memory) => Some(memory.address),
            _ => None,
        }
    }

    /// An 8-bit unsigned scalar (`uchar`, `bool`).
    pub fn u8(value: u8) -> Self {
        Self::Scalar(Scalar::new([value]))
    }

    /// An 8-bit signed scalar.
    pub fn i8(value: i8) -> Self {
        Self::Scalar(Scalar::new(value.to_le_bytes()))
    }

    /// A 16-bit unsigned scalar.
    pub fn u16(value: u16) -> Self {
        Self::Scalar(Scalar::new(value.to_le_bytes()))
    }

    /// A 16-bit signed scalar.
    pub fn i16(value: i16) -> Self {
        Self::Scalar(Scalar::new(value.to_le_bytes()))
    }

    /// A half-precision float, given as its bit pattern (`half`, `_Float16`).
    pub fn f16_bits(bits: u16) -> Self {
        Self::u16(bits)
    }

    /// A 32-bit unsigned scalar.
    pub fn u32(value: u32) -> Self {
        Self::Scalar(Scalar::new(value.to_le_bytes()))
    }

    /// A 32-bit signed scalar.
    pub fn i32(value: i32) -> Self {
        Self::Scalar(Scalar::new(value.to_le_bytes()))
    }

    /// A single-precision float.
    pub fn f32(value: f32) -> Self {
        Self::Scalar(Scalar::new(value.to_le_bytes()))
    }

    /// A 64-bit unsigned scalar.
    pub fn u64(value: u64) -> Self {
        Self::Scalar(Scalar::new(value.to_le_bytes()))
    }

    /// A 64-bit signed scalar.
    pub fn i64(value: i64) -> Self {
        Self::Scalar(Scalar::new(value.to_le_bytes()))
    }

    /// A double-precision float.
    pub fn f64(value: f64) -> Self {
        Self::Scalar(Scalar::new(value.to_le_bytes()))
    }

    /// An aggregate passed by value: its bytes exactly as the kernel lays it out.
    pub fn bytes(bytes: &'a [u8]) -> Self {
        Self::Bytes(bytes)
    }

    /// `bytes` of dynamic LDS for a `__local` pointer argument.
    pub fn local(bytes: u32) -> Self {
        Self::Local(bytes)
    }

    /// Bytes the value occupies in the kernarg segment (a pointer 8, LDS offsets 4).
    pub fn size(&self) -> usize {
        match self {
            Self::Pointer(_) | Self::Memory(_) => 8,
            Self::Scalar(s) => s.as_bytes().len(),
            Self::Bytes(b) => b.len(),
            Self::Local(_) => 4,
        }
    }

    /// The bytes a `by_value` argument takes from this value (a scalar or an aggregate).
    pub(crate) fn value_bytes(&self) -> Option<&[u8]> {
        match self {
            Self::Scalar(s) => Some(s.as_bytes()),
            Self::Bytes(b) => Some(b),
            Self::Pointer(_) | Self::Memory(_) | Self::Local(_) => None,
        }
    }

    /// What the value is, for error messages: `a device pointer`, `a 4-byte scalar`, ...
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Pointer(_) | Self::Memory(_) => "a device pointer".to_owned(),
            Self::Scalar(s) => format!("{} scalar", sized(s.as_bytes().len())),
            Self::Bytes(b) => format!("{} aggregate", sized(b.len())),
            Self::Local(n) => format!("a request for {n} bytes of dynamic LDS"),
        }
    }
}

/// `a 4-byte`, `an 8-byte`, `an 18-byte`, ...
pub(crate) fn sized(bytes: usize) -> String {
    let text = bytes.to_string();
    // "an 8-byte", "an 11-byte", "an 18-byte", "an 80-byte": the spoken number starts with a vowel.
    let article = if text.starts_with('8') || text == "11" || text == "18" {
        "an"
    } else {
        "a"
    };
    format!("{article} {text}-byte")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_are_little_endian_and_sized() {
        assert_eq!(Arg::u32(0x0102_0304).size(), 4);
        let Arg::Scalar(s) = Arg::u32(0x0102_0304) else {
            panic!("not a scalar")
        };
        assert_eq!(s.as_bytes(), &[4, 3, 2, 1]);
        let Arg::Scalar(s) = Arg::f64(1.0) else {
            panic!("not a scalar")
        };
        assert_eq!(s.as_bytes(), &1.0f64.to_le_bytes());
        assert_eq!(Arg::f16_bits(0x3c00).size(), 2);
        assert_eq!(Arg::i8(-1).size(), 1);
        assert_eq!(Arg::bytes(&[0; 12]).size(), 12);
    }

    #[test]
    fn descriptions_read_well() {
        assert_eq!(Arg::u64(1).describe(), "an 8-byte scalar");
        assert_eq!(Arg::u32(1).describe(), "a 4-byte scalar");
        assert_eq!(Arg::bytes(&[0; 18]).describe(), "an 18-byte aggregate");
        assert_eq!(Arg::bytes(&[0; 11]).describe(), "an 11-byte aggregate");
        assert_eq!(Arg::bytes(&[0; 12]).describe(), "a 12-byte aggregate");
    }
}
