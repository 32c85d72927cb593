//! The AMD loader extension (`hsa_ven_amd_loader.h`, `HSA_EXTENSION_AMD_LOADER`, v1.03): the
//! exported `hsa_ven_amd_loader_*` functions and the table `hsa_system_get_major_extension_table`
//! hands out. HIP 5.2 fetches the table at start; it uses `iterate_executables`,
//! `executable_iterate_loaded_code_objects` and `loaded_code_object_get_info` to locate code
//! objects by URI (for its sanitizer and hostcall support), and wraps `query_host_address`.
//!
//! A loaded code object's handle is its executable's handle and its position there
//! ([`loaded_code_object`]). Its storage is the loader's own copy of the bytes (ROCr keeps one
//! too), so its URI is `memory://PID#offset=0x…&size=…` as ROCr's. A device address is
//! its own host address: code objects are loaded into memory the CPU maps at the same
//! address (on a small-BAR GPU that mapping does not reach the CPU; not handled yet).

use std::ffi::c_void;
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{Error, Result, entry};
use crate::loaded_code_object;
use crate::model::handle_of;
use crate::objects::executable::HsaExecutable;
use crate::runtime::{Runtime, runtime};
use crate::status::Status;
use crate::value::{Value, answer};

/// `hsa_ven_amd_loader_segment_descriptor_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SegmentDescriptor {
    /// The agent the segment is on.
    pub agent: u64,
    /// The executable managing it.
    pub executable: u64,
    /// `HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_*`.
    pub code_object_storage_type: u32,
    /// Where the code object's bytes are.
    pub code_object_storage_base: *const c_void,
    /// Their size.
    pub code_object_storage_size: usize,
    /// The segment's offset in them.
    pub code_object_storage_offset: usize,
    /// The loaded segment.
    pub segment_base: *const c_void,
    /// Its size.
    pub segment_size: usize,
}

/// `HSA_VEN_AMD_LOADER_CODE_OBJECT_STORAGE_TYPE_MEMORY`.
const STORAGE_MEMORY: u32 = 2;

/// What the extension reports of one loaded code object.
struct Loaded {
    executable: u64,
    agent: u64,
    bytes: Arc<Vec<u8>>,
    base: u64,
    size: u64,
    delta: u64,
}

impl Loaded {
    fn uri(&self) -> String {
        format!(
            "memory://{}#offset={:#x}&size={}",
            std::process::id(),
            self.bytes.as_ptr() as usize,
            self.bytes.len()
        )
    }
}

fn executables(runtime: &Runtime) -> Vec<(u64, Arc<Mutex<HsaExecutable>>)> {
    let mut all = runtime
        .objects
        .executables
        .executables
        .collect(|handle, exec| Some((handle, Arc::clone(exec))));
    all.sort_by_key(|(handle, _)| *handle);
    all
}

fn loaded_in(handle: u64, exec: &Mutex<HsaExecutable>) -> Vec<Loaded> {
    let exec = exec.lock().unwrap_or_else(PoisonError::into_inner);
    exec.loaded
        .iter()
        .zip(&exec.code_objects)
        .map(|((agent, loaded), bytes)| Loaded {
            executable: handle,
            agent: handle_of(*agent),
            bytes: Arc::clone(bytes),
            base: loaded.image().base(),
            size: loaded.image().size(),
            delta: loaded.image().delta(),
        })
        .collect()
}

fn all_loaded(runtime: &Runtime) -> Vec<Loaded> {
    executables(runtime)
        .iter()
        .flat_map(|(handle, exec)| loaded_in(*handle, exec))
        .collect()
}

fn containing(runtime: &Runtime, address: u64) -> Result<Loaded> {
    all_loaded(runtime)
        .into_iter()
        .find(|l| (l.base..l.base + l.size).contains(&address))
        .ok_or_else(|| Error::invalid_argument(format!("{address:#x} is in no loaded segment")))
}

fn find(runtime: &Runtime, handle: u64) -> Result<Loaded> {
    let (executable, position) = loaded_code_object::parts(handle);
    let exec = runtime
        .objects
        .executables
        .executables
        .get(executable)
        .ok_or_else(|| Error::invalid_argument("unknown loaded code object"))?;
    loaded_in(executable, &exec)
        .into_iter()
        .nth(position)
        .ok_or_else(|| Error::invalid_argument("unknown loaded code object"))
}

