//! Restarting ioctls that a signal interrupted, as libhsakmt's `kmtIoctl` does for every
//! request (kfd.md §1.3): EINTR (and the kernel-internal ERESTARTSYS, should a model leak it)
//! are retried at once; EAGAIN ("KFD locked during suspend or reset") a bounded number of
//! times with a short pause.
//!
//! Requests that make progress across a restart carry it in their arguments (MAP/UNMAP's
//! `n_success`, WAIT_EVENTS' remaining timeout), so a retry continues where the interrupted call
//! stopped: callers re-issue with the arguments the kernel copied back.

use std::time::Duration;

use crate::errno::Errno;
use crate::ioctl::IoctlError;

/// EAGAIN retries before the error is returned.
const EAGAIN_RETRIES: u32 = 200;
/// Pause between EAGAIN retries.
const EAGAIN_PAUSE: Duration = Duration::from_millis(1);

/// Whether `errno` means "interrupted: issue the same request again".
pub(crate) const fn is_interrupted(errno: Errno) -> bool {
    errno.raw() == Errno::EINTR.raw() || errno.raw() == Errno::ERESTARTSYS.raw()
}

/// Run `call` until it returns something other than an interruption.
pub(crate) fn restarting<T>(
    mut call: impl FnMut() -> Result<T, IoctlError>,
) -> Result<T, IoctlError> {
    let mut eagain = 0;
    loop {
        match call() {
            Err(err) if is_interrupted(err.errno) => {}
            Err(err) if err.errno == Errno::EAGAIN && eagain < EAGAIN_RETRIES => {
                eagain += 1;
                std::thread::sleep(EAGAIN_PAUSE);
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(errno: Errno) -> IoctlError {
        IoctlError {
            request: "AMDKFD_IOC_TEST",
            errno,
        }
    }

    #[test]
    fn interruptions_are_retried_and_real_errors_returned() {
        let mut calls = 0;
        let result = restarting(|| {
            calls += 1;
            match calls {
                1 => Err(failure(Errno::EINTR)),
                2 => Err(failure(Errno::ERESTARTSYS)),
                3 => Err(failure(Errno::EAGAIN)),
                _ => Ok(calls),
            }
        });
        assert_eq!(result, Ok(4));
        assert_eq!(
            restarting::<()>(|| Err(failure(Errno::EINVAL))),
            Err(failure(Errno::EINVAL))
        );
    }

    #[test]
    fn eagain_gives_up_eventually() {
        let mut calls = 0;
        let result = restarting::<()>(|| {
            calls += 1;
            Err(failure(Errno::EAGAIN))
        });
        assert_eq!(result, Err(failure(Errno::EAGAIN)));
        assert_eq!(calls, EAGAIN_RETRIES + 1);
    }
}
