//! Code-object readers, executables and their symbols. Each code object loaded into an
//! executable is one aqueduct executable on the agent's GPU; its kernels (looked up as
//! `name.kd`, as ROCr names them), variables and functions become executable symbols. Beyond
//! ROCr, device functions are visible as `HSA_SYMBOL_KIND_INDIRECT_FUNCTION` symbols through
//! iteration and lookup.

use std::ffi::{CStr, c_char, c_void};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{Error, Result, entry};
use crate::model::{handle_of, index_of};
use crate::objects::executable::{HsaExecutable, Symbol, SymbolKind};
use crate::runtime::{Runtime, runtime};
use crate::status::Status;
use crate::value::{Value, answer};

fn executable(runtime: &Runtime, handle: u64) -> Result<Arc<Mutex<HsaExecutable>>> {
    runtime
        .objects
        .executables
        .executables
        .get(handle)
        .ok_or_else(|| Error::new(Status::INVALID_EXECUTABLE, "unknown executable"))
}

fn new_reader(bytes: Vec<u8>, out: *mut u64) -> Result<Status> {
    let runtime = runtime()?;
    if out.is_null() {
        return Err(Error::invalid_argument("null reader"));
    }
    let handle = runtime.objects.executables.readers.add(Arc::new(bytes));
    // SAFETY: non-null, valid for one write by the exported function's contract.
    unsafe { out.write(handle) };
    Ok(Status::SUCCESS)
}

/// `hsa_code_object_reader_create_from_memory`: the bytes are copied.
///
/// # Safety
///
/// `code_object` is valid for `size` bytes; `reader` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_code_object_reader_create_from_memory(
    code_object: *const c_void,
    size: usize,
    reader: *mut u64,
) -> Status {
    entry("hsa_code_object_reader_create_from_memory", || {
        if code_object.is_null() || size == 0 {
            runtime()?;
            return Err(Error::invalid_argument("no code object"));
        }
        // SAFETY: valid for `size` bytes by the caller's contract.
        let bytes = unsafe { std::slice::from_raw_parts(code_object.cast::<u8>(), size) };
        new_reader(bytes.to_vec(), reader)
    })
}

/// `hsa_code_object_reader_create_from_file`: the whole file behind `file` is read.
///
/// # Safety
///
/// `reader` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_code_object_reader_create_from_file(
    file: i32,
    reader: *mut u64,
) -> Status {
    entry("hsa_code_object_reader_create_from_file", || {
        runtime()?;
        let mut bytes = Vec::new();
        let mut chunk = vec![0u8; 65536];
        let mut offset = 0i64;
        loop {
            // SAFETY: `chunk` is valid for its length; pread does not move the file offset.
            let n = unsafe { libc::pread(file, chunk.as_mut_ptr().cast(), chunk.len(), offset) };
            if n < 0 {
                return Err(Error::new(Status::INVALID_FILE, "the file cannot be read"));
            }
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&chunk[..n as usize]);
            offset += n as i64;
        }
        new_reader(bytes, reader)
    })
}

/// `hsa_code_object_reader_destroy`.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_code_object_reader_destroy(reader: u64) -> Status {
    entry("hsa_code_object_reader_destroy", || {
        let runtime = runtime()?;
        runtime
            .objects
            .executables
            .readers
            .remove(reader)
            .ok_or_else(|| Error::new(Status::INVALID_CODE_OBJECT_READER, "unknown reader"))?;
        Ok(Status::SUCCESS)
    })
}

/// `hsa_code_object_deserialize` (deprecated API): the bytes become a code object handle.
///
/// # Safety
///
/// `serialized_code_object` is valid for `size` bytes; `code_object` is null or valid for one
/// write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_code_object_deserialize(
    serialized_code_object: *mut c_void,
    size: usize,
    _options: *const c_char,
    code_object: *mut u64,
) -> Status {
    entry("hsa_code_object_deserialize", || {
        if serialized_code_object.is_null() || size == 0 {
            runtime()?;
            return Err(Error::invalid_argument("no code object"));
        }
        // SAFETY: valid for `size` bytes by the caller's contract.
        let bytes =
            unsafe { std::slice::from_raw_parts(serialized_code_object.cast::<u8>(), size) };
        new_reader(bytes.to_vec(), code_object)
    })
}

