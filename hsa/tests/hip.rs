//! Debian's HIP 5.2 runtime (`libamdhip64.so.5`) on aqueduct's `libhsa-runtime64.so.1`, ROCr
//! absent, on the simulated MI210 under the interposer: programs built by `hipcc
//! --offload-arch=gfx90a` (tests/hip) give correct results, the same output as over ROCr on
//! the same simulated machine, and map no Debian `libhsa-runtime64.so.1.5.0` and no
//! `libhsakmt` (each program prints the HSA libraries in its `/proc/self/maps`). Each run has
//! a time limit (`support::DEADLINE`).
//! - `hip_kernels`: device query, vector add, shared memory + `__syncthreads`, atomics,
//!   `__constant__` memory and `hipMemcpyToSymbol`, device function pointers (a call stack:
//!   scratch grown on the CP's request);
//! - `hip_streams_events`: two streams, events between them, `hipEventElapsedTime`, async
//!   copies from and to pinned memory;
//! - `hip_module`: `hipModuleLoadData` → `GetFunction` → `GetGlobal` → `ModuleLaunchKernel`
//!   → `ModuleUnload`, twice;
//! - `hip_printf`: device `printf` through HIP's hostcall buffer;
//! - `hip_memcpy2d`: `hipMemcpy2D`/`hipMemcpy2DAsync`/`hipMemcpy3D` between pitched device
//!   memory, pinned memory and pageable memory at an odd address (HIP locks the pageable
//!   range twice: its first try, a rectangle on the copy engine, is refused as ROCr refuses an
//!   unaligned base);
//! - `hip_assert`: a failed device `assert` aborts the program with its message;
//! - `hip_kernels` and `hip_streams_events` again on the small-BAR preset, where the CPU
//!   cannot reach VRAM and HIP must learn so from the CPU agent's access to the VRAM pool;
//! - `rocsparse_csrmv`, `rocrand_philox`: Debian's rocSPARSE and rocRAND (AMD's own kernels):
//!   a sparse matrix-vector product checked on the host, Philox uniforms (same seed, same
//!   numbers; mean and variance).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use support::{describe, hsa_dir, run_on_simulator};

/// The HIP programs, built once per test run; `Err` says what is missing.
fn programs() -> Result<&'static Path, &'static str> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    support::build_once(
        &BUILT,
        "tests/hip/build.sh",
        "hsa-hip-programs",
        Duration::from_secs(600),
        "building the HIP programs (tests/hip/build.sh)",
    )
}

/// Run `program` with `args` on the simulator over ours (`ours`) or ROCr; fails the test
/// unless it exits 0 having mapped the expected runtime. Returns its output lines, without
/// the `mapped:` ones.
fn run(dir: &Path, program: &str, args: &[&str], ours: bool) -> Vec<String> {
    run_on(dir, program, args, ours, None)
}

/// [`run`] on the simulated `machine` (`None`: the default MI210).
fn run_on(
    dir: &Path,
    program: &str,
    args: &[&str],
    ours: bool,
    machine: Option<&str>,
) -> Vec<String> {
    let mut command = Command::new(dir.join(program));
    command.args(args).current_dir(dir);
    let output = match machine {
        None => run_on_simulator(command, ours),
        Some(machine) => {
            command
                .env("LD_PRELOAD", support::interposer())
                .env("AQUEDUCT_BACKEND", "hw")
                .env("AQUEDUCT_SIM_MACHINE", machine)
                .env_remove("LD_LIBRARY_PATH");
            if ours {
                command.env("LD_LIBRARY_PATH", hsa_dir());
            }
            let what = format!("{program} on the simulated {machine}");
            test_support::process::run_with_deadline(&mut command, support::DEADLINE, &what)
        }
    };
    let side = if ours { "aqueduct" } else { "ROCr" };
    assert!(
        output.status.success(),
        "{program} over {side}: {}",
        describe(&output)
    );
    check_mapped(program, &output, ours);
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.starts_with("mapped: "))
        .map(str::to_owned)
        .collect()
}

/// Over ours: exactly our library mapped, no ROCr and no libhsakmt. Over ROCr: ROCr's.
fn check_mapped(program: &str, output: &Output, ours: bool) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mapped: Vec<&str> = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("mapped: "))
        .collect();
    if ours {
        let ours = hsa_dir().join("libhsa-runtime64.so.1");
        assert_eq!(
            mapped,
            [ours.to_string_lossy()],
            "{program}: the HSA libraries mapped\n{}",
            describe(output)
        );
    } else {
        assert!(
            mapped
                .iter()
                .any(|path| path.contains("libhsa-runtime64.so.1.")),
            "{program} over ROCr maps ROCr\n{}",
            describe(output)
        );
    }
}

fn built(test: &str) -> Option<&'static Path> {
    support::built(test, programs)
}

#[test]
fn kernels_shared_memory_atomics_constants_and_function_pointers_match_rocr() {
    let Some(dir) = built("hip_kernels") else {
        return;
    };
    let ours = run(dir, "hip_kernels", &[], true);
    for part in [
        "device: ok 1 gfx90a",
        "vector_add: ok 100000",
        "block_sum: ok 391 blocks",
        "atomics: ok total 49998612",
        "constant: ok calls 2",
        "function_pointers: ok",
        "hip_kernels: ok",
    ] {
        assert!(
            ours.iter().any(|line| line.starts_with(part)),
            "{part:?} missing: {ours:#?}"
        );
    }
    let rocr = run(dir, "hip_kernels", &[], false);
    assert_eq!(ours, rocr, "the same program over aqueduct and over ROCr");
}

