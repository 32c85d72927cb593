//! Extensions (`hsa_system_extension_supported` and friends). The AMD loader extension
//! (v1.00..1.03, `loader_extension`) is served; images, the finalizer, performance counters,
//! the AMD profiler and aqlprofile tables are what ROCr offers on some GPUs only (or with
//! its tools library loaded), and a client asks before it uses them.

use std::ffi::c_void;

use crate::error::{Error, entry};
use crate::runtime::runtime;
use crate::status::Status;

/// `HSA_SYSTEM_INFO_EXTENSIONS`: one bit per supported extension.
pub fn supported_mask() -> [u8; 128] {
    let mut mask = [0; 128];
    let bit = usize::from(AMD_LOADER);
    mask[bit / 8] |= 1 << (bit % 8);
    mask
}

/// `HSA_EXTENSION_AMD_LOADER`.
const AMD_LOADER: u16 = 0x201;

/// Whether `extension` at `major.minor` is served.
fn supported(extension: u16, major: u16, minor: u16) -> bool {
    extension == AMD_LOADER
        && major == 1
        && crate::api::loader_extension::table_bytes(minor).is_some()
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
            version_minor.write(if extension == AMD_LOADER { 3 } else { 0 });
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
            version_minor.write(if extension == AMD_LOADER { 3 } else { 0 });
            result.write(supported(extension, version_major, 0));
        }
        Ok(Status::SUCCESS)
    })
}

/// `hsa_system_get_extension_table`: the loader's table of version 1.`minor`; no other.
///
/// # Safety
///
/// `table` is null or valid for the writes of the requested version's table.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_system_get_extension_table(
    extension: u16,
    version_major: u16,
    version_minor: u16,
    table: *mut c_void,
) -> Status {
    entry("hsa_system_get_extension_table", || {
        runtime()?;
        check_extension(extension)?;
        if !supported(extension, version_major, version_minor) {
            return Err(Error::new(Status::ERROR, "extension not supported"));
        }
        let length = crate::api::loader_extension::table_bytes(version_minor).unwrap_or(0);
        // SAFETY: as for the major table below, with the version's own length.
        Ok(
            unsafe {
                hsa_system_get_major_extension_table(extension, version_major, length, table)
            },
        )
    })
}

/// `hsa_system_get_major_extension_table`: the loader's table (its first `table_length`
/// bytes); every other extension is declined as ROCr declines it without the library that
/// provides it (the profiler and aqlprofile tables need ROCr's tools library).
///
/// # Safety
///
/// `table` is null or valid for `table_length` bytes of writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_system_get_major_extension_table(
    extension: u16,
    version_major: u16,
    table_length: usize,
    table: *mut c_void,
) -> Status {
    entry("hsa_system_get_major_extension_table", || {
        runtime()?;
        check_extension(extension)?;
        if extension != AMD_LOADER || version_major != 1 {
            return Err(Error::new(Status::ERROR, "extension not supported"));
        }
        if table.is_null() || table_length == 0 {
            return Err(Error::invalid_argument("no table to fill"));
        }
        // SAFETY: valid for `table_length` bytes of writes by the caller's contract.
        unsafe { crate::api::loader_extension::write_table(table, table_length) };
        Ok(Status::SUCCESS)
    })
}
