//! `hsa_status_t`: the codes every HSA function returns, and their text (`hsa_status_string`).

use std::ffi::{CStr, c_char};

/// An `hsa_status_t` value.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Status(pub u32);

impl Status {
    /// `HSA_STATUS_SUCCESS`.
    pub const SUCCESS: Self = Self(0x0);
    /// `HSA_STATUS_INFO_BREAK`: a callback stopped an iteration.
    pub const INFO_BREAK: Self = Self(0x1);
    /// `HSA_STATUS_ERROR`.
    pub const ERROR: Self = Self(0x1000);
    /// `HSA_STATUS_ERROR_INVALID_ARGUMENT`.
    pub const INVALID_ARGUMENT: Self = Self(0x1001);
    /// `HSA_STATUS_ERROR_INVALID_QUEUE_CREATION`.
    pub const INVALID_QUEUE_CREATION: Self = Self(0x1002);
    /// `HSA_STATUS_ERROR_INVALID_ALLOCATION`.
    pub const INVALID_ALLOCATION: Self = Self(0x1003);
    /// `HSA_STATUS_ERROR_INVALID_AGENT`.
    pub const INVALID_AGENT: Self = Self(0x1004);
    /// `HSA_STATUS_ERROR_INVALID_REGION`.
    pub const INVALID_REGION: Self = Self(0x1005);
    /// `HSA_STATUS_ERROR_INVALID_SIGNAL`.
    pub const INVALID_SIGNAL: Self = Self(0x1006);
    /// `HSA_STATUS_ERROR_INVALID_QUEUE`.
    pub const INVALID_QUEUE: Self = Self(0x1007);
    /// `HSA_STATUS_ERROR_OUT_OF_RESOURCES`.
    pub const OUT_OF_RESOURCES: Self = Self(0x1008);
    /// `HSA_STATUS_ERROR_INVALID_PACKET_FORMAT`.
    pub const INVALID_PACKET_FORMAT: Self = Self(0x1009);
    /// `HSA_STATUS_ERROR_RESOURCE_FREE`.
    pub const RESOURCE_FREE: Self = Self(0x100A);
    /// `HSA_STATUS_ERROR_NOT_INITIALIZED`.
    pub const NOT_INITIALIZED: Self = Self(0x100B);
    /// `HSA_STATUS_ERROR_REFCOUNT_OVERFLOW`.
    pub const REFCOUNT_OVERFLOW: Self = Self(0x100C);
    /// `HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS`.
    pub const INCOMPATIBLE_ARGUMENTS: Self = Self(0x100D);
    /// `HSA_STATUS_ERROR_INVALID_INDEX`.
    pub const INVALID_INDEX: Self = Self(0x100E);
    /// `HSA_STATUS_ERROR_INVALID_ISA`.
    pub const INVALID_ISA: Self = Self(0x100F);
    /// `HSA_STATUS_ERROR_INVALID_CODE_OBJECT`.
    pub const INVALID_CODE_OBJECT: Self = Self(0x1010);
    /// `HSA_STATUS_ERROR_INVALID_EXECUTABLE`.
    pub const INVALID_EXECUTABLE: Self = Self(0x1011);
    /// `HSA_STATUS_ERROR_FROZEN_EXECUTABLE`.
    pub const FROZEN_EXECUTABLE: Self = Self(0x1012);
    /// `HSA_STATUS_ERROR_INVALID_SYMBOL_NAME`.
    pub const INVALID_SYMBOL_NAME: Self = Self(0x1013);
    /// `HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED`.
    pub const VARIABLE_ALREADY_DEFINED: Self = Self(0x1014);
    /// `HSA_STATUS_ERROR_VARIABLE_UNDEFINED`.
    pub const VARIABLE_UNDEFINED: Self = Self(0x1015);
    /// `HSA_STATUS_ERROR_EXCEPTION`.
    pub const EXCEPTION: Self = Self(0x1016);
    /// `HSA_STATUS_ERROR_INVALID_ISA_NAME`.
    pub const INVALID_ISA_NAME: Self = Self(0x1017);
    /// `HSA_STATUS_ERROR_INVALID_CODE_SYMBOL`.
    pub const INVALID_CODE_SYMBOL: Self = Self(0x1018);
    /// `HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL`.
    pub const INVALID_EXECUTABLE_SYMBOL: Self = Self(0x1019);
    /// `HSA_STATUS_ERROR_INVALID_FILE`.
    pub const INVALID_FILE: Self = Self(0x1020);
    /// `HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER`.
    pub const INVALID_CODE_OBJECT_READER: Self = Self(0x1021);
    /// `HSA_STATUS_ERROR_INVALID_CACHE`.
    pub const INVALID_CACHE: Self = Self(0x1022);
    /// `HSA_STATUS_ERROR_INVALID_WAVEFRONT`.
    pub const INVALID_WAVEFRONT: Self = Self(0x1023);
    /// `HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP`.
    pub const INVALID_SIGNAL_GROUP: Self = Self(0x1024);
    /// `HSA_STATUS_ERROR_INVALID_RUNTIME_STATE`.
    pub const INVALID_RUNTIME_STATE: Self = Self(0x1025);
    /// `HSA_STATUS_ERROR_FATAL`.
    pub const FATAL: Self = Self(0x1026);
    /// `HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION` (`hsa_ext_amd.h`).
    pub const MEMORY_APERTURE_VIOLATION: Self = Self(0x2B);
    /// `HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION` (`hsa_ext_amd.h`).
    pub const ILLEGAL_INSTRUCTION: Self = Self(0x2C);
    /// `HSA_STATUS_ERROR_MEMORY_FAULT` (`hsa_ext_amd.h`).
    pub const MEMORY_FAULT: Self = Self(0x2D);

