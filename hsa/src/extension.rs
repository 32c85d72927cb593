//! Extensions (`hsa_system_extension_supported` and friends). None is served yet: images,
//! the finalizer, performance counters, the AMD profiler and aqlprofile tables are what ROCr
//! offers on some GPUs only, and a client asks before it uses them.

use std::ffi::c_void;

use crate::error::{Error, entry};
use crate::runtime::runtime;
use crate::status::Status;

/// `HSA_SYSTEM_INFO_EXTENSIONS`: one bit per supported extension.
pub fn supported_mask() -> [u8; 128] {
    [0; 128]
}

/// Whether `extension` at `major.minor` is served.
fn supported(_extension: u16, _major: u16, _minor: u16) -> bool {
    false
}

/// The largest `HSA_EXTENSION_*` / `HSA_AMD_*_EXTENSION` number.
const LAST_EXTENSION: u16 = 0x202;

fn check_extension(extension: u16) -> crate::error::Result<()> {
    if extension > LAST_EXTENSION || (extension > 3 && extension < 0x200) {
        return Err(Error::invalid_argument(format!("extension {extension:#x}")));
    }
    Ok(())
}

/// `hsa_system_extension_supported`.
///
/// # Safety
///
/// `result` is null or valid for one `bool` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_system_extension_supported(
    extension: u16,
    version_major: u16,
    version_minor: u16,
    result: *mut bool,
) -> Status {
    entry("hsa_system_extension_supported", || {
        runtime()?;
        check_extension(extension)?;
        if result.is_null() {
            return Err(Error::invalid_argument("null result"));
        }
        // SAFETY: non-null, valid for a bool write by the caller's contract.
        unsafe { result.write(supported(extension, version_major, version_minor)) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_system_major_extension_supported`.
///
/// # Safety
///
/// `version_minor` and `result` are null or valid for one write each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_system_major_extension_supported(
    extension: u16,
    version_major: u16,
    version_minor: *mut u16,
    result: *mut bool,
) -> Status {
    entry("hsa_system_major_extension_supported", || {
        runtime()?;
        check_extension(extension)?;
        if result.is_null() || version_minor.is_null() {
            return Err(Error::invalid_argument("null result"));
        }
        // SAFETY: non-null, valid for one write each by the caller's contract.
        unsafe {
            version_minor.write(0);
            result.write(supported(extension, version_major, 0));
        }
        Ok(Status::SUCCESS)
    })
}

/// `hsa_agent_extension_supported`.
///
/// # Safety
///
/// `result` is null or valid for one `bool` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_agent_extension_supported(
    extension: u16,
    agent: u64,
    version_major: u16,
    version_minor: u16,
    result: *mut bool,
) -> Status {
    entry("hsa_agent_extension_supported", || {
        let runtime = runtime()?;
        runtime
            .machine
            .agent(agent)
            .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
        check_extension(extension)?;
        if result.is_null() {
            return Err(Error::invalid_argument("null result"));
        }
        // SAFETY: non-null, valid for a bool write by the caller's contract.
        unsafe { result.write(supported(extension, version_major, version_minor)) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_agent_major_extension_supported`.
///
/// # Safety
///
/// `version_minor` and `result` are null or valid for one write each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_agent_major_extension_supported(
    extension: u16,
    agent: u64,
    version_major: u16,
    version_minor: *mut u16,
    result: *mut bool,
) -> Status {
    entry("hsa_agent_major_extension_supported", || {
        let runtime = runtime()?;
        runtime
            .machine
            .agent(agent)
            .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
        check_extension(extension)?;
        if result.is_null() || version_minor.is_null() {
            return Err(Error::invalid_argument("null result"));
        }
        // SAFETY: non-null, valid for one write each by the caller's contract.
        unsafe {
            version_minor.write(0);
            result.write(supported(extension, version_major, 0));
        }
        Ok(Status::SUCCESS)
    })
}

/// `hsa_system_get_extension_table`: no table is served.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_system_get_extension_table(
    extension: u16,
    _version_major: u16,
    _version_minor: u16,
    _table: *mut c_void,
) -> Status {
    entry("hsa_system_get_extension_table", || {
        runtime()?;
        check_extension(extension)?;
        Err(Error::new(Status::ERROR, "extension not supported"))
    })
}

/// `hsa_system_get_major_extension_table`: no table is served.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_system_get_major_extension_table(
    extension: u16,
    _version_major: u16,
    _table_length: usize,
    _table: *mut c_void,
) -> Status {
    entry("hsa_system_get_major_extension_table", || {
        runtime()?;
        check_extension(extension)?;
        Err(Error::new(Status::ERROR, "extension not supported"))
    })
}
