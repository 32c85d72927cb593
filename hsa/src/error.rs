//! The crate's one error type: an HSA status with the reason, made from the safe API's errors.

use aqueduct::ErrorKind;

use crate::status::Status;

/// Why a call failed: the status the caller gets, and a reason for the log.
#[derive(Debug, thiserror::Error)]
#[error("{status:?}: {reason}")]
pub struct Error {
    /// What the HSA function returns.
    pub status: Status,
    /// Why, for `tracing`.
    pub reason: String,
}

/// This crate's result.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error with `status`, for `reason`.
    pub fn new(status: Status, reason: impl Into<String>) -> Self {
        Self {
            status,
            reason: reason.into(),
        }
    }

    /// `HSA_STATUS_ERROR_INVALID_ARGUMENT`, for `reason`.
    pub fn invalid_argument(reason: impl Into<String>) -> Self {
        Self::new(Status::INVALID_ARGUMENT, reason)
    }
}

impl From<aqueduct::Error> for Error {
    fn from(error: aqueduct::Error) -> Self {
        let status = match error.kind() {
            ErrorKind::OutOfMemory => Status::OUT_OF_RESOURCES,
            ErrorKind::InvalidArgument => Status::INVALID_ARGUMENT,
            ErrorKind::Closed => Status::NOT_INITIALIZED,
            ErrorKind::GpuStopped => Status::MEMORY_FAULT,
            _ => Status::ERROR,
        };
        Self::new(status, error.to_string())
    }
}

/// Run the body of an exported function: its error becomes the returned status (logged), and a
/// panic becomes `HSA_STATUS_ERROR` instead of unwinding into C.
pub fn entry(name: &'static str, body: impl FnOnce() -> Result<Status>) -> Status {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(status)) => status,
        Ok(Err(error)) => {
            tracing::debug!(function = name, %error, "HSA call failed");
            error.status
        }
        Err(_) => {
            tracing::error!(function = name, "HSA call panicked");
            Status::ERROR
        }
    }
}
