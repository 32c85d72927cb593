//! Error numbers as the kernel returns them.
//!
//! A transparent `i32` rather than an enum (the rustix choice): the kernel can return values
//! no libc names, and amdkfd does: CREATE_QUEUE answers an unknown queue type with the
//! kernel-internal `ENOTSUPP` (524), which must survive the trip to the caller intact.

use std::fmt;

/// A positive errno value, as found in `errno` after a failed system call.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Errno(i32);

macro_rules! errnos {
    ($($name:ident = $value:expr, $text:literal;)*) => {
        impl Errno {
            $(
                #[doc = $text]
                pub const $name: Self = Self($value);
            )*

            /// The symbolic name (`"EINVAL"`), if this is a value the driver knows.
            pub const fn name(self) -> Option<&'static str> {
                match self.0 {
                    $(v if v == $value => Some(stringify!($name)),)*
                    _ => None,
                }
            }

            /// A short description (`"invalid argument"`), if this is a value the driver knows.
            pub const fn description(self) -> Option<&'static str> {
                match self.0 {
                    $(v if v == $value => Some($text),)*
                    _ => None,
                }
            }
        }
    };
}

errnos! {
    EPERM = libc::EPERM, "operation not permitted";
    ENOENT = libc::ENOENT, "no such file or directory";
    ESRCH = libc::ESRCH, "no such process";
    EINTR = libc::EINTR, "interrupted system call";
    EIO = libc::EIO, "input/output error";
    ENXIO = libc::ENXIO, "no such device or address";
    EBADF = libc::EBADF, "bad file descriptor";
    EAGAIN = libc::EAGAIN, "resource temporarily unavailable";
    ENOMEM = libc::ENOMEM, "out of memory";
    EACCES = libc::EACCES, "permission denied";
    EFAULT = libc::EFAULT, "bad address";
    EBUSY = libc::EBUSY, "device or resource busy";
    EEXIST = libc::EEXIST, "file exists";
    ENODEV = libc::ENODEV, "no such device";
    ENOTDIR = libc::ENOTDIR, "not a directory";
    EISDIR = libc::EISDIR, "is a directory";
    EINVAL = libc::EINVAL, "invalid argument";
    EMFILE = libc::EMFILE, "too many open files";
    ENOTTY = libc::ENOTTY, "inappropriate ioctl for device";
    ENOSPC = libc::ENOSPC, "no space left on device";
    ERANGE = libc::ERANGE, "result out of range";
    ENOSYS = libc::ENOSYS, "function not implemented";
    ETIME = libc::ETIME, "timer expired";
    EOPNOTSUPP = libc::EOPNOTSUPP, "operation not supported";
    EADDRINUSE = libc::EADDRINUSE, "address already in use";
    ETIMEDOUT = libc::ETIMEDOUT, "connection timed out";
    ERESTARTSYS = 512, "kernel-internal: restart the interrupted system call";
    ENOTSUPP = 524, "kernel-internal: operation not supported";
}

impl Errno {
    /// Wrap a raw positive errno value.
    pub const fn from_raw(value: i32) -> Self {
        Self(value)
    }

    /// The raw positive value.
    pub const fn raw(self) -> i32 {
        self.0
    }

    /// The calling thread's current `errno`.
    pub fn last() -> Self {
        Self(nix::errno::Errno::last_raw())
    }
}

impl fmt::Debug for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "Errno({})", self.0),
        }
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.name(), self.description()) {
            (Some(name), Some(text)) => write!(f, "{name} ({text})"),
            _ => write!(f, "errno {}", self.0),
        }
    }
}

impl std::error::Error for Errno {}

impl From<nix::errno::Errno> for Errno {
    fn from(value: nix::errno::Errno) -> Self {
        Self(value as i32)
    }
}

impl From<Errno> for std::io::Error {
    fn from(value: Errno) -> Self {
        std::io::Error::from_raw_os_error(value.0)
    }
}

impl From<&std::io::Error> for Errno {
    fn from(value: &std::io::Error) -> Self {
        Self(value.raw_os_error().unwrap_or(libc::EIO))
    }
}

#[cfg(test)]
mod tests {
    use super::Errno;

    #[test]
    fn kernel_internal_values_keep_their_number_and_name() {
        assert_eq!(Errno::ENOTSUPP.raw(), 524);
        assert_eq!(Errno::ENOTSUPP.name(), Some("ENOTSUPP"));
        assert_eq!(Errno::from_raw(9999).name(), None);
        assert_eq!(Errno::from_raw(9999).to_string(), "errno 9999");
        assert_eq!(Errno::EBUSY.to_string(), "EBUSY (device or resource busy)");
        assert_eq!(Errno::from(nix::errno::Errno::EINVAL), Errno::EINVAL);
    }
}
