//! What the dlopen tests share: building the `aqueduct-dlopen-fixture` cdylib (a plugin that
//! embeds aqueduct) and one load → dispatch → unload round of it, which checks that the
//! library really left the process.

use std::ffi::CStr;
use std::path::{Path, PathBuf};

/// The fixture's exported entry point (see `tests/dlopen-fixture/src/lib.rs`).
const ENTRY: &[u8] = b"aqueduct_fixture_run\0";
type Entry = unsafe extern "C" fn(message: *mut u8, len: usize) -> i32;

/// This process' mappings, as `/proc/self/maps` lists them.
pub fn maps() -> String {
    std::fs::read_to_string("/proc/self/maps").unwrap()
}

/// Whether any mapping of this process is backed by `library`.
pub fn is_mapped(library: &Path) -> bool {
    let needle = library.to_str().unwrap();
    maps().lines().any(|line| line.ends_with(needle))
}

/// Build the fixture with the cargo and profile that built this test binary, and return the
/// canonical path of the shared library.
///
/// The first time in a target directory this compiles the workspace crates once more: a
/// build of this one package unifies features differently from `cargo test --workspace`
/// (whose members' dev-dependencies turn on features of shared dependencies), so it cannot
/// reuse that build's artifacts (about 1m40s on a 2-core machine; nothing after that).
pub fn build_fixture() -> PathBuf {
    test_support::cargo_build::build_library(
        env!("CARGO_MANIFEST_DIR"),
        "aqueduct-dlopen-fixture",
        "libaqueduct_dlopen_fixture.so",
    )
}

/// One round: load, run the fixture's dispatch, unload; the library must leave the process.
pub fn round(library: &Path, round: usize) {
    if let Err(why) = try_round(library, round) {
        panic!("round {round}: the fixture failed: {why}");
    }
}

/// [`round`], returning the fixture's failure instead of panicking on it (loading, unloading
/// and the library leaving the process are still asserted).
pub fn try_round(library: &Path, round: usize) -> Result<(), String> {
    // SAFETY: the fixture is our own cdylib; loading it runs no initialiser of its own beyond
    // what every Rust cdylib has, and nothing of it is used after `close`.
    let loaded = unsafe { libloading::Library::new(library) }
        .unwrap_or_else(|e| panic!("round {round}: dlopen: {e}"));
    assert!(is_mapped(library), "round {round}: loaded but not mapped?");
    let mut message = [0u8; 512];
    let rc = {
        // SAFETY: the symbol is `aqueduct_fixture_run`, of exactly this signature.
        let entry = unsafe { loaded.get::<Entry>(ENTRY) }
            .unwrap_or_else(|e| panic!("round {round}: dlsym: {e}"));
        // SAFETY: `message` is valid for writes of its whole length during the call.
        unsafe { entry(message.as_mut_ptr(), message.len()) }
    };
    let why = CStr::from_bytes_until_nul(&message)
        .map_or("?", |m| m.to_str().unwrap_or("?"))
        .to_owned();
    loaded
        .close()
        .unwrap_or_else(|e| panic!("round {round}: dlclose: {e}"));
    assert!(
        !is_mapped(library),
        "round {round}: dlclose succeeded but the library is still mapped (a thread-local \
         destructor or another reference keeps it)"
    );
    if rc == 0 { Ok(()) } else { Err(why) }
}
