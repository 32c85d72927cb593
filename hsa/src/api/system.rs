//! System info (`hsa_system_get_info`) and extension queries.

use std::ffi::c_void;

use crate::error::{Error, Result, entry};
use crate::runtime::{Runtime, runtime};
use crate::status::Status;
use crate::value::{Value, answer};

/// `HSA_SYSTEM_INFO_*` and `HSA_AMD_SYSTEM_INFO_*` attributes.
mod attr {
    pub const VERSION_MAJOR: u32 = 0;
    pub const VERSION_MINOR: u32 = 1;
    pub const TIMESTAMP: u32 = 2;
    pub const TIMESTAMP_FREQUENCY: u32 = 3;
    pub const SIGNAL_MAX_WAIT: u32 = 4;
    pub const ENDIANNESS: u32 = 5;
    pub const MACHINE_MODEL: u32 = 6;
    pub const EXTENSIONS: u32 = 7;
    pub const AMD_BUILD_VERSION: u32 = 0x200;
    pub const AMD_SVM_SUPPORTED: u32 = 0x201;
    pub const AMD_SVM_ACCESSIBLE_BY_DEFAULT: u32 = 0x202;
    pub const AMD_MWAITX_ENABLED: u32 = 0x203;
    pub const AMD_DMABUF_SUPPORTED: u32 = 0x204;
    pub const AMD_VIRTUAL_MEM_API_SUPPORTED: u32 = 0x205;
    pub const AMD_XNACK_ENABLED: u32 = 0x206;
    pub const AMD_EXT_VERSION_MAJOR: u32 = 0x207;
    pub const AMD_EXT_VERSION_MINOR: u32 = 0x208;
}

/// The system timestamp's frequency: nanoseconds, what ROCr reports over KFD
/// (`AMDKFD_IOC_GET_CLOCK_COUNTERS`' system clock is in ns).
pub const TIMESTAMP_HZ: u64 = 1_000_000_000;

/// The HSA runtime version ROCr 5.2 reports.
const VERSION: (u16, u16) = (1, 1);

/// The `hsa_ext_amd.h` interface version (ROCr 5.2's header: 1.0).
const EXT_VERSION: (u16, u16) = (1, 0);

/// `HSA_AMD_SYSTEM_INFO_BUILD_VERSION`: a pointer to this text.
static BUILD_VERSION: &std::ffi::CStr = c"aqueduct-hsa";

/// The system timestamp: `CLOCK_BOOTTIME` in ns, the clock KFD's `GET_CLOCK_COUNTERS` reports
/// as the system counter on current kernels (older ones used the raw monotonic clock; which
/// one exactly is not something a client can tell).
pub fn timestamp() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for clock_gettime to write.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &raw mut now) } == 0;
    if !ok {
        return 0;
    }
    (now.tv_sec as u64) * 1_000_000_000 + now.tv_nsec as u64
}

/// The value of one system attribute.
pub fn system_info(runtime: &Runtime, attribute: u32) -> Result<Value> {
    use attr as a;
    Ok(match attribute {
        a::VERSION_MAJOR => Value::U16(VERSION.0),
        a::VERSION_MINOR => Value::U16(VERSION.1),
        a::TIMESTAMP => Value::U64(timestamp()),
        a::TIMESTAMP_FREQUENCY => Value::U64(TIMESTAMP_HZ),
        a::SIGNAL_MAX_WAIT => Value::U64(u64::MAX),
        // HSA_ENDIANNESS_LITTLE, HSA_MACHINE_MODEL_LARGE.
        a::ENDIANNESS => Value::U32(0),
        a::MACHINE_MODEL => Value::U32(1),
        a::EXTENSIONS => Value::Bytes(crate::api::extension::supported_mask().to_vec()),
        a::AMD_BUILD_VERSION => Value::U64(BUILD_VERSION.as_ptr() as u64),
        // Shared virtual memory (KFD's SVM ioctls) is not served: what ROCr says on a kernel
        // without it.
        a::AMD_SVM_SUPPORTED | a::AMD_SVM_ACCESSIBLE_BY_DEFAULT => Value::Bool(false),
        a::AMD_MWAITX_ENABLED | a::AMD_DMABUF_SUPPORTED | a::AMD_VIRTUAL_MEM_API_SUPPORTED => {
            Value::Bool(false)
        }
        a::AMD_XNACK_ENABLED => Value::Bool(runtime.machine.agents.iter().any(|agent| {
            agent
                .gpu
                .as_ref()
                .is_some_and(|g| g.target_id.xnack == aqueduct::kfd::topology::FeatureSetting::On)
        })),
        a::AMD_EXT_VERSION_MAJOR => Value::U16(EXT_VERSION.0),
        a::AMD_EXT_VERSION_MINOR => Value::U16(EXT_VERSION.1),
        _ => {
            return Err(Error::invalid_argument(format!(
                "unknown system attribute {attribute:#x}"
            )));
        }
    })
}

/// `hsa_system_get_info`.
///
/// # Safety
///
/// `value` is null or valid for writes of the attribute's C type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_system_get_info(attribute: u32, value: *mut c_void) -> Status {
    entry("hsa_system_get_info", || {
        let runtime = runtime()?;
        let v = system_info(&runtime, attribute)?;
        // SAFETY: the caller's contract.
        unsafe { answer(&v, value) }
    })
}
