//! `stat` and friends, `access` and the extended-attribute reads: the device files are
//! character devices with the kernel's numbers and no extended attributes; mirrored paths
//! answer from the mirror.

use std::ffi::{c_char, c_int, c_uint, c_void};

use kfd::Errno;

use super::{fail_int, fd_device, path_arg};
use crate::fds::Device;
use crate::mirror::DRM_MAJOR;
use crate::paths::{Served, classify};
use crate::{guard, next, simulator};

/// The major number of `/dev/kfd`. amdkfd registers a dynamic major (`register_chrdev(0,
/// ...)`), so real machines differ; 235 is a value seen on machines with amdkfd (unsure:
/// nothing should depend on it).
const KFD_MAJOR: u32 = 235;

/// The device numbers of a simulated device file.
fn device_numbers(device: Device) -> (u32, u32) {
    match device {
        Device::Kfd => (KFD_MAJOR, 0),
        Device::Render(minor) => (DRM_MAJOR, minor),
    }
}

/// What a path means for a status call.
enum Target {
    /// A simulated device file (that exists on the simulated machine).
    Device(Device),
    /// This process' `/proc` link to a simulated fd: the device when followed, the host's
    /// symbolic link when not.
    FdLink(Device),
    /// The mirror's file at this path.
    Mirrored(std::ffi::CString),
    /// Does not exist here.
    Missing(Errno),
    /// The host's.
    Host,
}

/// Resolve an absolute path; relative ones (and calls from the simulator) are the host's.
///
/// # Safety
///
/// `path` is null or NUL-terminated.
unsafe fn target(path: *const c_char) -> Target {
    if guard::inside() {
        return Target::Host;
    }
    // SAFETY: the caller's contract.
    let Some(name) = (unsafe { path_arg(path) }) else {
        return Target::Host;
    };
    let served = classify(name);
    if served == Served::Host {
        return Target::Host;
    }
    if let Served::OwnFd(fd) = served {
        return fd_device(fd).map_or(Target::Host, Target::FdLink);
    }
    let simulator = match simulator::get() {
        Ok(simulator) => simulator,
        Err(errno) => return Target::Missing(errno),
    };
    match served {
        Served::Host | Served::OwnFd(_) => Target::Host,
        Served::Kfd => Target::Device(Device::Kfd),
        Served::Render(minor) => {
            if simulator
                .machine
                .gpus()
                .iter()
                .any(|gpu| gpu.render_minor == minor)
            {
                Target::Device(Device::Render(minor))
            } else {
                Target::Missing(Errno::ENOENT)
            }
        }
        Served::OtherDriNode => Target::Missing(Errno::ENOENT),
        Served::Mirrored(name) => {
            let _inside = guard::enter();
            Target::Mirrored(simulator.mirror.path_for(&simulator.machine, &name))
        }
    }
}

/// Fill a `stat` or `stat64` (the same layout on x86_64 glibc) for a device file.
macro_rules! device_stat {
    ($buf:expr, $device:expr) => {{
        let (major, minor) = device_numbers($device);
        // SAFETY: `$buf` is the caller's valid out-pointer (the stat contract); an all-zero
        // stat is a valid value of the plain C struct.
        unsafe {
            $buf.write(std::mem::zeroed());
            let st = &mut *$buf;
            st.st_mode = libc::S_IFCHR | 0o666;
            st.st_rdev = libc::makedev(major, minor);
            // devtmpfs's device number, and a distinct inode per device file.
            st.st_dev = libc::makedev(0, 5);
            st.st_ino = u64::from(major) << 20 | u64::from(minor);
            st.st_nlink = 1;
            st.st_blksize = 4096;
        }
        0
    }};
}

/// One path-based status call: `$host` is the next definition, called with a path;
/// `$follow` says whether a final symbolic link is followed.
macro_rules! path_status {
    ($path:expr, $buf:expr, $follow:expr, $host:expr) => {{
        // SAFETY: the caller's contract.
        match unsafe { target($path) } {
            Target::Host => $host($path),
            Target::Device(device) => device_stat!($buf, device),
            Target::FdLink(device) if $follow => device_stat!($buf, device),
            Target::FdLink(_) => $host($path),
            Target::Mirrored(mirrored) => $host(mirrored.as_ptr()),
            Target::Missing(errno) => fail_int(errno),
        }
    }};
}

/// `stat(2)`.
///
/// # Safety
///
/// As for libc's `stat`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn stat(path: *const c_char, buf: *mut libc::stat) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    path_status!(path, buf, true, |p| unsafe { next::STAT.get()(p, buf) })
}

