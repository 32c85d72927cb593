//! `aqueduct info` on the simulator: the backend said once, the topology parsed, and
//! `info --json` describing every agent.

use std::process::Command;

use test_support::process::{DEFAULT_DEADLINE, run_with_deadline};

fn info(machine: &str) -> (String, String) {
    let out = run_with_deadline(
        Command::new(env!("CARGO_BIN_EXE_aqueduct"))
            .arg("info")
            .env("AQUEDUCT_BACKEND", "sim")
            .env("AQUEDUCT_SIM_MACHINE", machine),
        DEFAULT_DEADLINE,
        &format!("aqueduct info on {machine}"),
    );
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
        stdout.contains(
            "GPU gpu_id 0x1880 AMD Instinct MI210 (aldebaran), gfx90a:sramecc+, 104 CUs in 1 \
             XCC(s), wave64"
        ),
        "the product name by the device id: {stdout}"
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

/// The RX 7900 XTX as rocminfo and the KFD sysfs show a real one: gfx1100 (no xnack or
/// sramecc feature, so a bare name), 96 CUs, wave32, 2 SIMDs per CU, 6 shader engines of 2
/// arrays, 32 waves per CU, 24 GiB of host-visible VRAM on a 384-bit bus, 206 caches.
#[test]
fn info_shows_the_7900_xtx_as_the_kernel_reports_it() {
    let (stdout, _) = info("rx7900xtx");
    assert!(
        stdout.contains(
            "AMD Radeon RX 7900 XTX / 7900 XT / 7900 GRE (ip discovery), gfx1100, 96 CUs in 1 \
             XCC(s), wave32, 2482 MHz, device 0x744c"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("2 SIMDs per CU, 6 shader engines x 2 arrays, 32 waves per CU, 64 KiB LDS, 32 scratch slots per CU"),
        "{stdout}"
    );
    assert!(
        stdout.contains("VRAM (host-visible), 24576 MiB, 384-bit"),
        "{stdout}"
    );
    assert!(stdout.contains("206 caches"), "{stdout}");
    let (stdout, _) = info("rx7900xtx-small-bar");
    assert!(stdout.contains("VRAM, 24576 MiB"), "{stdout}");
}

#[test]
fn info_json_describes_every_agent() {
    for (machine, gpus, target, marketing) in [
        ("mi210", 1, "gfx90a:sramecc+:xnack-", "AMD Instinct MI210"),
        ("mi300x", 1, "gfx942:sramecc+:xnack-", "AMD Instinct MI300X"),
        (
            "mi210-hive",
            4,
            "gfx90a:sramecc+:xnack-",
            "AMD Instinct MI210",
        ),
        (
            "rx7900xtx",
            1,
            "gfx1100",
            "AMD Radeon RX 7900 XTX / 7900 XT / 7900 GRE",
        ),
    ] {
        let out = run_with_deadline(
            Command::new(env!("CARGO_BIN_EXE_aqueduct"))
                .args(["info", "--json"])
                .env("AQUEDUCT_BACKEND", "sim")
                .env("AQUEDUCT_SIM_MACHINE", machine),
            DEFAULT_DEADLINE,
            &format!("aqueduct info --json on {machine}"),
        );
        assert!(out.status.success(), "{out:?}");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["schema"], 1);
        assert_eq!(report["simulated"], true);
        assert_eq!(report["kfd_interface"][0], 1);
        let agents = report["agents"].as_array().unwrap();
        let gpu_agents: Vec<_> = agents.iter().filter(|a| a["kind"] == "gpu").collect();
        assert_eq!(gpu_agents.len(), gpus, "{machine}");
        assert!(agents.iter().any(|a| a["kind"] == "cpu"), "{machine}");
        for gpu in gpu_agents {
            assert_eq!(gpu["target"], target, "{machine}");
            assert_eq!(gpu["marketing_name"], marketing, "{machine}");
            let wave = if target == "gfx1100" { 32 } else { 64 };
            assert_eq!(gpu["wavefront_size"], wave, "{machine}");
            assert!(gpu["compute_units"].as_u64().unwrap() > 0);
            assert_eq!(gpu["pools"].as_array().unwrap().len(), 4);
            assert!(gpu["pools"][0]["size"].as_u64().unwrap() > 0, "VRAM pool");
            assert_eq!(gpu["queues"]["min_packets"], 64);
            assert!(!gpu["memory_banks"].as_array().unwrap().is_empty());
            if gpus > 1 {
                assert!(
                    gpu["io_links"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|l| l["type"] == "xgmi"),
                    "{gpu}"
                );
            }
        }
    }
}
