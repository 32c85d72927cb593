//! Build another workspace package from inside a test (a cdylib the test loads or preloads)
//! with the cargo and profile that built the running test binary, into the same target
//! directory, so that the test and the library come from one build.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// How long the build may take: the first one in a target directory compiles the workspace
/// again (minutes on a loaded 2-core machine); later ones find everything built.
const BUILD_DEADLINE: Duration = Duration::from_secs(30 * 60);

/// `cargo build -p {package}` with this test binary's cargo, profile and target directory,
/// run in `manifest_dir` without LD_PRELOAD (cargo and rustc must never run under the
/// simulator's interposer); returns the canonical path of `{file}` in `target/<profile>/`,
/// where cargo copies a cdylib.
///
/// The first time in a target directory this may compile workspace crates once more: a build
/// of one package unifies features differently from `cargo test --workspace`.
///
/// # Panics
/// If the build fails, takes longer than [`BUILD_DEADLINE`], or does not produce `file`.
pub fn build_library(manifest_dir: &str, package: &str, file: &str) -> PathBuf {
    // <target-dir>/<profile-dir>/deps/<test>-<hash>
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("a test binary under <target-dir>/<profile>/deps");
    let target_dir = profile_dir.parent().expect("a target directory");
    let profile = match profile_dir.file_name().and_then(|name| name.to_str()) {
        Some("debug") => "dev",
        Some(other) => other,
        None => panic!("{}: not a profile directory", profile_dir.display()),
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let built = crate::process::run_with_deadline(
        Command::new(cargo)
            .args(["build", "--quiet", "-p", package, "--profile", profile])
            .arg("--target-dir")
            .arg(target_dir)
            .current_dir(manifest_dir)
            .env_remove("LD_PRELOAD"),
        BUILD_DEADLINE,
        &format!("cargo building {package}"),
    );
    assert!(
        built.status.success(),
        "building {package}: {}\n{}",
        built.status,
        String::from_utf8_lossy(&built.stderr)
    );
    let library = profile_dir.join(file);
    library
        .canonicalize()
        .unwrap_or_else(|e| panic!("{} was not built: {e}", library.display()))
}
