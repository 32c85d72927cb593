//! The seam between aqueduct and the operating system.
//!
//! Everything the driver does to the kernel goes through [`Sys`]: opening device files, ioctls,
//! mmap/munmap/madvise, reading sysfs, and the few process facts the driver needs. [`Linux`]
//! implements it with real system calls; the `amdgpu-sim` crate implements it with a model of
//! the amdkfd driver and a simulated GPU. Above this trait the code path is identical for both:
//! the same request numbers, the same argument structs, the same errno handling.
//!
//! [`Linux`]: crate::linux::Linux

use std::ffi::{OsString, c_int, c_void};
use std::fmt;
use std::num::NonZeroUsize;
use std::os::fd::RawFd;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::Arc;

pub use nix::fcntl::OFlag;
pub use nix::sys::mman::{MapFlags, MmapAdvise, ProtFlags};

use crate::errno::Errno;
use crate::ioctl_number::Opcode;

/// [`Sys::kernel_id`] of the host kernel.
pub const HOST_KERNEL: u64 = 0;

/// Which implementation is behind a [`Sys`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The real kernel.
    Linux,
    /// The simulator; the string describes the simulated machine.
    Simulator(String),
}

/// The operating-system interface the driver is written against.
///
/// Implementations must behave like the Linux system calls of the same names, including their
/// errno values: the driver's error handling is tested against the simulator and must hold on
/// hardware.
pub trait Sys: Send + Sync + fmt::Debug {
    /// Which implementation this is.
    fn backend(&self) -> Backend;

    /// `open(2)` without `O_CREAT`.
    fn open(&self, path: &Path, flags: OFlag) -> Result<RawFd, Errno>;

    /// `close(2)`.
    fn close(&self, fd: RawFd) -> Result<(), Errno>;

    /// `ioctl(2)` with a pointer argument; returns the non-negative result.
    ///
    /// # Safety
    ///
    /// `arg` must be valid for reads and writes of `request.size()` bytes (or unused for
    /// requests of size 0), and any pointers inside it valid for what the kernel does with them.
    unsafe fn ioctl(&self, fd: RawFd, request: Opcode, arg: *mut c_void) -> Result<c_int, Errno>;

    /// `mmap(2)`. `fd` is `None` for anonymous mappings. `offset` is passed as the kernel sees
    /// it (amdkfd offsets use the top bits, so it is unsigned here).
    ///
    /// # Safety
    ///
    /// With `MAP_FIXED` the range `[addr, addr+len)` is replaced: it must not hold anything the
    /// program still uses. The replacement unmaps what was there, atomically (no other
    /// thread's mapping can fall into the range meanwhile), and an implementation treats it as
    /// [`Sys::munmap`] of the range followed by the new mapping.
    unsafe fn mmap(
        &self,
        addr: Option<NonZeroUsize>,
        len: NonZeroUsize,
        prot: ProtFlags,
        flags: MapFlags,
        fd: Option<RawFd>,
        offset: u64,
    ) -> Result<NonNull<c_void>, Errno>;

    /// `munmap(2)`.
    ///
    /// # Safety
    ///
    /// Nothing may access `[addr, addr+len)` afterwards.
    unsafe fn munmap(&self, addr: NonNull<c_void>, len: usize) -> Result<(), Errno>;

    /// `madvise(2)` (the driver uses `MADV_DONTFORK` on device mappings).
    ///
    /// # Safety
    ///
    /// As for `madvise(2)`: advice that discards pages must only be given for memory whose
    /// contents may be lost.
    unsafe fn madvise(
        &self,
        addr: NonNull<c_void>,
        len: usize,
        advice: MmapAdvise,
    ) -> Result<(), Errno>;

    /// Read a whole file (sysfs topology text).
    fn read_file(&self, path: &Path) -> Result<Vec<u8>, Errno>;

    /// List the names in a directory (sysfs topology nodes), in no particular order.
    fn read_dir(&self, path: &Path) -> Result<Vec<OsString>, Errno>;

    /// `getpid(2)`: fork detection compares it with the pid recorded at open.
    fn process_id(&self) -> i32;

    /// The CPU page size.
    fn page_size(&self) -> usize;

    /// Which kernel this interface reaches. Values that compare equal share kernel state (the
    /// kernel keeps one KFD process per OS process, so the driver keeps one process binding per
    /// kernel). Everything that reaches the host kernel through real system calls, [`Linux`] and
    /// an LD_PRELOAD simulator included, is [`HOST_KERNEL`]; an in-process simulator returns a
    /// distinct non-zero value per simulated machine, the same for every handle to one machine.
    ///
    /// [`Linux`]: crate::linux::Linux
    fn kernel_id(&self) -> u64 {
        HOST_KERNEL
    }

    /// `fstat(2)` of `fd`: its device number `(major, minor)` if it is a character device,
    /// `None` if it is another kind of file. A fresh copy of the driver uses it to check that
    /// the files a binding record names are still the device files it recorded
    /// ([`crate::binding`]). Backends that never hand a binding over need not implement it.
    fn char_device(&self, fd: RawFd) -> Result<Option<(u32, u32)>, Errno> {
        let _ = fd;
        Err(Errno::ENOSYS)
    }

    /// Whether [`Sys::notify_doorbell`] must be called after each doorbell store. On hardware
    /// the store itself reaches the GPU and this is `false`; a queue reads it once at creation.
    fn doorbell_needs_notify(&self) -> bool {
        false
    }

    /// Tell the other side that `value` was just stored to the 64-bit doorbell at `doorbell`.
    /// The simulator wakes the command processor that owns it; on hardware this does nothing.
    fn notify_doorbell(&self, doorbell: NonNull<u64>, value: u64) {
        let _ = (doorbell, value);
    }

    /// What [`Sys::notify_doorbell`] does for the doorbell at `doorbell`, resolved once: a
    /// [`Doorbell`](crate::Doorbell) asks when it is made (after CREATE_QUEUE) and then tells
    /// the returned notifier of each store, with no lookup per store. `None` (the default, and
    /// hardware's answer): call [`Sys::notify_doorbell`] per store if
    /// [`Sys::doorbell_needs_notify`] says so.
    fn doorbell_notifier(&self, doorbell: NonNull<u64>) -> Option<Arc<dyn DoorbellNotifier>> {
        let _ = doorbell;
        None
    }
}

/// Told of every store to one doorbell ([`Sys::doorbell_notifier`]): the simulator's handle on
/// the command processor behind it. Never used on hardware, where the store reaches the GPU.
pub trait DoorbellNotifier: Send + Sync + fmt::Debug {
    /// `value` was just stored to the doorbell.
    fn rung(&self, value: u64);
}
