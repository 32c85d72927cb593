//! ISAs: `hsa_isa_get_info`, lookup by name, compatibility.

use std::ffi::{CStr, c_char, c_void};

use crate::api::agent::{HandleCallback, iterate};
use crate::error::{Error, Result, entry};
use crate::model::{Isa, WORKGROUP_MAX, handle_of};
use crate::runtime::runtime;
use crate::status::Status;
use crate::value::{Value, answer};

/// `HSA_ISA_INFO_*`.
mod attr {
    pub const NAME_LENGTH: u32 = 0;
    pub const NAME: u32 = 1;
    pub const CALL_CONVENTION_COUNT: u32 = 2;
    pub const CALL_CONVENTION_INFO_WAVEFRONT_SIZE: u32 = 3;
    pub const CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT: u32 = 4;
    pub const MACHINE_MODELS: u32 = 5;
    pub const PROFILES: u32 = 6;
    pub const DEFAULT_FLOAT_ROUNDING_MODES: u32 = 7;
    pub const BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: u32 = 8;
    pub const FAST_F16_OPERATION: u32 = 9;
    pub const WORKGROUP_MAX_DIM: u32 = 12;
    pub const WORKGROUP_MAX_SIZE: u32 = 13;
    pub const GRID_MAX_DIM: u32 = 14;
    pub const GRID_MAX_SIZE: u32 = 16;
    pub const FBARRIER_MAX_SIZE: u32 = 17;
}

/// The value of one ISA attribute.
pub fn isa_info(isa: &Isa, attribute: u32) -> Result<Value> {
    use attr as a;
    Ok(match attribute {
        // ROCr counts the terminating NUL in the length and writes it with the name.
        a::NAME_LENGTH => Value::U32(isa.name.len() as u32 + 1),
        a::NAME => Value::chars(&isa.name, isa.name.len() + 1),
        a::CALL_CONVENTION_COUNT => Value::U32(1),
        a::CALL_CONVENTION_INFO_WAVEFRONT_SIZE => Value::U32(isa.wavefront_size),
        // ROCr's constant for every GFX9+ ISA.
        a::CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT => Value::U32(40),
        // [small, large]
        a::MACHINE_MODELS => Value::bools(&[false, true]),
        // [base, full]
        a::PROFILES => Value::bools(&[true, false]),
        // [default, zero, near]
        a::DEFAULT_FLOAT_ROUNDING_MODES | a::BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES => {
            Value::bools(&[false, false, true])
        }
        a::FAST_F16_OPERATION => Value::Bool(true),
        a::WORKGROUP_MAX_DIM => Value::u16s(&[WORKGROUP_MAX; 3]),
        a::WORKGROUP_MAX_SIZE => Value::U32(u32::from(WORKGROUP_MAX)),
        a::GRID_MAX_DIM => Value::u32s(&[u32::MAX; 3]),
        a::GRID_MAX_SIZE => Value::U64(u64::from(u32::MAX)),
        a::FBARRIER_MAX_SIZE => Value::U32(32),
        _ => {
            return Err(Error::invalid_argument(format!(
                "unknown ISA attribute {attribute:#x}"
            )));
        }
    })
}

fn info(isa: u64, attribute: u32, value: *mut c_void) -> Result<Status> {
    let runtime = runtime()?;
    let isa = runtime
        .machine
        .isa(isa)
        .ok_or_else(|| Error::new(Status::INVALID_ISA, "unknown ISA"))?;
    let v = isa_info(isa, attribute)?;
    // SAFETY: the exported functions' contract.
    unsafe { answer(&v, value) }
}

/// `hsa_isa_get_info_alt`.
///
/// # Safety
///
/// `value` is null or valid for writes of the attribute's C type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_isa_get_info_alt(
    isa: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    entry("hsa_isa_get_info_alt", || info(isa, attribute, value))
}

/// `hsa_isa_get_info` (deprecated): `index` selects a call convention, of which there is one.
///
/// # Safety
///
/// `value` is null or valid for writes of the attribute's C type.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_isa_get_info(
    isa: u64,
    attribute: u32,
    index: u32,
    value: *mut c_void,
) -> Status {
    entry("hsa_isa_get_info", || {
        if index != 0 {
            return Err(Error::new(Status::INVALID_INDEX, "one call convention"));
        }
        info(isa, attribute, value)
    })
}

/// `hsa_isa_from_name`: the handle of an ISA of this machine's GPUs.
///
/// # Safety
///
/// `name` is null or a NUL-terminated string; `isa` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_isa_from_name(name: *const c_char, isa: *mut u64) -> Status {
    entry("hsa_isa_from_name", || {
        let runtime = runtime()?;
        if name.is_null() || isa.is_null() {
            return Err(Error::invalid_argument("null name or ISA"));
        }
        // SAFETY: non-null and NUL-terminated by the caller's contract.
        let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
        let index = runtime
            .machine
            .isas
            .iter()
            .position(|i| i.name == name)
            .ok_or_else(|| Error::new(Status::INVALID_ISA_NAME, format!("ISA {name}")))?;
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { isa.write(handle_of(index)) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_isa_compatible` (deprecated): equal ISAs are compatible.
///
/// # Safety
///
/// `result` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_isa_compatible(
    code_object_isa: u64,
    agent_isa: u64,
    result: *mut bool,
) -> Status {
    entry("hsa_isa_compatible", || {
        let runtime = runtime()?;
        let (Some(_), Some(_)) = (
            runtime.machine.isa(code_object_isa),
            runtime.machine.isa(agent_isa),
        ) else {
            return Err(Error::new(Status::INVALID_ISA, "unknown ISA"));
        };
        if result.is_null() {
            return Err(Error::invalid_argument("null result"));
        }
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { result.write(code_object_isa == agent_isa) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_isa_iterate_wavefronts`: one wavefront per ISA, whose handle is the ISA's.
///
/// # Safety
///
/// `callback` is null or a function that may be called with `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_isa_iterate_wavefronts(
    isa: u64,
    callback: HandleCallback,
    data: *mut c_void,
) -> Status {
    entry("hsa_isa_iterate_wavefronts", || {
        let runtime = runtime()?;
        runtime
            .machine
            .isa(isa)
            .ok_or_else(|| Error::new(Status::INVALID_ISA, "unknown ISA"))?;
        // SAFETY: the exported function's contract.
        unsafe { iterate([isa], callback, data) }
    })
}

/// `hsa_wavefront_get_info`: `HSA_WAVEFRONT_INFO_SIZE` (0), a `uint32_t`.
///
/// # Safety
///
/// `value` is null or valid for one `uint32_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_wavefront_get_info(
    wavefront: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    entry("hsa_wavefront_get_info", || {
        let runtime = runtime()?;
        let isa = runtime
            .machine
            .isa(wavefront)
            .ok_or_else(|| Error::new(Status::INVALID_WAVEFRONT, "unknown wavefront"))?;
        if attribute != 0 {
            return Err(Error::invalid_argument("unknown wavefront attribute"));
        }
        // SAFETY: the caller's contract.
        unsafe { answer(&Value::U32(isa.wavefront_size), value) }
    })
}
