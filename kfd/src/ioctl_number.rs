//! Ioctl request numbers: [`Opcode`], computed from direction, type, number and argument size
//! exactly as `_IOR`/`_IOW`/`_IOWR` do, and decoded back into them. What the [`crate::Sys`] seam
//! passes; the typed requests built on it are in [`crate::ioctl`].

use std::fmt;

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
