//! LLVM's offloading runtimes on aqueduct's `libhsa-runtime64.so.1`, on the simulated MI210
//! under the interposer, each run with a time limit, and ROCr's own library (and libhsakmt)
//! never loaded (checked in each program's `LD_DEBUG=files` trace):
//! - OpenMP target offload built by Debian's clang-19 and run by libomptarget 19 (whose AMDGPU
//!   plugin `dlopen`s `libhsa-runtime64.so`): reductions, device globals, atomics and math
//!   functions of the ROCm device libraries (`tests/offload/omp_suite.c`), and a trap on the GPU
//!   that reaches libomptarget's queue error callback with ROCr's status;
//! - Debian's `llvm-offload-device-info-22` (liboffload 22) lists the GPU exactly as it does
//!   over ROCr on the same simulated machine;
//! - a C program on liboffload 22 (`tests/offload/liboffload_client.c`): olInit → program →
//!   kernels → olShutDown several times, dlclose of liboffload, and again.
//!
//! They need `clang-19`, `libomp-19-dev`, `rocm-device-libs`, `clang-22`, `lld-22` and
//! `liboffload-22-dev` (CI installs them); where one is missing the test is a skip through
//! `hardware::skip`, which CI (`AQUEDUCT_REQUIRE_HW`) turns into a failure.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use support::{describe, hsa_dir, interposer, rocr_loaded};

/// Where Debian keeps libomptarget 19 and its AMDGPU plugin.
const LLVM_19_LIB: &str = "/usr/lib/llvm-19/lib";

/// The offload clients (`tests/offload/build.sh`), built once per test run; `Err` says what
/// is missing.
fn clients() -> Result<&'static Path, &'static str> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    support::build_once(
        &BUILT,
        "tests/offload/build.sh",
        "hsa-offload-clients",
        Duration::from_secs(600),
        "building the offload clients (tests/offload/build.sh)",
    )
}

fn built(test: &str) -> Option<&'static Path> {
    support::built(test, clients)
}

/// Run `command` on the simulated machine with `LD_DEBUG=files`; with `ours`, this crate's
/// library comes first on `LD_LIBRARY_PATH`, then `extra` (LLVM's private library directory).
fn run(mut command: Command, ours: bool, extra: Option<&str>) -> Output {
    let mut path: Vec<String> = Vec::new();
    if ours {
        path.push(hsa_dir().display().to_string());
    }
    path.extend(extra.map(str::to_owned));
    command
        .env("LD_PRELOAD", interposer())
        .env("AQUEDUCT_BACKEND", "hw")
        .env("LD_DEBUG", "files")
        .env("LD_LIBRARY_PATH", path.join(":"))
        .env_remove("AQUEDUCT_SIM_MACHINE")
        .env_remove("OMP_TARGET_OFFLOAD");
    let what = format!(
        "{} on the simulator",
        command.get_program().to_string_lossy()
    );
    test_support::process::run_with_deadline(&mut command, support::DEADLINE, &what)
}

/// The program succeeded, loaded this crate's library and never ROCr's.
fn assert_ran_on_ours(output: &Output) {
    assert!(output.status.success(), "{}", describe(output));
    assert_only_ours_loaded(output);
}

/// The program loaded this crate's library and never ROCr's (nor libhsakmt).
fn assert_only_ours_loaded(output: &Output) {
    let trace = String::from_utf8_lossy(&output.stderr);
    assert!(
        trace.contains("hsa-runtime-test/libhsa-runtime64.so"),
        "our library was not the one loaded: {}",
        describe(output)
    );
    assert_eq!(rocr_loaded(&trace), None, "ROCr's own library was loaded");
}

/// Run one section of `omp_suite` over this library and check its verdict line.
fn omp_section(section: &str, n: &str, verdict: &str) {
    let Some(dir) = built(&format!("omp_suite {section}")) else {
        return;
    };
    let mut command = Command::new(dir.join("omp_suite"));
    command.args([section, n]);
    let output = run(command, true, Some(LLVM_19_LIB));
    assert_ran_on_ours(&output);
    assert!(
        String::from_utf8_lossy(&output.stdout).contains(verdict),
        "{}",
        describe(&output)
    );
}

