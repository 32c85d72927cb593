//! The few entry points of ROCr's `libhsa-runtime64` that the comparison calls, looked up at run
//! time with `dlopen`/`dlsym` (no build-time dependency on ROCr), and the types they take.
//!
//! Layouts and constants are those of Debian's `hsa.h` (ROCr 5.2, `libhsa-runtime-dev`), the
//! 64-bit "large model"; `tests::layout_matches_the_installed_header` checks them against the
//! header where a C compiler and the header are installed.

use std::ffi::{CStr, c_char, c_void};

/// `hsa_status_t`.
pub type Status = u32;
/// `HSA_STATUS_SUCCESS`.
pub const STATUS_SUCCESS: Status = 0;
/// `HSA_STATUS_INFO_BREAK`: a callback's way to stop an iteration.
pub const STATUS_INFO_BREAK: Status = 1;

/// `HSA_AGENT_INFO_NAME` (`char[64]`).
pub const AGENT_INFO_NAME: u32 = 0;
/// `HSA_AGENT_INFO_WORKGROUP_MAX_SIZE` (`uint32_t`).
pub const AGENT_INFO_WORKGROUP_MAX_SIZE: u32 = 8;
/// `HSA_AGENT_INFO_DEVICE` (`hsa_device_type_t`).
pub const AGENT_INFO_DEVICE: u32 = 17;
/// `HSA_DEVICE_TYPE_GPU`.
pub const DEVICE_TYPE_GPU: u32 = 1;
/// `HSA_QUEUE_TYPE_SINGLE`.
pub const QUEUE_TYPE_SINGLE: u32 = 1;
/// `HSA_PROFILE_FULL`.
pub const PROFILE_FULL: u32 = 1;
/// `HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT`.
pub const FLOAT_ROUNDING_MODE_DEFAULT: u32 = 0;
/// `HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT` (`uint64_t`).
pub const SYMBOL_INFO_KERNEL_OBJECT: u32 = 22;
/// `HSA_SIGNAL_CONDITION_LT`.
pub const SIGNAL_CONDITION_LT: u32 = 2;
/// `HSA_WAIT_STATE_BLOCKED`.
pub const WAIT_STATE_BLOCKED: u32 = 0;

/// An opaque HSA handle (`hsa_agent_t`, `hsa_signal_t`, `hsa_executable_t`, ...: each a struct
/// of one `uint64_t handle`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handle {
    /// The runtime's value.
    pub handle: u64,
}

/// `hsa_queue_t` (HSA_LARGE_MODEL).
#[repr(C)]
#[derive(Debug)]
pub struct Queue {
    /// `hsa_queue_type32_t`.
    pub queue_type: u32,
    /// Feature bits.
    pub features: u32,
    /// The ring of `size` 64-byte packets.
    pub base_address: *mut c_void,
    /// The signal whose store rings the doorbell.
    pub doorbell_signal: Handle,
    /// Packets in the ring (a power of two).
    pub size: u32,
    /// Reserved.
    pub reserved1: u32,
    /// The queue's id.
    pub id: u64,
}

type AgentCallback = unsafe extern "C" fn(agent: Handle, data: *mut c_void) -> Status;