/// `stat64`.
///
/// # Safety
///
/// As for libc's `stat64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn stat64(path: *const c_char, buf: *mut libc::stat64) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    path_status!(path, buf, true, |p| unsafe { next::STAT64.get()(p, buf) })
}

/// `lstat(2)`.
///
/// # Safety
///
/// As for libc's `lstat`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lstat(path: *const c_char, buf: *mut libc::stat) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    path_status!(path, buf, false, |p| unsafe { next::LSTAT.get()(p, buf) })
}

/// `lstat64`.
///
/// # Safety
///
/// As for libc's `lstat64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lstat64(path: *const c_char, buf: *mut libc::stat64) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    path_status!(path, buf, false, |p| unsafe { next::LSTAT64.get()(p, buf) })
}

/// `fstat(2)`.
///
/// # Safety
///
/// As for libc's `fstat`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fstat(fd: c_int, buf: *mut libc::stat) -> c_int {
    match fd_device(fd) {
        Some(device) => device_stat!(buf, device),
        // SAFETY: forwarded under the caller's contract.
        None => unsafe { next::FSTAT.get()(fd, buf) },
    }
}

/// `fstat64`.
///
/// # Safety
///
/// As for libc's `fstat64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fstat64(fd: c_int, buf: *mut libc::stat64) -> c_int {
    match fd_device(fd) {
        Some(device) => device_stat!(buf, device),
        // SAFETY: forwarded under the caller's contract.
        None => unsafe { next::FSTAT64.get()(fd, buf) },
    }
}

/// Whether an `*at` call with these arguments is about `dirfd` itself.
///
/// # Safety
///
/// `path` is null or NUL-terminated.
unsafe fn about_the_fd(path: *const c_char, flags: c_int) -> bool {
    // SAFETY: the caller's contract.
    flags & libc::AT_EMPTY_PATH != 0
        && unsafe { path_arg(path) }.is_some_and(std::ffi::CStr::is_empty)
}

/// `fstatat(2)` (`newfstatat`).
///
/// # Safety
///
/// As for libc's `fstatat`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fstatat(
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat,
    flags: c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    if unsafe { about_the_fd(path, flags) }
        && let Some(device) = fd_device(dirfd)
    {
        return device_stat!(buf, device);
    }
    let follow = flags & libc::AT_SYMLINK_NOFOLLOW == 0;
    // SAFETY: forwarded under the caller's contract.
    path_status!(path, buf, follow, |p| unsafe {
        next::FSTATAT.get()(dirfd, p, buf, flags)
    })
}

/// `fstatat64`.
///
/// # Safety
///
/// As for libc's `fstatat64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fstatat64(
    dirfd: c_int,
    path: *const c_char,
    buf: *mut libc::stat64,
    flags: c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    if unsafe { about_the_fd(path, flags) }
        && let Some(device) = fd_device(dirfd)
    {
        return device_stat!(buf, device);
    }
    let follow = flags & libc::AT_SYMLINK_NOFOLLOW == 0;
    // SAFETY: forwarded under the caller's contract.
    path_status!(path, buf, follow, |p| unsafe {
        next::FSTATAT64.get()(dirfd, p, buf, flags)
    })
}

/// Fill a `statx` for a device file.
///
/// # Safety
///
/// `buf` is valid for writes of a `statx`.
unsafe fn device_statx(buf: *mut libc::statx, device: Device) -> c_int {
    let (major, minor) = device_numbers(device);
    // SAFETY: the caller's contract; an all-zero statx is a valid value of the C struct.
    unsafe {
        buf.write(std::mem::zeroed());
        let st = &mut *buf;
        st.stx_mask = libc::STATX_BASIC_STATS;
        st.stx_mode = (libc::S_IFCHR | 0o666) as u16;
        st.stx_rdev_major = major;
        st.stx_rdev_minor = minor;
        st.stx_dev_major = 0;
        st.stx_dev_minor = 5;
        st.stx_ino = u64::from(major) << 20 | u64::from(minor);
        st.stx_nlink = 1;
        st.stx_blksize = 4096;
    }
    0
}

