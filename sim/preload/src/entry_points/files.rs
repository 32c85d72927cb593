//! Opening, closing and duplicating files, `fcntl` and `ioctl`.

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void};
use std::path::Path;

use kfd::Errno;
use kfd::ioctl::Opcode;
use kfd::sys::{OFlag, Sys};

use super::{fail_int, fd_device, path_arg};
use crate::fds::Device;
use crate::paths::{Served, classify};
use crate::{guard, next, simulator};

/// The device's path in `/dev`.
pub(super) fn device_path(device: Device) -> String {
    match device {
        Device::Kfd => "/dev/kfd".to_owned(),
        Device::Render(minor) => format!("/dev/dri/renderD{minor}"),
    }
}

/// Open a simulated device: a new fd on a new file, recorded in the fd table.
pub(super) fn open_device(device: Device, flags: c_int) -> Result<c_int, Errno> {
    let simulator = simulator::get()?;
    let _inside = guard::enter();
    let fd = simulator.machine.open(
        Path::new(&device_path(device)),
        OFlag::from_bits_retain(flags),
    )?;
    if simulator.fds.opened(fd, device).is_none() {
        let _ = simulator.machine.close(fd);
        return Err(Errno::EMFILE);
    }
    Ok(fd)
}

/// Every `open` variant: `host` makes the call on the host (with the path it is given, which
/// is the program's or the mirror's).
///
/// # Safety
///
/// As for `open(2)`: `path` is null or NUL-terminated.
unsafe fn open_any(
    path: *const c_char,
    flags: c_int,
    host: impl FnOnce(*const c_char) -> c_int,
) -> c_int {
    if guard::inside() {
        return host(path);
    }
    // SAFETY: the caller's contract.
    let Some(name) = (unsafe { path_arg(path) }) else {
        return host(path);
    };
    let result = match classify(name) {
        Served::Host => return host(path),
        Served::Kfd => open_device(Device::Kfd, flags),
        Served::Render(minor) => open_device(Device::Render(minor), flags),
        Served::OtherDriNode => Err(Errno::ENOENT),
        // Opening a device through its /proc link opens the device again: a new file, as the
        // kernel does for a character device (the link is not followed to the old file).
        Served::OwnFd(fd) => match fd_device(fd) {
            Some(device) => open_device(device, flags),
            None => return host(path),
        },
        Served::Mirrored(name) => match simulator::get() {
            Ok(simulator) => {
                let mirrored = {
                    let _inside = guard::enter();
                    simulator.mirror.path_for(&simulator.machine, &name)
                };
                return host(mirrored.as_ptr());
            }
            Err(errno) => Err(errno),
        },
    };
    result.unwrap_or_else(fail_int)
}

/// `open(2)`.
///
/// # Safety
///
/// As for libc's `open`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    unsafe { open_any(path, flags, |p| next::OPEN.get()(p, flags, mode)) }
}

/// `open64(2)`.
///
/// # Safety
///
/// As for libc's `open64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: c_uint) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    unsafe { open_any(path, flags, |p| next::OPEN64.get()(p, flags, mode)) }
}

/// `openat(2)`. A relative path is the host's (the directories the interposer serves are
/// real directories in the mirror, so a path relative to an fd on one of them just works).
///
/// # Safety
///
/// As for libc's `openat`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn openat(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    unsafe { open_any(path, flags, |p| next::OPENAT.get()(dirfd, p, flags, mode)) }
}

/// `openat64(2)`.
///
/// # Safety
///
/// As for libc's `openat64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn openat64(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: c_uint,
) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    unsafe { open_any(path, flags, |p| next::OPENAT64.get()(dirfd, p, flags, mode)) }
}

/// `__open_2`: what `open` compiles to under `_FORTIFY_SOURCE` when no mode is passed.
///
/// # Safety
///
/// As for `open` without `O_CREAT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __open_2(path: *const c_char, flags: c_int) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    unsafe { open(path, flags, 0) }
}

/// `__open64_2`, the fortified `open64`.
///
/// # Safety
///
/// As for `open64` without `O_CREAT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __open64_2(path: *const c_char, flags: c_int) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    unsafe { open64(path, flags, 0) }
}

