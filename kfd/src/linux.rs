//! [`Sys`] on the real kernel, through libc's `open`/`ioctl`/`mmap`/`munmap`/`close` (via `nix`),
//! never raw syscalls, so that an LD_PRELOAD interposer can stand in for the kernel.

use std::ffi::{OsString, c_int, c_void};
use std::num::NonZeroUsize;
use std::os::fd::{BorrowedFd, IntoRawFd, RawFd};
use std::path::Path;
use std::ptr::NonNull;

use nix::sys::mman::{self, MapFlags, MmapAdvise, ProtFlags};
use nix::sys::stat::Mode;

use crate::errno::Errno;
use crate::ioctl::Opcode;
use crate::sys::{Backend, OFlag, Sys};

/// The real operating system.
#[derive(Clone, Copy, Debug, Default)]
pub struct Linux;

impl Sys for Linux {
    fn backend(&self) -> Backend {
        Backend::Linux
    }

    fn open(&self, path: &Path, flags: OFlag) -> Result<RawFd, Errno> {
        nix::fcntl::open(path, flags, Mode::empty())
            .map(IntoRawFd::into_raw_fd)
            .map_err(Errno::from)
    }

    fn close(&self, fd: RawFd) -> Result<(), Errno> {
        nix::unistd::close(fd).map_err(Errno::from)
    }

    unsafe fn ioctl(&self, fd: RawFd, request: Opcode, arg: *mut c_void) -> Result<c_int, Errno> {
        // SAFETY: the caller guarantees `arg` is valid for the request (the `Sys::ioctl`
        // contract); the kernel validates `fd` and everything else.
        let ret = unsafe { libc::ioctl(fd, request.raw() as _, arg) };
        nix::errno::Errno::result(ret).map_err(Errno::from)
    }

    unsafe fn mmap(
        &self,
        addr: Option<NonZeroUsize>,
        len: NonZeroUsize,
        prot: ProtFlags,
        flags: MapFlags,
        fd: Option<RawFd>,
        offset: u64,
    ) -> Result<NonNull<c_void>, Errno> {
        // amdkfd mmap offsets use bits 63:62; off_t is signed, so the bit pattern is passed on
        // unchanged (the kernel takes the offset as an unsigned long).
        let offset = offset as libc::off_t;
        let result = match fd {
            // SAFETY: the caller upholds the MAP_FIXED contract of `Sys::mmap`.
            None => unsafe { mman::mmap_anonymous(addr, len, prot, flags) },
            Some(fd) if fd < 0 => Err(nix::errno::Errno::EBADF),
            Some(fd) => {
                // SAFETY: `fd` is not -1 (the guard above), `borrow_raw`'s one requirement on
                // the number; it is only borrowed for this call, and a closed number makes
                // the kernel return EBADF.
                let fd = unsafe { BorrowedFd::borrow_raw(fd) };
                // SAFETY: as above, the caller upholds the MAP_FIXED contract.
                unsafe { mman::mmap(addr, len, prot, flags, fd, offset) }
            }
        };
        result.map_err(Errno::from)
    }

    unsafe fn munmap(&self, addr: NonNull<c_void>, len: usize) -> Result<(), Errno> {
        // SAFETY: the caller promises nothing uses the range afterwards.
        unsafe { mman::munmap(addr, len) }.map_err(Errno::from)
    }

    unsafe fn madvise(
        &self,
        addr: NonNull<c_void>,
        len: usize,
        advice: MmapAdvise,
    ) -> Result<(), Errno> {
        // SAFETY: the caller upholds the `Sys::madvise` contract.
        unsafe { mman::madvise(addr, len, advice) }.map_err(Errno::from)
    }

    fn read_file(&self, path: &Path) -> Result<Vec<u8>, Errno> {
        std::fs::read(path).map_err(|e| Errno::from(&e))
    }

