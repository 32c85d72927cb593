//! Calls that glibc implements on top of its internal `open` (which an interposer never
//! sees): `fopen`, `opendir`; and the path calls `readlink` and `realpath`.

use std::ffi::{CStr, c_char, c_int};
use std::os::unix::ffi::OsStrExt;

use kfd::Errno;

use super::files::open_device;
use super::{fail, fd_device, path_arg};
use crate::fds::Device;
use crate::paths::{Served, classify};
use crate::{guard, next, simulator};

/// What a path means for these calls.
enum Target {
    Device(Device),
    /// This process' `/proc` link to a simulated fd.
    FdLink(Device),
    Mirrored(std::ffi::CString),
    Missing(Errno),
    Host,
}

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
    match classify(name) {
        Served::Host => Target::Host,
        Served::Kfd => Target::Device(Device::Kfd),
        Served::Render(minor) => Target::Device(Device::Render(minor)),
        Served::OtherDriNode => Target::Missing(Errno::ENOENT),
        Served::OwnFd(fd) => fd_device(fd).map_or(Target::Host, Target::FdLink),
        Served::Mirrored(name) => match simulator::get() {
            Ok(simulator) => {
                let _inside = guard::enter();
                Target::Mirrored(simulator.mirror.path_for(&simulator.machine, &name))
            }
            Err(errno) => Target::Missing(errno),
        },
    }
}

/// The `open` flags of an `fopen` mode string.
fn mode_flags(mode: &CStr) -> c_int {
    let bytes = mode.to_bytes();
    let mut flags = match (bytes.first(), bytes.contains(&b'+')) {
        (_, true) => libc::O_RDWR,
        (Some(b'r'), false) => libc::O_RDONLY,
        _ => libc::O_WRONLY,
    };
    if bytes.contains(&b'e') {
        flags |= libc::O_CLOEXEC;
    }
    flags
}

/// `fopen` of a device: the simulator's fd under a `FILE`.
///
/// # Safety
///
/// `mode` is a NUL-terminated string.
unsafe fn fopen_device(device: Device, mode: *const c_char) -> *mut libc::FILE {
    // SAFETY: the caller's contract.
    let flags = mode_flags(unsafe { CStr::from_ptr(mode) });
    match open_device(device, flags) {
        Ok(fd) => {
            // SAFETY: `fd` is open and ours to hand over; `mode` is NUL-terminated.
            let file = unsafe { libc::fdopen(fd, mode) };
            if file.is_null() {
                let errno = Errno::last();
                // SAFETY: `fd` was not taken over.
                unsafe { super::files::close(fd) };
                return fail(errno, std::ptr::null_mut());
            }
            file
        }
        Err(errno) => fail(errno, std::ptr::null_mut()),
    }
}

/// `fopen(3)`.
///
/// # Safety
///
/// As for libc's `fopen`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fopen(path: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    // SAFETY: the caller's contract.
    match unsafe { target(path) } {
        // SAFETY: forwarded under the caller's contract.
        Target::Host => unsafe { next::FOPEN.get()(path, mode) },
        // SAFETY: the caller's contract.
        Target::Device(device) | Target::FdLink(device) if !mode.is_null() => unsafe {
            fopen_device(device, mode)
        },
        Target::Device(_) | Target::FdLink(_) => fail(Errno::EINVAL, std::ptr::null_mut()),
        // SAFETY: forwarded with the mirror's path.
        Target::Mirrored(mirrored) => unsafe { next::FOPEN.get()(mirrored.as_ptr(), mode) },
        Target::Missing(errno) => fail(errno, std::ptr::null_mut()),
    }
}

/// `fopen64`.
///
/// # Safety
///
/// As for libc's `fopen64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fopen64(path: *const c_char, mode: *const c_char) -> *mut libc::FILE {
    // SAFETY: the caller's contract.
    match unsafe { target(path) } {
        // SAFETY: forwarded under the caller's contract.
        Target::Host => unsafe { next::FOPEN64.get()(path, mode) },
        // SAFETY: the caller's contract.
        Target::Device(device) | Target::FdLink(device) if !mode.is_null() => unsafe {
            fopen_device(device, mode)
        },
        Target::Device(_) | Target::FdLink(_) => fail(Errno::EINVAL, std::ptr::null_mut()),
        // SAFETY: forwarded with the mirror's path.
        Target::Mirrored(mirrored) => unsafe { next::FOPEN64.get()(mirrored.as_ptr(), mode) },
        Target::Missing(errno) => fail(errno, std::ptr::null_mut()),
    }
}

