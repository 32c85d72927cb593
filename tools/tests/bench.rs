//! `aqueduct bench` on the simulator: every path measured, stable JSON, progress on stderr.

use std::process::Command;

#[test]
fn bench_measures_every_path_and_prints_json() {
    let out = Command::new(env!("CARGO_BIN_EXE_aqueduct"))
        .args(["bench", "--iterations", "10", "--json"])
        .env("AQUEDUCT_BACKEND", "sim")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["schema"], 1);
    assert_eq!(report["simulated"], true);
    let figures = report["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 7, "{report}");
    for figure in figures {
        let median = figure["median"].as_f64().unwrap();
        assert!(median > 0.0, "{figure}");
        assert!(
            figure["p10"].as_f64().unwrap() <= median && median <= figure["p90"].as_f64().unwrap(),
            "{figure}"
        );
        assert!(figure["samples"].as_u64().unwrap() >= 3, "{figure}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("aqueduct bench: dispatch"), "{stderr}");
}
