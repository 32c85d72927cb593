//! What the HSA library's tests share: the interposer and the library built by cargo for this
//! test's profile, a directory that holds the library under ROCr's names, and programs run on
//! the simulated GPU with a time limit.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

/// How long one program may run on the simulator before it counts as hung.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// The interposer that serves the simulated machine to unmodified programs.
pub fn interposer() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            test_support::cargo_build::build_library(
                env!("CARGO_MANIFEST_DIR"),
                "amdgpu-sim-preload",
                "libamdgpu_sim_preload.so",
            )
        })
        .clone()
}

/// A directory holding this build's library as `libhsa-runtime64.so.1` and
/// `libhsa-runtime64.so` (what `scripts/hsa-runtime-dir` makes).
pub fn hsa_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let library = test_support::cargo_build::build_library(
                env!("CARGO_MANIFEST_DIR"),
                "aqueduct-hsa",
                "libhsa_runtime64.so",
            );
            let dir = library
                .parent()
                .expect("the library's directory")
                .join("hsa-runtime-test");
            std::fs::create_dir_all(&dir).unwrap();
            let versioned = dir.join("libhsa-runtime64.so.1");
            let staged = dir.join(format!("libhsa-runtime64.so.1.{}", std::process::id()));
            std::fs::copy(&library, &staged).unwrap();
            std::fs::rename(&staged, &versioned).unwrap();
            let unversioned = dir.join("libhsa-runtime64.so");
            let _ = std::fs::remove_file(&unversioned);
            std::os::unix::fs::symlink("libhsa-runtime64.so.1", &unversioned).unwrap();
            dir
        })
        .clone()
}

/// The repository root.
pub fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Run `command` on the simulated machine (interposer preloaded, aqueduct forced onto its real
/// `Linux` path); with `ours`, the HSA library is this crate's. Fails the test if the program
/// outlives [`DEADLINE`].
pub fn run_on_simulator(mut command: Command, ours: bool) -> Output {
    command
        .env("LD_PRELOAD", interposer())
        .env("AQUEDUCT_BACKEND", "hw")
        .env_remove("AQUEDUCT_SIM_MACHINE")
        .env_remove("LD_LIBRARY_PATH");
    if ours {
        command.env("LD_LIBRARY_PATH", hsa_dir());
    }
    let what = format!(
        "{} on the simulator",
        command.get_program().to_string_lossy()
    );
    test_support::process::run_with_deadline(&mut command, DEADLINE, &what)
}

/// Status, stdout and stderr, for a failure message.
pub fn describe(output: &Output) -> String {
    format!(
        "{}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Whether a program's `LD_DEBUG=files` trace shows ROCr's own library or libhsakmt loaded.
pub fn rocr_loaded(ld_debug: &str) -> Option<String> {
    ld_debug
        .lines()
        .find(|line| {
            line.contains("file=")
                && (line.contains("libhsa-runtime64.so.1.")
                    || line.contains("libhsakmt")
                    || line.contains("/usr/lib/x86_64-linux-gnu/libhsa-runtime64"))
        })
        .map(str::to_owned)
}

/// A tool the test needs, or a skip (a failure where `AQUEDUCT_REQUIRE_HW` is set).
pub fn require(test: &str, path: &str) -> bool {
    if Path::new(path).exists() {
        return true;
    }
    test_support::hardware::skip(test, &format!("{path} is not installed"));
    false
}

/// Build test programs once per test binary: run `script` (relative to this crate) into
/// `target/<profile>/<out>` within `limit`, with no interposer. `Err` says what is missing
/// (the script's stderr), for [`built`].
pub fn build_once(
    cell: &'static OnceLock<Result<PathBuf, String>>,
    script: &str,
    out: &str,
    limit: Duration,
    what: &str,
) -> Result<&'static Path, &'static str> {
    cell.get_or_init(|| {
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let out = exe
            .parent()
            .and_then(Path::parent)
            .ok_or("no target directory")?
            .join(out);
        let build = test_support::process::try_run_with_deadline(
            Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join(script))
                .arg(&out)
                .env_remove("LD_PRELOAD"),
            limit,
            what,
        )
        .map_err(|e| format!("{script}: {e}"))?;
        if build.status.success() {
            Ok(out)
        } else {
            Err(String::from_utf8_lossy(&build.stderr).trim().to_owned())
        }
    })
    .as_deref()
    .map_err(String::as_str)
}

/// The directory `build` made, or `None` after a skip naming `test` and what is missing
/// (`hardware::skip`: CI turns it into a failure).
pub fn built(
    test: &str,
    build: impl FnOnce() -> Result<&'static Path, &'static str>,
) -> Option<&'static Path> {
    match build() {
        Ok(dir) => Some(dir),
        Err(why) => {
            test_support::hardware::skip(test, why);
            None
        }
    }
}