/// The entry points, resolved from one loaded library that they keep alive.
#[derive(Debug)]
pub struct Hsa {
    /// `hsa_init`.
    pub init: unsafe extern "C" fn() -> Status,
    /// `hsa_shut_down`.
    pub shut_down: unsafe extern "C" fn() -> Status,
    /// `hsa_status_string`.
    pub status_string: unsafe extern "C" fn(Status, *mut *const c_char) -> Status,
    /// `hsa_iterate_agents`.
    pub iterate_agents: unsafe extern "C" fn(AgentCallback, *mut c_void) -> Status,
    /// `hsa_agent_get_info`.
    pub agent_get_info: unsafe extern "C" fn(Handle, u32, *mut c_void) -> Status,
    /// `hsa_queue_create`.
    pub queue_create: unsafe extern "C" fn(
        agent: Handle,
        size: u32,
        queue_type: u32,
        callback: Option<unsafe extern "C" fn(Status, *mut Queue, *mut c_void)>,
        data: *mut c_void,
        private_segment_size: u32,
        group_segment_size: u32,
        queue: *mut *mut Queue,
    ) -> Status,
    /// `hsa_queue_destroy`.
    pub queue_destroy: unsafe extern "C" fn(*mut Queue) -> Status,
    /// `hsa_queue_add_write_index_relaxed`.
    pub queue_add_write_index_relaxed: unsafe extern "C" fn(*const Queue, u64) -> u64,
    /// `hsa_signal_create`.
    pub signal_create: unsafe extern "C" fn(i64, u32, *const Handle, *mut Handle) -> Status,
    /// `hsa_signal_destroy`.
    pub signal_destroy: unsafe extern "C" fn(Handle) -> Status,
    /// `hsa_signal_store_relaxed`.
    pub signal_store_relaxed: unsafe extern "C" fn(Handle, i64),
    /// `hsa_signal_store_screlease`.
    pub signal_store_screlease: unsafe extern "C" fn(Handle, i64),
    /// `hsa_signal_load_scacquire`.
    pub signal_load_scacquire: unsafe extern "C" fn(Handle) -> i64,
    /// `hsa_signal_wait_scacquire`.
    pub signal_wait_scacquire: unsafe extern "C" fn(Handle, u32, i64, u64, u32) -> i64,
    /// `hsa_code_object_reader_create_from_memory`.
    pub code_object_reader_create_from_memory:
        unsafe extern "C" fn(*const c_void, usize, *mut Handle) -> Status,
    /// `hsa_code_object_reader_destroy`.
    pub code_object_reader_destroy: unsafe extern "C" fn(Handle) -> Status,
    /// `hsa_executable_create_alt`.
    pub executable_create_alt: unsafe extern "C" fn(u32, u32, *const c_char, *mut Handle) -> Status,
    /// `hsa_executable_load_agent_code_object`.
    pub executable_load_agent_code_object:
        unsafe extern "C" fn(Handle, Handle, Handle, *const c_char, *mut Handle) -> Status,
    /// `hsa_executable_freeze`.
    pub executable_freeze: unsafe extern "C" fn(Handle, *const c_char) -> Status,
    /// `hsa_executable_get_symbol_by_name`.
    pub executable_get_symbol_by_name:
        unsafe extern "C" fn(Handle, *const c_char, *const Handle, *mut Handle) -> Status,
    /// `hsa_executable_symbol_get_info`.
    pub executable_symbol_get_info: unsafe extern "C" fn(Handle, u32, *mut c_void) -> Status,
    /// `hsa_executable_destroy`.
    pub executable_destroy: unsafe extern "C" fn(Handle) -> Status,
    /// Keeps the entry points above mapped.
    _library: libloading::Library,
}