/// `__openat_2`, the fortified `openat`.
///
/// # Safety
///
/// As for `openat` without `O_CREAT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __openat_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    unsafe { openat(dirfd, path, flags, 0) }
}

/// `__openat64_2`, the fortified `openat64`.
///
/// # Safety
///
/// As for `openat64` without `O_CREAT`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __openat64_2(dirfd: c_int, path: *const c_char, flags: c_int) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    unsafe { openat64(dirfd, path, flags, 0) }
}

/// Forget `fd` if it is simulated, releasing its file when it was the last number on it.
/// `Some(result)` if the close was done here.
fn close_simulated(fd: c_int) -> Option<c_int> {
    if guard::inside() {
        return None;
    }
    let simulator = simulator::built()?;
    let (_, last) = simulator.fds.closing(fd)?;
    if !last {
        return None;
    }
    let _inside = guard::enter();
    Some(simulator.machine.close(fd).map_or_else(fail_int, |()| 0))
}

/// `close(2)`.
///
/// # Safety
///
/// As for libc's `close`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    if let Some(result) = close_simulated(fd) {
        return result;
    }
    // SAFETY: forwarded under the caller's contract.
    unsafe { next::CLOSE.get()(fd) }
}

/// Record `new` as a duplicate of `old` once a dup succeeded.
fn duplicated(old: c_int, new: c_int) -> c_int {
    if new >= 0
        && !guard::inside()
        && let Some(simulator) = simulator::built()
    {
        simulator.fds.duplicated(old, new);
    }
    new
}

/// `dup(2)`.
///
/// # Safety
///
/// As for libc's `dup`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dup(old: c_int) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    duplicated(old, unsafe { next::DUP.get()(old) })
}

/// `dup2(2)`: a simulated `new` is closed first, as the kernel closes it.
///
/// # Safety
///
/// As for libc's `dup2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dup2(old: c_int, new: c_int) -> c_int {
    if old != new {
        let _ = close_simulated(new);
    }
    // SAFETY: forwarded under the caller's contract.
    duplicated(old, unsafe { next::DUP2.get()(old, new) })
}

/// `dup3(2)`.
///
/// # Safety
///
/// As for libc's `dup3`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dup3(old: c_int, new: c_int, flags: c_int) -> c_int {
    if old != new {
        let _ = close_simulated(new);
    }
    // SAFETY: forwarded under the caller's contract.
    duplicated(old, unsafe { next::DUP3.get()(old, new, flags) })
}

fn after_fcntl(fd: c_int, cmd: c_int, result: c_int) -> c_int {
    if cmd == libc::F_DUPFD || cmd == libc::F_DUPFD_CLOEXEC {
        duplicated(fd, result)
    } else {
        result
    }
}

/// `fcntl(2)`; `arg` is the optional third argument (see the module documentation of
/// `entry_points` for why a fixed parameter reads it correctly).
///
/// # Safety
///
/// As for libc's `fcntl`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    after_fcntl(fd, cmd, unsafe { next::FCNTL.get()(fd, cmd, arg) })
}

/// `fcntl64`, glibc's name for `fcntl` with 64-bit locks.
///
/// # Safety
///
/// As for libc's `fcntl64`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, arg: c_ulong) -> c_int {
    // SAFETY: forwarded under the caller's contract.
    after_fcntl(fd, cmd, unsafe { next::FCNTL64.get()(fd, cmd, arg) })
}

/// `ioctl(2)`: on a simulated fd, the simulated driver's ioctl.
///
/// # Safety
///
/// As for libc's `ioctl`: `arg` is valid for what the request does with it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int {
    if !guard::inside()
        && let Some(simulator) = simulator::built()
        && let Some(description) = simulator.fds.get(fd)
    {
        let _inside = guard::enter();
        // The kernel takes the request as an unsigned int (the upper half of a
        // sign-extended int request is dropped there too).
        let request = Opcode::from_raw(request as u32);
        // SAFETY: the caller's contract is the `Sys::ioctl` contract.
        let result = unsafe { simulator.machine.ioctl(fd, request, arg) };
        if description.device == Device::Kfd {
            simulator.doorbells.ensure_running(&simulator.machine);
        }
        return result.unwrap_or_else(fail_int);
    }
    // SAFETY: forwarded under the caller's contract.
    unsafe { next::IOCTL.get()(fd, request, arg) }
}