/// `hsa_code_object_destroy` (deprecated API).
#[unsafe(no_mangle)]
pub extern "C" fn hsa_code_object_destroy(code_object: u64) -> Status {
    entry("hsa_code_object_destroy", || {
        let runtime = runtime()?;
        runtime
            .objects
            .executables
            .readers
            .remove(code_object)
            .ok_or_else(|| Error::new(Status::INVALID_CODE_OBJECT, "unknown code object"))?;
        Ok(Status::SUCCESS)
    })
}

fn create(out: *mut u64) -> Result<Status> {
    let runtime = runtime()?;
    if out.is_null() {
        return Err(Error::invalid_argument("null executable"));
    }
    let handle = runtime
        .objects
        .executables
        .executables
        .add(Arc::new(Mutex::new(HsaExecutable::default())));
    // SAFETY: non-null, valid for one write by the exported function's contract.
    unsafe { out.write(handle) };
    Ok(Status::SUCCESS)
}

/// `hsa_executable_create` (deprecated).
///
/// # Safety
///
/// `executable` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_executable_create(
    _profile: u32,
    _executable_state: u32,
    _options: *const c_char,
    executable: *mut u64,
) -> Status {
    entry("hsa_executable_create", || create(executable))
}

/// `hsa_executable_create_alt`.
///
/// # Safety
///
/// `executable` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_executable_create_alt(
    _profile: u32,
    _default_float_rounding_mode: u32,
    _options: *const c_char,
    executable: *mut u64,
) -> Status {
    entry("hsa_executable_create_alt", || create(executable))
}

/// Load the code object `bytes` into executable `handle` for `agent`.
/// Load `bytes` for `agent`; returns the loaded code object's position in the executable.
fn load(runtime: &Runtime, handle: u64, agent: u64, bytes: &[u8]) -> Result<usize> {
    let exec = executable(runtime, handle)?;
    let index = index_of(agent)
        .filter(|&i| i < runtime.machine.agents.len())
        .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
    let gpu = runtime.machine.agents[index]
        .gpu
        .clone()
        .ok_or_else(|| Error::new(Status::INVALID_AGENT, "code objects load on GPU agents"))?;
    let mut exec = exec.lock().unwrap_or_else(PoisonError::into_inner);
    if exec.frozen {
        return Err(Error::new(
            Status::FROZEN_EXECUTABLE,
            "the executable is frozen",
        ));
    }
    let loaded = runtime
        .device
        .load_code_object(&gpu, bytes)
        .map_err(|e| Error::new(Status::INVALID_CODE_OBJECT, e.to_string()))?;
    let mut symbols = Vec::new();
    for name in loaded.kernel_names()? {
        let kernel = loaded.kernel(&name)?;
        symbols.push(Symbol {
            name: format!("{name}.kd"),
            agent: index,
            kind: SymbolKind::Kernel {
                object: kernel.kernel_object,
                kernarg_size: kernel.kernarg_size,
                kernarg_align: kernel.kernarg_align,
                group_size: kernel.group_segment_size,
                private_size: kernel.private_segment_size,
                dynamic_stack: false,
            },
        });
    }
    for variable in loaded.image().variables() {
        symbols.push(Symbol {
            name: variable.name.to_owned(),
            agent: index,
            kind: SymbolKind::Variable {
                address: variable.address,
                size: variable.size,
            },
        });
    }
    for function in loaded.functions()? {
        symbols.push(Symbol {
            name: function.name,
            agent: index,
            kind: SymbolKind::Function {
                address: function.address,
            },
        });
    }
    for symbol in symbols {
        let handle = runtime.objects.executables.symbols.add(symbol);
        exec.symbols.push(handle);
    }
    exec.loaded.push((index, loaded));
    exec.code_objects.push(Arc::new(bytes.to_vec()));
    Ok(exec.loaded.len() - 1)
}