/// `hsa_ven_amd_loader_query_host_address`.
///
/// # Safety
///
/// `host_address` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_loader_query_host_address(
    device_address: *const c_void,
    host_address: *mut *const c_void,
) -> Status {
    entry("hsa_ven_amd_loader_query_host_address", || {
        let runtime = runtime()?;
        if device_address.is_null() || host_address.is_null() {
            return Err(Error::invalid_argument("null address"));
        }
        containing(&runtime, device_address as u64)?;
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { host_address.write(device_address) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_ven_amd_loader_query_segment_descriptors`: one descriptor per loaded code object
/// (aqueduct loads each into one segment).
///
/// # Safety
///
/// `count` is null or valid for a read and a write; `descriptors` is null or valid for
/// `*count` writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_loader_query_segment_descriptors(
    descriptors: *mut SegmentDescriptor,
    count: *mut usize,
) -> Status {
    entry("hsa_ven_amd_loader_query_segment_descriptors", || {
        let runtime = runtime()?;
        if count.is_null() {
            return Err(Error::invalid_argument("null count"));
        }
        let loaded = all_loaded(&runtime);
        if descriptors.is_null() {
            // SAFETY: non-null, valid for a write by the caller's contract.
            unsafe { count.write(loaded.len()) };
            return Ok(Status::SUCCESS);
        }
        // SAFETY: non-null, valid for a read by the caller's contract.
        if unsafe { count.read() } < loaded.len() {
            return Err(Error::new(
                Status::INCOMPATIBLE_ARGUMENTS,
                "fewer descriptors than segments",
            ));
        }
        for (i, l) in loaded.iter().enumerate() {
            let descriptor = SegmentDescriptor {
                agent: l.agent,
                executable: l.executable,
                code_object_storage_type: STORAGE_MEMORY,
                code_object_storage_base: l.bytes.as_ptr().cast(),
                code_object_storage_size: l.bytes.len(),
                code_object_storage_offset: 0,
                segment_base: l.base as *const c_void,
                segment_size: usize::try_from(l.size).unwrap_or(usize::MAX),
            };
            // SAFETY: i < *count descriptors, valid for writes by the caller's contract.
            unsafe { descriptors.add(i).write(descriptor) };
        }
        // SAFETY: as above.
        unsafe { count.write(loaded.len()) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_ven_amd_loader_query_executable`.
///
/// # Safety
///
/// `executable` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_loader_query_executable(
    device_address: *const c_void,
    executable: *mut u64,
) -> Status {
    entry("hsa_ven_amd_loader_query_executable", || {
        let runtime = runtime()?;
        if executable.is_null() {
            return Err(Error::invalid_argument("null executable"));
        }
        let loaded = containing(&runtime, device_address as u64)?;
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { executable.write(loaded.executable) };
        Ok(Status::SUCCESS)
    })
}

/// The callback of `executable_iterate_loaded_code_objects`.
pub type LoadedCallback = Option<unsafe extern "C" fn(u64, u64, *mut c_void) -> Status>;

/// `hsa_ven_amd_loader_executable_iterate_loaded_code_objects`.
///
/// # Safety
///
/// `callback` is null or a function that may be called with `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_loader_executable_iterate_loaded_code_objects(
    executable: u64,
    callback: LoadedCallback,
    data: *mut c_void,
) -> Status {
    entry(
        "hsa_ven_amd_loader_executable_iterate_loaded_code_objects",
        || {
            let runtime = runtime()?;
            let callback = callback.ok_or_else(|| Error::invalid_argument("null callback"))?;
            let exec = runtime
                .objects
                .executables
                .executables
                .get(executable)
                .ok_or_else(|| Error::new(Status::INVALID_EXECUTABLE, "unknown executable"))?;
            let count = loaded_in(executable, &exec).len();
            drop(runtime);
            for position in 0..count {
                // SAFETY: the program's callback, with its data.
                let status = unsafe {
                    callback(
                        executable,
                        loaded_code_object::handle(executable, position),
                        data,
                    )
                };
                if status != Status::SUCCESS {
                    return Ok(status);
                }
            }
            Ok(Status::SUCCESS)
        },
    )
}

/// `hsa_ven_amd_loader_loaded_code_object_get_info`.
///
/// # Safety
///
/// `value` is valid for the attribute's type (`URI`: `URI_LENGTH` bytes).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_loader_loaded_code_object_get_info(
    loaded_code_object: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    entry("hsa_ven_amd_loader_loaded_code_object_get_info", || {
        let runtime = runtime()?;
        let loaded = find(&runtime, loaded_code_object)?;
        let answer_value = match attribute {
            1 => Value::U64(loaded.executable),
            // HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_KIND_AGENT.
            2 => Value::U32(2),
            3 => Value::U64(loaded.agent),
            4 => Value::U32(STORAGE_MEMORY),
            5 => Value::U64(loaded.bytes.as_ptr() as u64),
            6 => Value::U64(loaded.bytes.len() as u64),
            // The file descriptor of FILE storage: none here.
            7 => Value::U32(u32::MAX),
            8 => Value::U64(loaded.delta),
            9 => Value::U64(loaded.base),
            10 => Value::U64(loaded.size),
            11 => Value::U32(u32::try_from(loaded.uri().len()).unwrap_or(u32::MAX)),
            // The URI's bytes, no NUL (the caller sized the buffer by URI_LENGTH).
            12 => Value::Bytes(loaded.uri().into_bytes()),
            _ => {
                return Err(Error::invalid_argument(
                    "unknown loaded code object attribute",
                ));
            }
        };
        // SAFETY: valid for the attribute's type by the caller's contract.
        unsafe { answer(&answer_value, value) }
    })
}

/// `hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size`: the `size` bytes
/// at `offset` of `file`.
///
/// # Safety
///
/// `reader` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size(
    file: i32,
    offset: i64,
    size: usize,
    reader: *mut u64,
) -> Status {
    entry(
        "hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size",
        || {
            let runtime = runtime()?;
            if reader.is_null() || size == 0 {
                return Err(Error::invalid_argument("null reader or no bytes"));
            }
            let mut bytes = vec![0u8; size];
            // SAFETY: `bytes` is valid for `size` writes; pread reads into it.
            let read = unsafe { libc::pread(file, bytes.as_mut_ptr().cast(), size, offset) };
            if usize::try_from(read).ok() != Some(size) {
                return Err(Error::new(
                    Status::INVALID_FILE,
                    "cannot read the code object",
                ));
            }
            let handle = runtime.objects.executables.readers.add(Arc::new(bytes));
            // SAFETY: non-null, valid for one write by the caller's contract.
            unsafe { reader.write(handle) };
            Ok(Status::SUCCESS)
        },
    )
}

