//! Info attribute values and how they are written to the caller's memory: each `*_get_info`
//! computes a [`Value`] in safe code, and [`Value::write`] is the one place it reaches `void*`.

use std::ffi::c_void;

/// One attribute's value, in the C type `hsa.h` documents for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// `bool` (one byte).
    Bool(bool),
    /// `uint16_t`.
    U16(u16),
    /// `uint32_t` (and every enum).
    U32(u32),
    /// `uint64_t`, `size_t`, a handle or a pointer.
    U64(u64),
    /// Bytes written as they are (arrays, structs, bitmasks).
    Bytes(Vec<u8>),
    /// A fixed-size `char` array: the text, then NULs up to `len` bytes (text longer than
    /// `len - 1` is cut, the last byte stays NUL).
    Chars {
        /// The text.
        text: String,
        /// Bytes written.
        len: usize,
    },
}

impl Value {
    /// A `char[len]` holding `text`.
    pub fn chars(text: impl Into<String>, len: usize) -> Self {
        Self::Chars {
            text: text.into(),
            len,
        }
    }

    /// An array of `uint32_t`.
    pub fn u32s(values: &[u32]) -> Self {
        Self::Bytes(values.iter().flat_map(|v| v.to_ne_bytes()).collect())
    }

    /// An array of `uint16_t`.
    pub fn u16s(values: &[u16]) -> Self {
        Self::Bytes(values.iter().flat_map(|v| v.to_ne_bytes()).collect())
    }

    /// An array of `bool`.
    pub fn bools(values: &[bool]) -> Self {
        Self::Bytes(values.iter().map(|&v| u8::from(v)).collect())
    }

    /// The bytes it occupies in the caller's memory.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Self::Bool(v) => vec![u8::from(*v)],
            Self::U16(v) => v.to_ne_bytes().to_vec(),
            Self::U32(v) => v.to_ne_bytes().to_vec(),
            Self::U64(v) => v.to_ne_bytes().to_vec(),
            Self::Bytes(bytes) => bytes.clone(),
            Self::Chars { text, len } => {
                let mut bytes = vec![0; *len];
                let n = text.len().min(len.saturating_sub(1));
                bytes[..n].copy_from_slice(&text.as_bytes()[..n]);
                bytes
            }
        }
    }

    /// Write it to `out`.
    ///
    /// # Safety
    ///
    /// `out` is non-null and valid for writes of the size `hsa.h` gives the attribute this value
    /// answers (which is [`Value::to_bytes`]'s length).
    pub unsafe fn write(&self, out: *mut c_void) {
        let bytes = self.to_bytes();
        // SAFETY: the caller guarantees `out` holds the attribute's C type, whose size is
        // `bytes.len()`; `bytes` is our own vector, so the ranges cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.cast::<u8>(), bytes.len()) };
    }
}

/// Write `value` to `out`, or refuse a null `out` as ROCr does.
///
/// # Safety
///
/// As [`Value::write`] when `out` is not null.
pub unsafe fn answer(value: &Value, out: *mut c_void) -> crate::error::Result<crate::Status> {
    if out.is_null() {
        return Err(crate::error::Error::invalid_argument(
            "a null value pointer",
        ));
    }
    // SAFETY: non-null; the rest is the caller's contract.
    unsafe { value.write(out) };
    Ok(crate::Status::SUCCESS)
}