    /// Its text, as ROCr's `hsa_status_string` words it; `None` for a code ROCr does not know.
    pub fn text(self) -> Option<&'static CStr> {
        Some(match self {
            Self::SUCCESS => c"HSA_STATUS_SUCCESS: The function has been executed successfully.",
            Self::INFO_BREAK => {
                c"HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been interrupted by the application before completing."
            }
            Self::ERROR => c"HSA_STATUS_ERROR: A generic error has occurred.",
            Self::INVALID_ARGUMENT => {
                c"HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does not meet a precondition stated in the documentation of the corresponding formal argument."
            }
            Self::INVALID_QUEUE_CREATION => {
                c"HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: The requested queue creation is not valid."
            }
            Self::INVALID_ALLOCATION => {
                c"HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not valid."
            }
            Self::INVALID_AGENT => {
                c"HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid."
            }
            Self::INVALID_REGION => {
                c"HSA_STATUS_ERROR_INVALID_REGION: The memory region is invalid."
            }
            Self::INVALID_SIGNAL => {
                c"HSA_STATUS_ERROR_INVALID_SIGNAL: The signal is invalid."
            }
            Self::INVALID_QUEUE => c"HSA_STATUS_ERROR_INVALID_QUEUE: The queue is invalid.",
            Self::OUT_OF_RESOURCES => {
                c"HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources. This error may also occur when the core runtime library needs to spawn threads or create internal OS-specific events."
            }
            Self::INVALID_PACKET_FORMAT => {
                c"HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: The AQL packet is malformed."
            }
            Self::RESOURCE_FREE => {
                c"HSA_STATUS_ERROR_RESOURCE_FREE: An error has been detected while releasing a resource."
            }
            Self::NOT_INITIALIZED => {
                c"HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been invoked while the reference count of the HSA runtime is zero."
            }
            Self::REFCOUNT_OVERFLOW => {
                c"HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: The maximum reference count for the object has been reached."
            }
            Self::INCOMPATIBLE_ARGUMENTS => {
                c"HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: The arguments passed to a functions are not compatible."
            }
            Self::INVALID_INDEX => c"HSA_STATUS_ERROR_INVALID_INDEX: The index is invalid.",
            Self::INVALID_ISA => c"HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is invalid.",
            Self::INVALID_ISA_NAME => {
                c"HSA_STATUS_ERROR_INVALID_ISA_NAME: The instruction set architecture name is invalid."
            }
            Self::INVALID_CODE_OBJECT => {
                c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid."
            }
            Self::INVALID_EXECUTABLE => {
                c"HSA_STATUS_ERROR_INVALID_EXECUTABLE: The executable is invalid."
            }
            Self::FROZEN_EXECUTABLE => {
                c"HSA_STATUS_ERROR_FROZEN_EXECUTABLE: The executable is frozen."
            }
            Self::INVALID_SYMBOL_NAME => {
                c"HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: There is no symbol with the given name."
            }
            Self::VARIABLE_ALREADY_DEFINED => {
                c"HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: The variable is already defined."
            }
            Self::VARIABLE_UNDEFINED => {
                c"HSA_STATUS_ERROR_VARIABLE_UNDEFINED: The variable is undefined."
            }
            Self::EXCEPTION => {
                c"HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception."
            }
            Self::INVALID_CODE_SYMBOL => {
                c"HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: The code object symbol is invalid."
            }
            Self::INVALID_EXECUTABLE_SYMBOL => {
                c"HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: The executable symbol is invalid."
            }
            Self::INVALID_FILE => c"HSA_STATUS_ERROR_INVALID_FILE: The file descriptor is invalid.",
            Self::INVALID_CODE_OBJECT_READER => {
                c"HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: The code object reader is invalid."
            }
            Self::INVALID_CACHE => c"HSA_STATUS_ERROR_INVALID_CACHE: The cache is invalid.",
            Self::INVALID_WAVEFRONT => {
                c"HSA_STATUS_ERROR_INVALID_WAVEFRONT: The wavefront is invalid."
            }
            Self::INVALID_SIGNAL_GROUP => {
                c"HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: The signal group is invalid."
            }
            Self::INVALID_RUNTIME_STATE => {
                c"HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: The HSA runtime is not in the configuration state."
            }
            Self::FATAL => {
                c"HSA_STATUS_ERROR_FATAL: The queue received an error that may require process termination."
            }
            Self::MEMORY_APERTURE_VIOLATION => {
                c"HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The memory access is outside the aperture."
            }
            Self::ILLEGAL_INSTRUCTION => {
                // ROCr 5.2's words (libomptarget prints them in its queue error report).
                c"HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: The agent attempted to execute an illegal shader instruction."
            }
            Self::MEMORY_FAULT => {
                c"HSA_STATUS_ERROR_MEMORY_FAULT: Agent attempted to access an inaccessible address."
            }
            _ => return None,
        })
    }
}

/// `hsa_status_string`: the text of `status` into `*status_string`. Works before `hsa_init`
/// and after the last `hsa_shut_down` (ROCr's does too: it needs no runtime).
///
/// # Safety
///
/// `status_string` is null or valid for one pointer write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_status_string(
    status: Status,
    status_string: *mut *const c_char,
) -> Status {
    if status_string.is_null() {
        return Status::INVALID_ARGUMENT;
    }
    let Some(text) = status.text() else {
        return Status::INVALID_ARGUMENT;
    };
    // SAFETY: non-null and, by the contract, valid for one pointer write; the text is static.
    unsafe { status_string.write(text.as_ptr()) };
    Status::SUCCESS
}
