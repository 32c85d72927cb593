//! The README's main command keeps working: the quickstart example (which `cargo test` builds
//! beside this test) runs on the simulator and checks every element it computed.

use std::path::PathBuf;
use std::process::Command;

use test_support::process::{DEFAULT_DEADLINE, run_with_deadline};

#[test]
fn the_quickstart_runs_and_checks_its_result() {
    // target/<profile>/deps/<this test> → target/<profile>/examples/quickstart
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let example: PathBuf = profile_dir.join("examples").join("quickstart");
    assert!(example.exists(), "{} was not built", example.display());
    let out = run_with_deadline(
        Command::new(&example)
            .arg("65536")
            .env("AQUEDUCT_BACKEND", "sim"),
        DEFAULT_DEADLINE,
        "the quickstart example on 65536 elements",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("vector_add of 65536 elements: every element checked"),
        "{stdout}"
    );
    assert!(stdout.contains("kernel time (GPU timestamps):"), "{stdout}");
    // Bad input: a clear error, not a panic.
    let out = run_with_deadline(
        Command::new(&example)
            .arg("many")
            .env("AQUEDUCT_BACKEND", "sim"),
        DEFAULT_DEADLINE,
        "the quickstart example refusing bad input",
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"many\" is not a number of elements"));
}

/// The same on the simulated Radeon RX 7900 XTX: gfx1100 code on the GFX11 shader core.
#[test]
fn the_quickstart_runs_on_the_rdna3_preset() {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let example: PathBuf = profile_dir.join("examples").join("quickstart");
    let out = run_with_deadline(
        Command::new(&example)
            .arg("4096")
            .env("AQUEDUCT_BACKEND", "sim")
            .env("AQUEDUCT_SIM_MACHINE", "rx7900xtx"),
        DEFAULT_DEADLINE,
        "the quickstart example on the rx7900xtx preset",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("gfx1100"), "{stdout}");
    assert!(
        stdout.contains("vector_add of 4096 elements: every element checked"),
        "{stdout}"
    );
}