#[test]
fn openmp_reductions_run_through_libomptarget_19_on_this_library() {
    omp_section("reduction", "100000", "omp_suite reduction: ok 100000");
}

#[test]
fn openmp_device_globals_keep_their_values_between_target_regions() {
    omp_section("globals", "0", "omp_suite globals: ok 1024");
}

#[test]
fn openmp_atomics_update_a_histogram_tickets_and_a_float_sum() {
    omp_section("atomics", "20000", "omp_suite atomics: ok 20000");
}

#[test]
fn openmp_math_functions_of_the_device_libraries_match_the_host() {
    omp_section("math", "5000", "omp_suite math: ok 5000");
}

/// The status libomptarget prints from its queue error callback (`AMDGPU fatal error 1:
/// Received error in queue 0x…: STATUS: TEXT`), without the queue's address.
fn queue_error_report(output: &Output) -> Option<String> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr
        .lines()
        .find(|line| line.starts_with("AMDGPU fatal error"))?;
    line.find("HSA_STATUS_").map(|at| line[at..].to_owned())
}

#[test]
fn a_gpu_trap_reaches_libomptarget_s_queue_error_callback_as_over_rocr() {
    let Some(dir) = built("omp_suite trap") else {
        return;
    };
    let mut reports = Vec::new();
    for ours in [true, false] {
        let mut command = Command::new(dir.join("omp_suite"));
        command.arg("trap");
        // Without the callback the program waits forever on its dispatch's completion signal:
        // `run` fails the test at its deadline.
        let output = run(command, ours, Some(LLVM_19_LIB));
        assert!(!output.status.success(), "{}", describe(&output));
        if ours {
            assert_only_ours_loaded(&output);
        }
        let report = queue_error_report(&output);
        assert!(
            report.is_some(),
            "no queue error report: {}",
            describe(&output)
        );
        reports.push(report);
    }
    assert_eq!(
        reports[0].as_deref(),
        Some("HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception."),
    );
    assert_eq!(reports[0], reports[1], "ROCr reports the trap differently");
}

#[test]
fn llvm_offload_device_info_22_lists_the_gpu_as_it_does_over_rocr() {
    let tool = "/usr/bin/llvm-offload-device-info-22";
    if !support::require("llvm-offload-device-info-22 (liboffload-22-dev)", tool)
        || !support::require(
            "ROCr's libhsa-runtime64.so (libhsa-runtime-dev)",
            "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so",
        )
    {
        return;
    }
    let ours = run(Command::new(tool), true, None);
    assert_ran_on_ours(&ours);
    let rocr = run(Command::new(tool), false, None);
    assert!(rocr.status.success(), "over ROCr: {}", describe(&rocr));
    let (ours, rocr) = (
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&rocr.stdout),
    );
    assert!(
        ours.contains("[AMD Instinct MI210]")
            && ours.contains("Name: gfx90a")
            && ours.contains("Platform Backend: AMDGPU")
            && ours.contains("Num Compute Units: 104"),
        "{ours}"
    );
    // No line differs: liboffload reads every value through the HSA info functions.
    assert_eq!(ours, rocr, "device info over aqueduct differs from ROCr's");
}

#[test]
fn a_liboffload_22_program_runs_kernels_shuts_down_and_is_reloaded() {
    let Some(dir) = built("liboffload_client") else {
        return;
    };
    let mut command = Command::new(dir.join("liboffload_client"));
    command.arg(dir.join("ol_kernels.so")).args(["3", "2"]);
    let output = run(command, true, Some("/usr/lib/llvm-22/lib"));
    assert_ran_on_ours(&output);
    assert!(
        String::from_utf8_lossy(&output.stdout)
            .contains("liboffload_client: ok (2 loads x 3 rounds)"),
        "{}",
        describe(&output)
    );
}