#[test]
fn two_streams_with_events_and_pinned_async_copies_are_timed_and_correct() {
    let Some(dir) = built("hip_streams_events") else {
        return;
    };
    for ours in [true, false] {
        let lines = run(dir, "hip_streams_events", &["200000"], ours);
        let last = lines.last().map(String::as_str).unwrap_or_default();
        let ms: f64 = last
            .strip_prefix("hip_streams_events: ok 200000 ")
            .and_then(|ms| ms.parse().ok())
            .unwrap_or_else(|| panic!("ours {ours}: {lines:#?}"));
        assert!(ms > 0.0 && ms.is_finite(), "ours {ours}: elapsed {ms} ms");
    }
}

#[test]
fn a_module_is_loaded_launched_written_and_unloaded_twice() {
    let Some(dir) = built("hip_module") else {
        return;
    };
    let ours = run(dir, "hip_module", &["module_kernels.hsaco"], true);
    assert_eq!(
        ours,
        ["round 0: ok", "round 1: ok", "hip_module: ok 2"],
        "{ours:#?}"
    );
    let rocr = run(dir, "hip_module", &["module_kernels.hsaco"], false);
    assert_eq!(ours, rocr, "the same program over aqueduct and over ROCr");
}

#[test]
fn device_printf_reaches_the_host_through_the_hostcall_buffer() {
    let Some(dir) = built("hip_printf") else {
        return;
    };
    let ours = run(dir, "hip_printf", &[], true);
    let mut device: Vec<&String> = ours
        .iter()
        .filter(|line| line.starts_with("device: "))
        .collect();
    device.sort();
    let mut want: Vec<String> = (0..2)
        .flat_map(|block| {
            (0..8).map(move |thread| {
                format!(
                    "device: tag 42 block {block} thread {thread} value {:.2}",
                    0.5 * f64::from(thread)
                )
            })
        })
        .collect();
    want.sort();
    assert_eq!(device, want.iter().collect::<Vec<_>>(), "{ours:#?}");
    assert_eq!(ours.last().map(String::as_str), Some("hip_printf: ok"));
    let mut rocr = run(dir, "hip_printf", &[], false);
    let mut ours = ours;
    ours.sort();
    rocr.sort();
    assert_eq!(ours, rocr, "the same lines over aqueduct and over ROCr");
}

#[test]
fn rocsparse_csrmv_matches_the_host_product_and_rocr() {
    let Some(dir) = built("rocsparse_csrmv") else {
        return;
    };
    let ours = run(dir, "rocsparse_csrmv", &[], true);
    assert!(
        ours.last()
            .is_some_and(|line| line.starts_with("rocsparse_csrmv: ok 9898 ")),
        "{ours:#?}"
    );
    let rocr = run(dir, "rocsparse_csrmv", &[], false);
    assert_eq!(ours, rocr, "the same product over aqueduct and over ROCr");
}

#[test]
fn rocrand_philox_gives_the_same_numbers_as_over_rocr() {
    let Some(dir) = built("rocrand_philox") else {
        return;
    };
    let ours = run(dir, "rocrand_philox", &[], true);
    assert!(
        ours.last()
            .is_some_and(|line| line.starts_with("rocrand_philox: ok ")),
        "{ours:#?}"
    );
    let rocr = run(dir, "rocrand_philox", &[], false);
    assert_eq!(
        ours, rocr,
        "the same seed gives the same numbers over both runtimes"
    );
}

#[test]
fn on_a_small_bar_gpu_hip_copies_through_the_gpu_instead_of_touching_vram() {
    let Some(dir) = built("hip_small_bar") else {
        return;
    };
    let machine = Some("mi210-small-bar");
    let kernels = run_on(dir, "hip_kernels", &[], true, machine);
    assert_eq!(kernels.last().map(String::as_str), Some("hip_kernels: ok"));
    let streams = run_on(dir, "hip_streams_events", &["100000"], true, machine);
    assert!(
        streams
            .last()
            .is_some_and(|line| line.starts_with("hip_streams_events: ok 100000 ")),
        "{streams:#?}"
    );
}

#[test]
fn pitched_copies_between_device_pinned_and_pageable_memory_match_rocr() {
    let Some(dir) = built("hip_memcpy2d") else {
        return;
    };
    let ours = run(dir, "hip_memcpy2d", &[], true);
    assert_eq!(ours, ["hip_memcpy2d: ok 301 67 512"], "{ours:#?}");
    let rocr = run(dir, "hip_memcpy2d", &[], false);
    assert_eq!(ours, rocr, "the same program over aqueduct and over ROCr");
}

#[test]
fn a_failed_device_assert_aborts_the_program_with_its_message_as_over_rocr() {
    let Some(dir) = built("hip_assert") else {
        return;
    };
    let message = "Device-side assertion `v[i] < 100 && \"element too large\"' failed.";
    for ours in [true, false] {
        let mut command = Command::new(dir.join("hip_assert"));
        command.current_dir(dir);
        let output = run_on_simulator(command, ours);
        let side = if ours { "aqueduct" } else { "ROCr" };
        check_mapped("hip_assert", &output, ours);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success()
                && stdout.contains("before")
                && !stdout.contains("after")
                && stderr.contains(message),
            "hip_assert over {side} should abort with the assertion\n{}",
            describe(&output)
        );
    }
}