    fn read_dir(&self, path: &Path) -> Result<Vec<OsString>, Errno> {
        std::fs::read_dir(path)
            .and_then(|dir| dir.map(|entry| entry.map(|e| e.file_name())).collect())
            .map_err(|e| Errno::from(&e))
    }

    fn char_device(&self, fd: RawFd) -> Result<Option<(u32, u32)>, Errno> {
        // SAFETY: an all-zero `stat` is a valid value of the plain C struct.
        let mut status: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `status` is a valid out-pointer; the kernel validates `fd` (EBADF).
        let rc = unsafe { libc::fstat(fd, &raw mut status) };
        nix::errno::Errno::result(rc).map_err(Errno::from)?;
        if status.st_mode & libc::S_IFMT != libc::S_IFCHR {
            return Ok(None);
        }
        Ok(Some((
            libc::major(status.st_rdev),
            libc::minor(status.st_rdev),
        )))
    }

    fn process_id(&self) -> i32 {
        nix::unistd::getpid().as_raw()
    }

    fn page_size(&self) -> usize {
        nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
            .ok()
            .flatten()
            .map_or(4096, |size| size as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_syscalls_report_real_errno() {
        let sys = Linux;
        assert_eq!(
            sys.open(Path::new("/nonexistent/aqueduct"), OFlag::O_RDONLY),
            Err(Errno::ENOENT)
        );
        assert_eq!(sys.close(-1), Err(Errno::EBADF));
        assert_eq!(sys.char_device(-1), Err(Errno::EBADF));
        assert!(sys.page_size() >= 4096);
        assert_eq!(sys.process_id(), std::process::id() as i32);
        let fd = sys
            .open(Path::new("/dev/null"), OFlag::O_RDWR | OFlag::O_CLOEXEC)
            .unwrap();
        let mut version = crate::abi::GetVersionArgs::default();
        // /dev/null is not /dev/kfd: the kernel answers the KFD request with ENOTTY.
        let err = crate::ioctl::call::<crate::ioctl::requests::GetVersion>(&sys, fd, &mut version)
            .unwrap_err();
        assert_eq!(err.errno, Errno::ENOTTY);
        assert_eq!(err.request, "AMDKFD_IOC_GET_VERSION");
        // /dev/null is the character device 1:3; a directory is no character device.
        assert_eq!(sys.char_device(fd), Ok(Some((1, 3))));
        sys.close(fd).unwrap();
        let dir = sys
            .open(Path::new("/proc"), OFlag::O_RDONLY | OFlag::O_CLOEXEC)
            .unwrap();
        assert_eq!(sys.char_device(dir), Ok(None));
        sys.close(dir).unwrap();
        let listing = sys.read_dir(Path::new("/proc/self")).unwrap();
        assert!(listing.iter().any(|n| n == "status"));
    }

    #[test]
    fn a_negative_fd_is_ebadf_not_a_panic() {
        let len = NonZeroUsize::new(4096).unwrap();
        // SAFETY: without MAP_FIXED nothing is replaced (and the call fails anyway).
        let err = unsafe {
            Linux.mmap(
                None,
                len,
                ProtFlags::PROT_READ,
                MapFlags::MAP_SHARED,
                Some(-1),
                0,
            )
        };
        assert_eq!(err, Err(Errno::EBADF));
    }

    #[test]
    fn anonymous_mappings_round_trip() {
        let sys = Linux;
        let len = NonZeroUsize::new(sys.page_size()).unwrap();
        // SAFETY: a fresh anonymous mapping without MAP_FIXED replaces nothing.
        let ptr = unsafe {
            sys.mmap(
                None,
                len,
                ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
                MapFlags::MAP_PRIVATE,
                None,
                0,
            )
        }
        .unwrap();
        // SAFETY: the page is mapped read-write and exclusively ours.
        unsafe { ptr.cast::<u64>().write(0xA5A5) };
        // SAFETY: the mapping is ours and no longer used.
        unsafe { sys.munmap(ptr, len.get()) }.unwrap();
    }
}