/// `opendir(3)`.
///
/// # Safety
///
/// As for libc's `opendir`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn opendir(path: *const c_char) -> *mut libc::DIR {
    // SAFETY: the caller's contract.
    match unsafe { target(path) } {
        // SAFETY: forwarded under the caller's contract.
        Target::Host => unsafe { next::OPENDIR.get()(path) },
        Target::Device(_) | Target::FdLink(_) => fail(Errno::ENOTDIR, std::ptr::null_mut()),
        // SAFETY: forwarded with the mirror's path.
        Target::Mirrored(mirrored) => unsafe { next::OPENDIR.get()(mirrored.as_ptr()) },
        Target::Missing(errno) => fail(errno, std::ptr::null_mut()),
    }
}

/// `readlink(2)`: the mirror's symbolic links are relative, as sysfs's are.
///
/// # Safety
///
/// As for libc's `readlink`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn readlink(path: *const c_char, buf: *mut c_char, size: usize) -> isize {
    // SAFETY: the caller's contract.
    match unsafe { target(path) } {
        // SAFETY: forwarded under the caller's contract.
        Target::Host => unsafe { next::READLINK.get()(path, buf, size) },
        Target::Device(_) => fail(Errno::EINVAL, -1),
        // The kernel's link names the device file (truncated to `size`, no NUL, as readlink
        // does).
        Target::FdLink(device) => {
            let name = super::files::device_path(device);
            let n = name.len().min(size);
            // SAFETY: the caller's contract: `buf` is valid for `size` bytes of writes.
            unsafe { std::ptr::copy_nonoverlapping(name.as_ptr().cast::<c_char>(), buf, n) };
            n as isize
        }
        // SAFETY: forwarded with the mirror's path.
        Target::Mirrored(mirrored) => unsafe { next::READLINK.get()(mirrored.as_ptr(), buf, size) },
        Target::Missing(errno) => fail(errno, -1),
    }
}

/// Copy `name` into `resolved` (`PATH_MAX` bytes) or a new `malloc`ed buffer if it is null,
/// as `realpath` returns it.
///
/// # Safety
///
/// `resolved` is null or valid for `PATH_MAX` bytes.
unsafe fn realpath_result(name: &[u8], resolved: *mut c_char) -> *mut c_char {
    if name.len() >= libc::PATH_MAX as usize {
        return fail(Errno::from_raw(libc::ENAMETOOLONG), std::ptr::null_mut());
    }
    let out = if resolved.is_null() {
        // SAFETY: malloc has no preconditions.
        let buffer = unsafe { libc::malloc(name.len() + 1) }.cast::<c_char>();
        if buffer.is_null() {
            return fail(Errno::ENOMEM, std::ptr::null_mut());
        }
        buffer
    } else {
        resolved
    };
    // SAFETY: `out` holds at least `name.len() + 1` bytes (checked or allocated above).
    unsafe {
        std::ptr::copy_nonoverlapping(name.as_ptr().cast::<c_char>(), out, name.len());
        *out.add(name.len()) = 0;
    }
    out
}

/// `realpath(3)`: a mirrored path resolves in the mirror and is reported under its own name.
///
/// # Safety
///
/// As for libc's `realpath`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn realpath(path: *const c_char, resolved: *mut c_char) -> *mut c_char {
    // SAFETY: the caller's contract.
    match unsafe { target(path) } {
        // SAFETY: forwarded under the caller's contract.
        Target::Host => unsafe { next::REALPATH.get()(path, resolved) },
        Target::Device(device) | Target::FdLink(device) => {
            let name = super::files::device_path(device);
            // SAFETY: the caller's contract on `resolved`.
            unsafe { realpath_result(name.as_bytes(), resolved) }
        }
        Target::Mirrored(mirrored) => {
            // SAFETY: a NUL-terminated path; a null buffer makes libc allocate.
            let found = unsafe { next::REALPATH.get()(mirrored.as_ptr(), std::ptr::null_mut()) };
            if found.is_null() {
                return std::ptr::null_mut();
            }
            // SAFETY: realpath returned a NUL-terminated malloc'ed string.
            let full = unsafe { CStr::from_ptr(found) }.to_bytes().to_vec();
            // SAFETY: allocated by libc's realpath, freed once.
            unsafe { libc::free(found.cast()) };
            let root = simulator::built().map(|s| s.mirror.root().as_os_str().as_bytes().to_vec());
            let name = match root {
                Some(root) if full.starts_with(&root) => full[root.len()..].to_vec(),
                _ => full,
            };
            // SAFETY: the caller's contract on `resolved`.
            unsafe { realpath_result(&name, resolved) }
        }
        Target::Missing(errno) => fail(errno, std::ptr::null_mut()),
    }
}