/// The callback of `iterate_executables`.
pub type ExecutableCallback = Option<unsafe extern "C" fn(u64, *mut c_void) -> Status>;

/// `hsa_ven_amd_loader_iterate_executables`.
///
/// # Safety
///
/// `callback` is null or a function that may be called with `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_ven_amd_loader_iterate_executables(
    callback: ExecutableCallback,
    data: *mut c_void,
) -> Status {
    entry("hsa_ven_amd_loader_iterate_executables", || {
        let runtime = runtime()?;
        let callback = callback.ok_or_else(|| Error::invalid_argument("null callback"))?;
        let handles: Vec<u64> = executables(&runtime).iter().map(|(h, _)| *h).collect();
        drop(runtime);
        for handle in handles {
            // SAFETY: the program's callback, with its data (the exported function's contract).
            let status = unsafe { callback(handle, data) };
            if status != Status::SUCCESS {
                return Ok(status);
            }
        }
        Ok(Status::SUCCESS)
    })
}

/// `hsa_ven_amd_loader_1_03_pfn_t`: every function of the extension, in the header's order
/// (the 1.00..1.02 tables are its prefixes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LoaderTable {
    query_host_address: unsafe extern "C" fn(*const c_void, *mut *const c_void) -> Status,
    query_segment_descriptors: unsafe extern "C" fn(*mut SegmentDescriptor, *mut usize) -> Status,
    query_executable: unsafe extern "C" fn(*const c_void, *mut u64) -> Status,
    executable_iterate_loaded_code_objects:
        unsafe extern "C" fn(u64, LoadedCallback, *mut c_void) -> Status,
    loaded_code_object_get_info: unsafe extern "C" fn(u64, u32, *mut c_void) -> Status,
    code_object_reader_create_from_file_with_offset_size:
        unsafe extern "C" fn(i32, i64, usize, *mut u64) -> Status,
    iterate_executables: unsafe extern "C" fn(ExecutableCallback, *mut c_void) -> Status,
}

/// The table.
pub static TABLE: LoaderTable = LoaderTable {
    query_host_address: hsa_ven_amd_loader_query_host_address,
    query_segment_descriptors: hsa_ven_amd_loader_query_segment_descriptors,
    query_executable: hsa_ven_amd_loader_query_executable,
    executable_iterate_loaded_code_objects:
        hsa_ven_amd_loader_executable_iterate_loaded_code_objects,
    loaded_code_object_get_info: hsa_ven_amd_loader_loaded_code_object_get_info,
    code_object_reader_create_from_file_with_offset_size:
        hsa_ven_amd_loader_code_object_reader_create_from_file_with_offset_size,
    iterate_executables: hsa_ven_amd_loader_iterate_executables,
};

/// Bytes of the v1.`minor` table (1.00: 3 functions, 1.01: 5, 1.02: 6, 1.03: 7).
pub fn table_bytes(minor: u16) -> Option<usize> {
    let functions = match minor {
        0 => 3,
        1 => 5,
        2 => 6,
        3 => 7,
        _ => return None,
    };
    Some(functions * std::mem::size_of::<usize>())
}

/// Copy the first `length` bytes of the table (at most the whole of it) to `out`.
///
/// # Safety
///
/// `out` is valid for `length` bytes of writes.
pub unsafe fn write_table(out: *mut c_void, length: usize) {
    let length = length.min(std::mem::size_of::<LoaderTable>());
    // SAFETY: TABLE is a static of at least `length` bytes; `out` is valid for
    // `length` writes by the caller's contract; they cannot overlap (the static is not the
    // caller's buffer).
    unsafe {
        std::ptr::copy_nonoverlapping((&raw const TABLE).cast::<u8>(), out.cast::<u8>(), length);
    }
}