/// `hsa_executable_load_agent_code_object`.
///
/// # Safety
///
/// `loaded_code_object` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_executable_load_agent_code_object(
    executable: u64,
    agent: u64,
    code_object_reader: u64,
    _options: *const c_char,
    loaded_code_object: *mut u64,
) -> Status {
    entry("hsa_executable_load_agent_code_object", || {
        let runtime = runtime()?;
        let bytes = runtime
            .objects
            .executables
            .readers
            .get(code_object_reader)
            .ok_or_else(|| Error::new(Status::INVALID_CODE_OBJECT_READER, "unknown reader"))?;
        let position = load(&runtime, executable, agent, &bytes)?;
        if !loaded_code_object.is_null() {
            let handle = crate::loaded_code_object::handle(executable, position);
            // SAFETY: non-null, valid for one write by the caller's contract.
            unsafe { loaded_code_object.write(handle) };
        }
        Ok(Status::SUCCESS)
    })
}

/// `hsa_executable_load_code_object` (deprecated).
#[unsafe(no_mangle)]
pub extern "C" fn hsa_executable_load_code_object(
    executable: u64,
    agent: u64,
    code_object: u64,
    _options: *const c_char,
) -> Status {
    entry("hsa_executable_load_code_object", || {
        let runtime = runtime()?;
        let bytes = runtime
            .objects
            .executables
            .readers
            .get(code_object)
            .ok_or_else(|| Error::new(Status::INVALID_CODE_OBJECT, "unknown code object"))?;
        load(&runtime, executable, agent, &bytes)?;
        Ok(Status::SUCCESS)
    })
}

/// `hsa_executable_freeze`.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_executable_freeze(executable: u64, _options: *const c_char) -> Status {
    entry("hsa_executable_freeze", || {
        let runtime = runtime()?;
        let exec = self::executable(&runtime, executable)?;
        let mut exec = exec.lock().unwrap_or_else(PoisonError::into_inner);
        if exec.frozen {
            return Err(Error::new(Status::FROZEN_EXECUTABLE, "already frozen"));
        }
        exec.frozen = true;
        Ok(Status::SUCCESS)
    })
}

