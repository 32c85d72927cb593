//! The next definitions of the functions this library interposes: libc's, found with
//! `dlsym(RTLD_NEXT, ..)` on first use and cached.

use std::ffi::{CStr, c_char, c_int, c_uint, c_ulong, c_void};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicPtr, Ordering};

/// A lazily resolved next definition of a C function of type `F` (a function pointer type).
pub(crate) struct Next<F> {
    name: &'static CStr,
    resolved: AtomicPtr<c_void>,
    _type: PhantomData<F>,
}

impl<F: Copy> Next<F> {
    /// The next definition of `name`, resolved on first use.
    pub(crate) const fn new(name: &'static CStr) -> Self {
        Self {
            name,
            resolved: AtomicPtr::new(std::ptr::null_mut()),
            _type: PhantomData,
        }
    }

    /// The function. Aborts the process if no later object defines it: every name here is a
    /// glibc function, so that means the interposer was loaded into something that is not a
    /// glibc program, where nothing sensible can be done.
    pub(crate) fn get(&self) -> F {
        const { assert!(size_of::<F>() == size_of::<*mut c_void>()) };
        let mut function = self.resolved.load(Ordering::Acquire);
        if function.is_null() {
            // SAFETY: `name` is a NUL-terminated string; RTLD_NEXT is a valid pseudo-handle
            // in a shared object.
            function = unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) };
            if function.is_null() {
                let message = b"amdgpu-sim-preload: a libc function has no next definition\n";
                // SAFETY: writing a static buffer to fd 2; abort has no preconditions.
                unsafe {
                    libc::write(2, message.as_ptr().cast(), message.len());
                    libc::abort();
                }
            }
            self.resolved.store(function, Ordering::Release);
        }
        // SAFETY: `F` is a function pointer type (same size, checked above) whose signature is
        // the C signature of `name` in glibc, and `function` is that symbol's address.
        unsafe { std::mem::transmute_copy::<*mut c_void, F>(&function) }
    }
}

type Off = libc::off_t;

pub(crate) static OPEN: Next<unsafe extern "C" fn(*const c_char, c_int, ...) -> c_int> =
    Next::new(c"open");
pub(crate) static OPEN64: Next<unsafe extern "C" fn(*const c_char, c_int, ...) -> c_int> =
    Next::new(c"open64");
pub(crate) static OPENAT: Next<unsafe extern "C" fn(c_int, *const c_char, c_int, ...) -> c_int> =
    Next::new(c"openat");
pub(crate) static OPENAT64: Next<unsafe extern "C" fn(c_int, *const c_char, c_int, ...) -> c_int> =
    Next::new(c"openat64");
pub(crate) static CLOSE: Next<unsafe extern "C" fn(c_int) -> c_int> = Next::new(c"close");
pub(crate) static IOCTL: Next<unsafe extern "C" fn(c_int, c_ulong, ...) -> c_int> =
    Next::new(c"ioctl");
pub(crate) static MMAP: Next<
    unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, c_int, Off) -> *mut c_void,
> = Next::new(c"mmap");
pub(crate) static MMAP64: Next<
    unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, c_int, Off) -> *mut c_void,
> = Next::new(c"mmap64");
pub(crate) static MUNMAP: Next<unsafe extern "C" fn(*mut c_void, usize) -> c_int> =
    Next::new(c"munmap");
pub(crate) static DUP: Next<unsafe extern "C" fn(c_int) -> c_int> = Next::new(c"dup");
pub(crate) static DUP2: Next<unsafe extern "C" fn(c_int, c_int) -> c_int> = Next::new(c"dup2");
pub(crate) static DUP3: Next<unsafe extern "C" fn(c_int, c_int, c_int) -> c_int> =
    Next::new(c"dup3");
pub(crate) static FCNTL: Next<unsafe extern "C" fn(c_int, c_int, ...) -> c_int> =
    Next::new(c"fcntl");
pub(crate) static FCNTL64: Next<unsafe extern "C" fn(c_int, c_int, ...) -> c_int> =
    Next::new(c"fcntl64");
pub(crate) static STAT: Next<unsafe extern "C" fn(*const c_char, *mut libc::stat) -> c_int> =
    Next::new(c"stat");
pub(crate) static STAT64: Next<unsafe extern "C" fn(*const c_char, *mut libc::stat64) -> c_int> =
    Next::new(c"stat64");
pub(crate) static LSTAT: Next<unsafe extern "C" fn(*const c_char, *mut libc::stat) -> c_int> =
    Next::new(c"lstat");
pub(crate) static LSTAT64: Next<unsafe extern "C" fn(*const c_char, *mut libc::stat64) -> c_int> =
    Next::new(c"lstat64");
pub(crate) static FSTAT: Next<unsafe extern "C" fn(c_int, *mut libc::stat) -> c_int> =
    Next::new(c"fstat");
pub(crate) static FSTAT64: Next<unsafe extern "C" fn(c_int, *mut libc::stat64) -> c_int> =
    Next::new(c"fstat64");
pub(crate) static FSTATAT: Next<
    unsafe extern "C" fn(c_int, *const c_char, *mut libc::stat, c_int) -> c_int,
> = Next::new(c"fstatat");
pub(crate) static FSTATAT64: Next<
    unsafe extern "C" fn(c_int, *const c_char, *mut libc::stat64, c_int) -> c_int,
> = Next::new(c"fstatat64");
pub(crate) static STATX: Next<
    unsafe extern "C" fn(c_int, *const c_char, c_int, c_uint, *mut libc::statx) -> c_int,
> = Next::new(c"statx");
pub(crate) static ACCESS: Next<unsafe extern "C" fn(*const c_char, c_int) -> c_int> =
    Next::new(c"access");
pub(crate) static FACCESSAT: Next<
    unsafe extern "C" fn(c_int, *const c_char, c_int, c_int) -> c_int,
> = Next::new(c"faccessat");
pub(crate) static FOPEN: Next<
    unsafe extern "C" fn(*const c_char, *const c_char) -> *mut libc::FILE,
> = Next::new(c"fopen");
pub(crate) static FOPEN64: Next<
    unsafe extern "C" fn(*const c_char, *const c_char) -> *mut libc::FILE,
> = Next::new(c"fopen64");
pub(crate) static OPENDIR: Next<unsafe extern "C" fn(*const c_char) -> *mut libc::DIR> =
    Next::new(c"opendir");
pub(crate) static READLINK: Next<unsafe extern "C" fn(*const c_char, *mut c_char, usize) -> isize> =
    Next::new(c"readlink");
pub(crate) static REALPATH: Next<unsafe extern "C" fn(*const c_char, *mut c_char) -> *mut c_char> =
    Next::new(c"realpath");
pub(crate) static GETXATTR: Next<
    unsafe extern "C" fn(*const c_char, *const c_char, *mut c_void, usize) -> isize,
> = Next::new(c"getxattr");
pub(crate) static LGETXATTR: Next<
    unsafe extern "C" fn(*const c_char, *const c_char, *mut c_void, usize) -> isize,
> = Next::new(c"lgetxattr");
pub(crate) static LISTXATTR: Next<
    unsafe extern "C" fn(*const c_char, *mut c_char, usize) -> isize,
> = Next::new(c"listxattr");
pub(crate) static LLISTXATTR: Next<
    unsafe extern "C" fn(*const c_char, *mut c_char, usize) -> isize,
> = Next::new(c"llistxattr");
