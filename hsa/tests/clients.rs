//! C clients of the HSA API on aqueduct's `libhsa-runtime64.so.1`, on the simulated MI210
//! under the interposer (so the library runs over aqueduct's real `Linux` path), each with a
//! time limit, and ROCr's own library never loaded:
//! - `loader_client`: the API as LLVM's GPU loader uses it (agents, pools, reader, executable,
//!   symbols, kernarg pool, queue with packets the program writes, completion signal, memory
//!   fault handler), plus profiling, an async handler, indirect-function symbols and a GPU
//!   memory fault the process survives;
//! - `hsa_vector_add`: the C program the interposer's tests run on ROCr, unchanged, on ours;
//! - `reload_client`: dlopen → hsa_init → dispatch → hsa_shut_down → dlclose, 100 times, the
//!   library gone from `/proc/self/maps` after each;
//! - `loader_extension`: the AMD loader extension table HIP fetches (executables, loaded code
//!   objects and their info, addresses, segments; the profiler table declined), here and on
//!   ROCr.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

// Every program runs through `support::run_on_simulator`, bounded by `support::DEADLINE`; the
// build through `support::build_once`, bounded by its own deadline.
use support::{describe, repository, rocr_loaded, run_on_simulator};

/// The C clients, built once per test run; `Err` says what is missing.
fn clients() -> Result<&'static Path, &'static str> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    support::build_once(
        &BUILT,
        "tests/c/build.sh",
        "hsa-clients",
        Duration::from_secs(600),
        "building the HSA C clients (tests/c/build.sh)",
    )
}

fn built(test: &str) -> Option<&'static Path> {
    support::built(test, clients)
}

fn kernels() -> PathBuf {
    repository().join("tests/kernels/bin/gfx90a")
}

#[test]
fn a_loader_style_client_dispatches_profiles_sees_functions_and_survives_a_memory_fault() {
    let Some(dir) = built("loader_client") else {
        return;
    };
    let mut command = Command::new(dir.join("loader_client"));
    command.arg(kernels()).env("LD_DEBUG", "files");
    let output = run_on_simulator(command, true);
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("loader_client: ok (3000 elements"),
        "{stdout}"
    );
    assert!(stdout.contains("fault at 0x7ff000000000"), "{stdout}");
    let trace = String::from_utf8_lossy(&output.stderr);
    assert!(
        trace.contains("hsa-runtime-test/libhsa-runtime64.so.1"),
        "{trace}"
    );
    assert_eq!(rocr_loaded(&trace), None, "ROCr's own library was loaded");
}

#[test]
fn the_rocr_vector_add_client_runs_unchanged_on_this_library() {
    let Some(dir) = built("hsa_vector_add") else {
        return;
    };
    let mut command = Command::new(dir.join("hsa_vector_add"));
    command
        .arg(kernels().join("vector_add.co5"))
        .arg("5000")
        .env("LD_DEBUG", "files");
    let output = run_on_simulator(command, true);
    assert!(output.status.success(), "{}", describe(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("GPU agent: gfx90a"), "{stdout}");
    assert!(
        stdout.contains("hsa_vector_add: ok (5000 elements)"),
        "{stdout}"
    );
    assert_eq!(
        rocr_loaded(&String::from_utf8_lossy(&output.stderr)),
        None,
        "ROCr's own library was loaded"
    );
}

#[test]
fn dlopen_init_dispatch_shut_down_dlclose_100_times_leaves_nothing_mapped() {
    let Some(dir) = built("reload_client") else {
        return;
    };
    let mut command = Command::new(dir.join("reload_client"));
    command.arg(kernels().join("vector_add.co5")).arg("100");
    let output = run_on_simulator(command, true);
    assert!(output.status.success(), "{}", describe(&output));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("reload_client: ok (100 rounds)"),
        "{}",
        describe(&output)
    );
}

#[test]
fn the_loader_extension_table_serves_executables_code_objects_and_addresses_like_rocr() {
    let Some(dir) = built("loader_extension") else {
        return;
    };
    for ours in [true, false] {
        let mut command = Command::new(dir.join("loader_extension"));
        command.arg(kernels()).env("LD_DEBUG", "files");
        let output = run_on_simulator(command, ours);
        assert!(
            output.status.success(),
            "ours {ours}: {}",
            describe(&output)
        );
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("loader_extension: ok"),
            "ours {ours}: {}",
            describe(&output)
        );
        let rocr = rocr_loaded(&String::from_utf8_lossy(&output.stderr));
        assert_eq!(rocr.is_none(), ours, "ours {ours}: ROCr loaded: {rocr:?}");
    }
}
