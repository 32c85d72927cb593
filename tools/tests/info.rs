//! `aqueduct info` on the simulator: the backend said once, the topology parsed.

use std::process::Command;

fn info(machine: &str) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_aqueduct"))
        .arg("info")
        .env("AQUEDUCT_BACKEND", "sim")
        .env("AQUEDUCT_SIM_MACHINE", machine)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn info_prints_the_simulated_topology() {
    let (stdout, stderr) = info("mi210");
    assert_eq!(stderr.matches("using the simulator").count(), 1, "{stderr}");
    assert!(stdout.contains("kfd interface: 1."), "{stdout}");
    assert!(stdout.contains("node 0: CPU"), "{stdout}");
    assert!(
        stdout.contains("gfx90a:sramecc+, 104 CUs in 1 XCC(s), wave64"),
        "{stdout}"
    );
    assert!(
        stdout.contains("VRAM (host-visible), 65536 MiB"),
        "{stdout}"
    );
    assert!(stdout.contains("io link 0: PCIe to node 0"), "{stdout}");

    let (stdout, _) = info("mi210-hive");
    assert_eq!(stdout.matches("gfx90a:sramecc+").count(), 4, "{stdout}");
    assert!(stdout.contains("XGMI"), "{stdout}");
}