impl Hsa {
    /// Load `library` (a name the dynamic loader searches for, or a path) and resolve every
    /// entry point. `Err` says why (not found, or an entry point missing).
    pub fn load(library: &str) -> Result<Self, libloading::Error> {
        // SAFETY: loading ROCr runs its initialisers, which only set up its own statics; it is
        // a shared library made to be loaded by any program (rocminfo, HIP, ...).
        let lib = unsafe { libloading::Library::new(library) }?;
        macro_rules! entry {
            ($name:literal) => {
                // SAFETY: the field this initialises has the C signature `hsa.h` declares for
                // this name (checked against the header by this module's test); the pointer
                // stays valid while `_library` keeps the library loaded.
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }?
            };
        }
        Ok(Self {
            init: entry!("hsa_init"),
            shut_down: entry!("hsa_shut_down"),
            status_string: entry!("hsa_status_string"),
            iterate_agents: entry!("hsa_iterate_agents"),
            agent_get_info: entry!("hsa_agent_get_info"),
            queue_create: entry!("hsa_queue_create"),
            queue_destroy: entry!("hsa_queue_destroy"),
            queue_add_write_index_relaxed: entry!("hsa_queue_add_write_index_relaxed"),
            signal_create: entry!("hsa_signal_create"),
            signal_destroy: entry!("hsa_signal_destroy"),
            signal_store_relaxed: entry!("hsa_signal_store_relaxed"),
            signal_store_screlease: entry!("hsa_signal_store_screlease"),
            signal_load_scacquire: entry!("hsa_signal_load_scacquire"),
            signal_wait_scacquire: entry!("hsa_signal_wait_scacquire"),
            code_object_reader_create_from_memory: entry!(
                "hsa_code_object_reader_create_from_memory"
            ),
            code_object_reader_destroy: entry!("hsa_code_object_reader_destroy"),
            executable_create_alt: entry!("hsa_executable_create_alt"),
            executable_load_agent_code_object: entry!("hsa_executable_load_agent_code_object"),
            executable_freeze: entry!("hsa_executable_freeze"),
            executable_get_symbol_by_name: entry!("hsa_executable_get_symbol_by_name"),
            executable_symbol_get_info: entry!("hsa_executable_symbol_get_info"),
            executable_destroy: entry!("hsa_executable_destroy"),
            _library: lib,
        })
    }

    /// `Ok` for `HSA_STATUS_SUCCESS`, else `call` and the runtime's text for `status`.
    pub fn check(&self, call: &str, status: Status) -> Result<(), String> {
        if status == STATUS_SUCCESS {
            return Ok(());
        }
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: `hsa_status_string` writes a pointer to a static string into `text`, which
        // is valid for the write; it may be called before `hsa_init`.
        let known = unsafe { (self.status_string)(status, &raw mut text) } == STATUS_SUCCESS;
        let text = if known && !text.is_null() {
            // SAFETY: the runtime returned a NUL-terminated static string.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        } else {
            "unknown status".to_owned()
        };
        Err(format!("{call}: {text} ({status:#x})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    /// The numbers this module uses, printed by a C program compiled against the installed
    /// `hsa.h`; skipped (said on stderr) where there is no `cc` or no header.
    #[test]
    fn layout_matches_the_installed_header() {
        let header = Path::new("/usr/include/hsa/hsa.h");
        if !header.exists() {
            eprintln!("skipped: no {} (libhsa-runtime-dev)", header.display());
            return;
        }
        let dir = std::env::temp_dir().join(format!("aqueduct-hsa-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let source = dir.join("layout.c");
        std::fs::write(
            &source,
            r#"#include <hsa/hsa.h>
#include <stddef.h>
#include <stdio.h>
int main(void) {
    printf("%zu %zu %zu %zu %zu %zu %zu\n", sizeof(hsa_queue_t), offsetof(hsa_queue_t, features),
           offsetof(hsa_queue_t, base_address), offsetof(hsa_queue_t, doorbell_signal),
           offsetof(hsa_queue_t, size), offsetof(hsa_queue_t, id), sizeof(hsa_agent_t));
    printf("%d %d %d %d %d %d %d %d %d %d %d %d\n", HSA_STATUS_SUCCESS, HSA_STATUS_INFO_BREAK,
           HSA_AGENT_INFO_NAME, HSA_AGENT_INFO_DEVICE, HSA_DEVICE_TYPE_GPU,
           HSA_QUEUE_TYPE_SINGLE, HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
           HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, HSA_SIGNAL_CONDITION_LT,
           HSA_WAIT_STATE_BLOCKED, (int)sizeof(hsa_signal_value_t));
    return 0;
}
"#,
        )
        .unwrap();
        let program = dir.join("layout");
        let built = Command::new("cc")
            .arg("-o")
            .arg(&program)
            .arg(&source)
            .output();
        let built = match built {
            Ok(out) if out.status.success() => out,
            Ok(out) => panic!("cc failed: {}", String::from_utf8_lossy(&out.stderr)),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                eprintln!("skipped: no C compiler ({e})");
                return;
            }
        };
        drop(built);
        let out = Command::new(&program).output().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let text = String::from_utf8(out.stdout).unwrap();
        let mut lines = text.lines();
        let queue = [
            size_of::<Queue>(),
            std::mem::offset_of!(Queue, features),
            std::mem::offset_of!(Queue, base_address),
            std::mem::offset_of!(Queue, doorbell_signal),
            std::mem::offset_of!(Queue, size),
            std::mem::offset_of!(Queue, id),
            size_of::<Handle>(),
        ]
        .map(|n| n.to_string())
        .join(" ");
        assert_eq!(lines.next(), Some(queue.as_str()));
        let constants = [
            STATUS_SUCCESS,
            STATUS_INFO_BREAK,
            AGENT_INFO_NAME,
            AGENT_INFO_DEVICE,
            DEVICE_TYPE_GPU,
            QUEUE_TYPE_SINGLE,
            PROFILE_FULL,
            FLOAT_ROUNDING_MODE_DEFAULT,
            SYMBOL_INFO_KERNEL_OBJECT,
            SIGNAL_CONDITION_LT,
            WAIT_STATE_BLOCKED,
            size_of::<i64>() as u32,
        ]
        .map(|n| n.to_string())
        .join(" ");
        assert_eq!(lines.next(), Some(constants.as_str()));
    }
}