/// `statx(2)` (what Rust's `std::fs::metadata` uses).
///
/// # Safety
///
/// As for libc's `statx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn statx(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mask: c_uint,
    buf: *mut libc::statx,
) -> c_int {
    // SAFETY: the caller's contract.
    if unsafe { about_the_fd(path, flags) }
        && let Some(device) = fd_device(dirfd)
    {
        // SAFETY: the caller's valid out-pointer.
        return unsafe { device_statx(buf, device) };
    }
    // SAFETY: the caller's contract.
    match unsafe { target(path) } {
        // SAFETY: the caller's valid out-pointer.
        Target::Device(device) => unsafe { device_statx(buf, device) },
        // SAFETY: the caller's valid out-pointer.
        Target::FdLink(device) if flags & libc::AT_SYMLINK_NOFOLLOW == 0 => unsafe {
            device_statx(buf, device)
        },
        // SAFETY: forwarded under the caller's contract (an fd link not followed is the
        // link itself).
        Target::Host | Target::FdLink(_) => unsafe {
            next::STATX.get()(dirfd, path, flags, mask, buf)
        },
        // SAFETY: forwarded with the mirror's path.
        Target::Mirrored(mirrored) => unsafe {
            next::STATX.get()(dirfd, mirrored.as_ptr(), flags, mask, buf)
        },
        Target::Missing(errno) => fail_int(errno),
    }
}

/// `access(2)`: the device files are readable and writable by everyone.
///
/// # Safety
///
/// As for libc's `access`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn access(path: *const c_char, mode: c_int) -> c_int {
    // SAFETY: the caller's contract.
    match unsafe { target(path) } {
        // SAFETY: forwarded under the caller's contract.
        Target::Host => unsafe { next::ACCESS.get()(path, mode) },
        Target::Device(_) | Target::FdLink(_) => 0,
        // SAFETY: forwarded with the mirror's path.
        Target::Mirrored(mirrored) => unsafe { next::ACCESS.get()(mirrored.as_ptr(), mode) },
        Target::Missing(errno) => fail_int(errno),
    }
}

/// `faccessat(2)`.
///
/// # Safety
///
/// As for libc's `faccessat`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn faccessat(
    dirfd: c_int,
    path: *const c_char,
    mode: c_int,
    flags: c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    match unsafe { target(path) } {
        // SAFETY: forwarded under the caller's contract.
        Target::Host => unsafe { next::FACCESSAT.get()(dirfd, path, mode, flags) },
        Target::Device(_) | Target::FdLink(_) => 0,
        // SAFETY: forwarded with the mirror's path.
        Target::Mirrored(mirrored) => unsafe {
            next::FACCESSAT.get()(dirfd, mirrored.as_ptr(), mode, flags)
        },
        Target::Missing(errno) => fail_int(errno),
    }
}

/// One extended-attribute read by path: a device file has none (`ENODATA` for a name, an
/// empty list); `$host` is the next definition, called with a path.
macro_rules! xattr_read {
    ($path:expr, $none:expr, $host:expr) => {{
        // SAFETY: the caller's contract.
        match unsafe { target($path) } {
            Target::Host | Target::FdLink(_) => $host($path),
            Target::Device(_) => $none,
            Target::Mirrored(mirrored) => $host(mirrored.as_ptr()),
            Target::Missing(errno) => fail_int(errno) as isize,
        }
    }};
}

/// `getxattr(2)`.
///
/// # Safety
///
/// As for libc's `getxattr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn getxattr(
    path: *const c_char,
    name: *const c_char,
    value: *mut c_void,
    size: usize,
) -> isize {
    xattr_read!(
        path,
        fail_int(Errno::from_raw(libc::ENODATA)) as isize,
        |p| unsafe {
            // SAFETY: forwarded under the caller's contract.
            next::GETXATTR.get()(p, name, value, size)
        }
    )
}

/// `lgetxattr(2)`.
///
/// # Safety
///
/// As for libc's `lgetxattr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lgetxattr(
    path: *const c_char,
    name: *const c_char,
    value: *mut c_void,
    size: usize,
) -> isize {
    xattr_read!(
        path,
        fail_int(Errno::from_raw(libc::ENODATA)) as isize,
        |p| unsafe {
            // SAFETY: forwarded under the caller's contract.
            next::LGETXATTR.get()(p, name, value, size)
        }
    )
}

/// `listxattr(2)`.
///
/// # Safety
///
/// As for libc's `listxattr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn listxattr(path: *const c_char, list: *mut c_char, size: usize) -> isize {
    xattr_read!(path, 0, |p| unsafe {
        // SAFETY: forwarded under the caller's contract.
        next::LISTXATTR.get()(p, list, size)
    })
}

/// `llistxattr(2)`.
///
/// # Safety
///
/// As for libc's `llistxattr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn llistxattr(path: *const c_char, list: *mut c_char, size: usize) -> isize {
    xattr_read!(path, 0, |p| unsafe {
        // SAFETY: forwarded under the caller's contract.
        next::LLISTXATTR.get()(p, list, size)
    })
}