/// `hsa_executable_validate`: the loader validated each code object when it loaded it.
///
/// # Safety
///
/// `result` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_executable_validate(executable: u64, result: *mut u32) -> Status {
    entry("hsa_executable_validate", || {
        let runtime = runtime()?;
        self::executable(&runtime, executable)?;
        if result.is_null() {
            return Err(Error::invalid_argument("null result"));
        }
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { result.write(0) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_executable_validate_alt`.
///
/// # Safety
///
/// `result` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_executable_validate_alt(
    executable: u64,
    _options: *const c_char,
    result: *mut u32,
) -> Status {
    // SAFETY: the same contract.
    unsafe { hsa_executable_validate(executable, result) }
}

/// `hsa_executable_destroy`: its code is unloaded.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_executable_destroy(executable: u64) -> Status {
    entry("hsa_executable_destroy", || {
        let runtime = runtime()?;
        let exec = runtime
            .objects
            .executables
            .executables
            .remove(executable)
            .ok_or_else(|| Error::new(Status::INVALID_EXECUTABLE, "unknown executable"))?;
        let exec = exec.lock().unwrap_or_else(PoisonError::into_inner);
        for &symbol in &exec.symbols {
            runtime.objects.executables.symbols.remove(symbol);
        }
        Ok(Status::SUCCESS)
    })
}

/// `hsa_executable_get_info`: `HSA_EXECUTABLE_INFO_PROFILE` (base), `_STATE`,
/// `_DEFAULT_FLOAT_ROUNDING_MODE` (near).
///
/// # Safety
///
/// `value` is null or valid for one `uint32_t` write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_executable_get_info(
    executable: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    entry("hsa_executable_get_info", || {
        let runtime = runtime()?;
        let exec = self::executable(&runtime, executable)?;
        let frozen = exec.lock().unwrap_or_else(PoisonError::into_inner).frozen;
        let v = match attribute {
            1 => Value::U32(0),
            2 => Value::U32(u32::from(frozen)),
            3 => Value::U32(2),
            _ => return Err(Error::invalid_argument("unknown executable attribute")),
        };
        // SAFETY: the caller's contract.
        unsafe { answer(&v, value) }
    })
}

/// The handle of the symbol `name` of `executable` (on `agent` if given).
fn lookup(runtime: &Runtime, executable: u64, name: &str, agent: Option<usize>) -> Result<u64> {
    let exec = self::executable(runtime, executable)?;
    let exec = exec.lock().unwrap_or_else(PoisonError::into_inner);
    exec.symbols
        .iter()
        .copied()
        .find(|&h| {
            runtime
                .objects
                .executables
                .symbols
                .with(h, |s| s.name == name && agent.is_none_or(|a| a == s.agent))
                .unwrap_or(false)
        })
        .ok_or_else(|| Error::new(Status::INVALID_SYMBOL_NAME, format!("no symbol {name:?}")))
}

/// `hsa_executable_get_symbol_by_name`.
///
/// # Safety
///
/// `symbol_name` is a NUL-terminated string; `agent` is null or points to an agent handle;
/// `symbol` is null or valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_executable_get_symbol_by_name(
    executable: u64,
    symbol_name: *const c_char,
    agent: *const u64,
    symbol: *mut u64,
) -> Status {
    entry("hsa_executable_get_symbol_by_name", || {
        let runtime = runtime()?;
        if symbol_name.is_null() || symbol.is_null() {
            return Err(Error::invalid_argument("null name or symbol"));
        }
        // SAFETY: NUL-terminated by the caller's contract.
        let name = unsafe { CStr::from_ptr(symbol_name) }.to_string_lossy();
        // SAFETY: null or a handle by the caller's contract.
        let agent = unsafe { agent.as_ref() }.and_then(|&a| index_of(a));
        let handle = lookup(&runtime, executable, &name, agent)?;
        // SAFETY: non-null, valid for one write by the caller's contract.
        unsafe { symbol.write(handle) };
        Ok(Status::SUCCESS)
    })
}

/// `hsa_executable_get_symbol` (deprecated): the module name is ignored.
///
/// # Safety
///
/// As [`hsa_executable_get_symbol_by_name`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_executable_get_symbol(
    executable: u64,
    _module_name: *const c_char,
    symbol_name: *const c_char,
    agent: u64,
    _call_convention: i32,
    symbol: *mut u64,
) -> Status {
    // SAFETY: the same contract; `agent` lives for the call.
    unsafe { hsa_executable_get_symbol_by_name(executable, symbol_name, &raw const agent, symbol) }
}

/// A callback over an executable's symbols.
pub type SymbolCallback = Option<unsafe extern "C" fn(u64, u64, *mut c_void) -> Status>;

fn iterate_symbols(
    executable: u64,
    agent: Option<usize>,
    callback: SymbolCallback,
    data: *mut c_void,
) -> Result<Status> {
    let runtime = runtime()?;
    let callback = callback.ok_or_else(|| Error::invalid_argument("null callback"))?;
    let handles: Vec<u64> = {
        let exec = self::executable(&runtime, executable)?;
        let exec = exec.lock().unwrap_or_else(PoisonError::into_inner);
        exec.symbols.clone()
    };
    drop(runtime);
    for handle in handles {
        if let Some(wanted) = agent {
            let matches = crate::runtime::runtime()?
                .objects
                .executables
                .symbols
                .with(handle, |s| s.agent == wanted)
                .unwrap_or(false);
            if !matches {
                continue;
            }
        }
        // SAFETY: the program's callback, for this use.
        let status = unsafe { callback(executable, handle, data) };
        if status != Status::SUCCESS {
            return Ok(status);
        }
    }
    Ok(Status::SUCCESS)
}

/// `hsa_executable_iterate_symbols`.
///
/// # Safety
///
/// `callback` is null or a function that may be called with `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_executable_iterate_symbols(
    executable: u64,
    callback: SymbolCallback,
    data: *mut c_void,
) -> Status {
    entry("hsa_executable_iterate_symbols", || {
        iterate_symbols(executable, None, callback, data)
    })
}

/// A callback over an agent's symbols: (executable, agent, symbol, data).
pub type AgentSymbolCallback = Option<unsafe extern "C" fn(u64, u64, u64, *mut c_void) -> Status>;

/// `hsa_executable_iterate_agent_symbols`.
///
/// # Safety
///
/// `callback` is null or a function that may be called with `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_executable_iterate_agent_symbols(
    executable: u64,
    agent: u64,
    callback: AgentSymbolCallback,
    data: *mut c_void,
) -> Status {
    entry("hsa_executable_iterate_agent_symbols", || {
        let runtime = runtime()?;
        let index = index_of(agent)
            .filter(|&i| i < runtime.machine.agents.len())
            .ok_or_else(|| Error::new(Status::INVALID_AGENT, "unknown agent"))?;
        let callback = callback.ok_or_else(|| Error::invalid_argument("null callback"))?;
        let handles: Vec<u64> = {
            let exec = self::executable(&runtime, executable)?;
            let exec = exec.lock().unwrap_or_else(PoisonError::into_inner);
            exec.symbols.clone()
        };
        for handle in handles {
            let ours = runtime
                .objects
                .executables
                .symbols
                .with(handle, |s| s.agent == index)
                .unwrap_or(false);
            if ours {
                // SAFETY: the program's callback, for this use.
                let status = unsafe { callback(executable, agent, handle, data) };
                if status != Status::SUCCESS {
                    return Ok(status);
                }
            }
        }
        Ok(Status::SUCCESS)
    })
}

/// `hsa_executable_iterate_program_symbols`: program-allocated variables; aqueduct allocates
/// every variable per agent, so there are none.
#[unsafe(no_mangle)]
pub extern "C" fn hsa_executable_iterate_program_symbols(
    executable: u64,
    _callback: SymbolCallback,
    _data: *mut c_void,
) -> Status {
    entry("hsa_executable_iterate_program_symbols", || {
        let runtime = runtime()?;
        self::executable(&runtime, executable)?;
        Ok(Status::SUCCESS)
    })
}

/// `HSA_EXECUTABLE_SYMBOL_INFO_*`.
mod attr {
    pub const TYPE: u32 = 0;
    pub const NAME_LENGTH: u32 = 1;
    pub const NAME: u32 = 2;
    pub const MODULE_NAME_LENGTH: u32 = 3;
    pub const MODULE_NAME: u32 = 4;
    pub const LINKAGE: u32 = 5;
    pub const VARIABLE_ALLOCATION: u32 = 6;
    pub const VARIABLE_SEGMENT: u32 = 7;
    pub const VARIABLE_ALIGNMENT: u32 = 8;
    pub const VARIABLE_SIZE: u32 = 9;
    pub const VARIABLE_IS_CONST: u32 = 10;
    pub const KERNEL_KERNARG_SEGMENT_SIZE: u32 = 11;
    pub const KERNEL_KERNARG_SEGMENT_ALIGNMENT: u32 = 12;
    pub const KERNEL_GROUP_SEGMENT_SIZE: u32 = 13;
    pub const KERNEL_PRIVATE_SEGMENT_SIZE: u32 = 14;
    pub const KERNEL_DYNAMIC_CALLSTACK: u32 = 15;
    pub const INDIRECT_FUNCTION_CALL_CONVENTION: u32 = 16;
    pub const IS_DEFINITION: u32 = 17;
    pub const KERNEL_CALL_CONVENTION: u32 = 18;
    pub const AGENT: u32 = 20;
    pub const VARIABLE_ADDRESS: u32 = 21;
    pub const KERNEL_OBJECT: u32 = 22;
    pub const INDIRECT_FUNCTION_OBJECT: u32 = 23;
}

/// The value of one symbol attribute.
#[allow(
    clippy::match_same_arms,
    reason = "one attribute per arm, as the header lists them"
)]
pub fn symbol_info(symbol: &Symbol, attribute: u32) -> Result<Value> {
    use attr as a;
    let wrong = || Error::invalid_argument(format!("attribute {attribute} of {:?}", symbol.name));
    Ok(match (attribute, &symbol.kind) {
        // HSA_SYMBOL_KIND_VARIABLE 0, _KERNEL 1, _INDIRECT_FUNCTION 2.
        (a::TYPE, SymbolKind::Variable { .. }) => Value::U32(0),
        (a::TYPE, SymbolKind::Kernel { .. }) => Value::U32(1),
        (a::TYPE, SymbolKind::Function { .. }) => Value::U32(2),
        (a::NAME_LENGTH, _) => Value::U32(symbol.name.len() as u32),
        // ROCr writes the name's bytes without a NUL (the length says how many).
        (a::NAME, _) => Value::Bytes(symbol.name.as_bytes().to_vec()),
        (a::MODULE_NAME_LENGTH, _) => Value::U32(0),
        (a::MODULE_NAME, _) => Value::Bytes(Vec::new()),
        // HSA_SYMBOL_LINKAGE_PROGRAM: every symbol of a loaded code object is global.
        (a::LINKAGE, _) => Value::U32(1),
        (a::IS_DEFINITION, _) => Value::Bool(true),
        (a::AGENT, _) => Value::U64(handle_of(symbol.agent)),
        // HSA_VARIABLE_ALLOCATION_AGENT, HSA_VARIABLE_SEGMENT_GLOBAL.
        (a::VARIABLE_ALLOCATION | a::VARIABLE_SEGMENT, SymbolKind::Variable { .. }) => {
            Value::U32(0)
        }
        (a::VARIABLE_ALIGNMENT, SymbolKind::Variable { .. }) => Value::U32(8),
        (a::VARIABLE_SIZE, SymbolKind::Variable { size, .. }) => Value::U32(*size as u32),
        (a::VARIABLE_IS_CONST, SymbolKind::Variable { .. }) => Value::Bool(false),
        (a::VARIABLE_ADDRESS, SymbolKind::Variable { address, .. }) => Value::U64(*address),
        (a::KERNEL_OBJECT, SymbolKind::Kernel { object, .. }) => Value::U64(*object),
        (a::KERNEL_KERNARG_SEGMENT_SIZE, SymbolKind::Kernel { kernarg_size, .. }) => {
            Value::U32(*kernarg_size)
        }
        (a::KERNEL_KERNARG_SEGMENT_ALIGNMENT, SymbolKind::Kernel { kernarg_align, .. }) => {
            Value::U32(*kernarg_align)
        }
        (a::KERNEL_GROUP_SEGMENT_SIZE, SymbolKind::Kernel { group_size, .. }) => {
            Value::U32(*group_size)
        }
        (a::KERNEL_PRIVATE_SEGMENT_SIZE, SymbolKind::Kernel { private_size, .. }) => {
            Value::U32(*private_size)
        }
        (a::KERNEL_DYNAMIC_CALLSTACK, SymbolKind::Kernel { dynamic_stack, .. }) => {
            Value::Bool(*dynamic_stack)
        }
        (a::KERNEL_CALL_CONVENTION, SymbolKind::Kernel { .. })
        | (a::INDIRECT_FUNCTION_CALL_CONVENTION, SymbolKind::Function { .. }) => Value::U32(0),
        (a::INDIRECT_FUNCTION_OBJECT, SymbolKind::Function { address }) => Value::U64(*address),
        _ => return Err(wrong()),
    })
}

/// `hsa_executable_symbol_get_info`.
///
/// # Safety
///
/// `value` is null or valid for writes of the attribute's C type (for the name, as many bytes
/// as `HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH` says).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hsa_executable_symbol_get_info(
    executable_symbol: u64,
    attribute: u32,
    value: *mut c_void,
) -> Status {
    entry("hsa_executable_symbol_get_info", || {
        let runtime = runtime()?;
        let symbol = runtime
            .objects
            .executables
            .symbols
            .get(executable_symbol)
            .ok_or_else(|| Error::new(Status::INVALID_EXECUTABLE_SYMBOL, "unknown symbol"))?;
        let v = symbol_info(&symbol, attribute)?;
        // SAFETY: the caller's contract.
        unsafe { answer(&v, value) }
    })
}
