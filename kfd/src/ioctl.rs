//! Typed ioctl requests, in the style of rustix: one [`Opcode`] value per request, computed from
//! direction, type, number and argument size exactly as `_IOR`/`_IOW`/`_IOWR` do, and one
//! zero-sized request type per ioctl that ties the opcode to its argument struct.

use std::ffi::c_void;
use std::fmt;
use std::os::fd::RawFd;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

use crate::errno::Errno;
use crate::sys::Sys;

/// Direction bits of a request, named from the caller's side as in `<asm-generic/ioctl.h>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// `_IOC_NONE`: no argument is copied.
    None,
    /// `_IOC_WRITE`: the caller's struct is copied to the kernel.
    Write,
    /// `_IOC_READ`: the kernel fills the caller's struct.
    Read,
    /// `_IOC_READ | _IOC_WRITE`: copied in and back out.
    ReadWrite,
}

// The generic Linux layout (x86-64, aarch64, riscv64): nr 7:0, type 15:8, size 29:16, dir 31:30.
// mips, powerpc and sparc use other widths; aqueduct does not target them.
const NR_SHIFT: u32 = 0;
const TYPE_SHIFT: u32 = 8;
const SIZE_SHIFT: u32 = 16;
const DIR_SHIFT: u32 = 30;
const SIZE_BITS: u32 = 14;
const DIR_WRITE: u32 = 1;
const DIR_READ: u32 = 2;

/// An ioctl request number.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Opcode(u32);

impl Opcode {
    /// `_IOC(dir, group, nr, size)`. Panics (at compile time in const contexts) if `size`
    /// does not fit the 14-bit size field.
    pub const fn new(direction: Direction, group: u8, number: u8, size: usize) -> Self {
        assert!(
            size < (1 << SIZE_BITS),
            "ioctl argument too large for the size field"
        );
        let dir = match direction {
            Direction::None => 0,
            Direction::Write => DIR_WRITE,
            Direction::Read => DIR_READ,
            Direction::ReadWrite => DIR_READ | DIR_WRITE,
        };
        Self(
            (dir << DIR_SHIFT)
                | ((size as u32) << SIZE_SHIFT)
                | ((group as u32) << TYPE_SHIFT)
                | ((number as u32) << NR_SHIFT),
        )
    }

    /// `_IO(group, nr)`.
    #[doc(alias = "_IO")]
    pub const fn none(group: u8, number: u8) -> Self {
        Self::new(Direction::None, group, number, 0)
    }

    /// `_IOR(group, nr, T)`: the kernel writes a `T`.
    #[doc(alias = "_IOR")]
    pub const fn read<T>(group: u8, number: u8) -> Self {
        Self::new(Direction::Read, group, number, size_of::<T>())
    }

    /// `_IOW(group, nr, T)`: the kernel reads a `T`.
    #[doc(alias = "_IOW")]
    pub const fn write<T>(group: u8, number: u8) -> Self {
        Self::new(Direction::Write, group, number, size_of::<T>())
    }

    /// `_IOWR(group, nr, T)`: the kernel reads and writes a `T`.
    #[doc(alias = "_IOWR")]
    pub const fn read_write<T>(group: u8, number: u8) -> Self {
        Self::new(Direction::ReadWrite, group, number, size_of::<T>())
    }

    /// Reinterpret a raw request number (as received by a kernel model).
    pub const fn from_raw(raw: u32) -> Self {
        Self(raw)
    }

    /// The raw request number passed to `ioctl(2)`.
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// `_IOC_NR`.
    pub const fn number(self) -> u8 {
        (self.0 >> NR_SHIFT) as u8
    }

    /// `_IOC_TYPE`.
    pub const fn group(self) -> u8 {
        (self.0 >> TYPE_SHIFT) as u8
    }

    /// `_IOC_SIZE`: the argument size encoded in the request.
    pub const fn size(self) -> usize {
        ((self.0 >> SIZE_SHIFT) & ((1 << SIZE_BITS) - 1)) as usize
    }

    /// `_IOC_DIR`.
    pub const fn direction(self) -> Direction {
        match self.0 >> DIR_SHIFT {
            0 => Direction::None,
            DIR_WRITE => Direction::Write,
            DIR_READ => Direction::Read,
            _ => Direction::ReadWrite,
        }
    }
}

impl fmt::Debug for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Opcode({:#010x}: {:?} '{}' {:#04x} size {})",
            self.0,
            self.direction(),
            self.group() as char,
            self.number(),
            self.size()
        )
    }
}

/// One ioctl request: its C name, opcode and argument struct.
///
/// # Safety
///
/// Implementors promise that `OPCODE` is the request the kernel expects for an argument of type
/// `Arg` (so the kernel reads and writes no more than `size_of::<Arg>()` bytes of it), and that
/// `Arg` is the kernel's struct (any bit pattern the kernel writes is a valid `Arg`).
pub unsafe trait Ioctl {
    /// The `#[repr(C)]` argument struct.
    type Arg: FromBytes + IntoBytes + Immutable + KnownLayout + fmt::Debug;
    /// The C macro name, e.g. `"AMDKFD_IOC_ACQUIRE_VM"`; errors carry it.
    const NAME: &'static str;
    /// The request number.
    const OPCODE: Opcode;
}

/// A request whose argument carries no user pointer that the kernel or the GPU will write
/// through, so it can be issued from safe code (pointers the kernel only reads are fine: a bad
/// one yields `EFAULT`, never memory corruption).
///
/// # Safety
///
/// Implementors promise the property above.
pub unsafe trait PlainIoctl: Ioctl {}

/// A failed ioctl: which request, and the errno the kernel returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{request} failed: {errno}")]
pub struct IoctlError {
    /// The C name of the request.
    pub request: &'static str,
    /// What the kernel returned.
    pub errno: Errno,
}

/// Issue a plain request.
pub fn call<I: PlainIoctl>(sys: &dyn Sys, fd: RawFd, arg: &mut I::Arg) -> Result<(), IoctlError> {
    // SAFETY: `I: PlainIoctl` promises the kernel writes through no pointer inside `arg`, and
    // `I: Ioctl` that the kernel touches exactly the `size_of::<I::Arg>()` bytes of `*arg`,
    // which is a valid, exclusively borrowed `I::Arg`.
    unsafe { call_unchecked::<I>(sys, fd, arg) }
}

/// Issue any request.
///
/// # Safety
///
/// Every user pointer or GPU address inside `arg` must be valid for whatever the kernel (and,
/// for queue and memory requests, the GPU) will do with it, for as long as it will do it.
pub unsafe fn call_unchecked<I: Ioctl>(
    sys: &dyn Sys,
    fd: RawFd,
    arg: &mut I::Arg,
) -> Result<(), IoctlError> {
    let ptr: *mut I::Arg = arg;
    // SAFETY: `ptr` comes from a live `&mut I::Arg` and `I::OPCODE` encodes exactly its size
    // (the `Ioctl` contract); the caller vouches for pointers inside the struct.
    unsafe { sys.ioctl(fd, I::OPCODE, ptr.cast::<c_void>()) }
        .map(drop)
        .map_err(|errno| IoctlError {
            request: I::NAME,
            errno,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_matches_the_c_macros() {
        // _IOWR('K', 0x02, 96-byte struct) and _IOR('K', 0x01, 8-byte struct), by hand.
        assert_eq!(
            Opcode::new(Direction::ReadWrite, b'K', 0x02, 96).raw(),
            0xc060_4b02
        );
        assert_eq!(Opcode::read::<[u32; 2]>(b'K', 0x01).raw(), 0x8008_4b01);
        assert_eq!(Opcode::write::<u64>(b'K', 0x17).raw(), 0x4008_4b17);
        assert_eq!(Opcode::none(b'K', 0x27).raw(), 0x0000_4b27);
        let op = Opcode::from_raw(0xc058_4b02);
        assert_eq!(
            (op.direction(), op.group(), op.number(), op.size()),
            (Direction::ReadWrite, b'K', 2, 88)
        );
    }
}
