//! `aqueduct bench` on the simulator: every path of issue 12's table measured, stable JSON
//! (ids, goals, the host and the command), markdown rows for the README, progress on stderr;
//! and the VALU count the throughput figure uses, checked against the committed disassembly.

use std::path::Path;
use std::process::{Command, Output};

fn bench(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_aqueduct"))
        .arg("bench")
        .args(args)
        .env("AQUEDUCT_BACKEND", "sim")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every path issue 12's figure table asks `aqueduct bench` for, by id.
const PATHS: [&str; 8] = [
    "dispatch_spin",
    "dispatch_event_wait",
    "packets_batched",
    "load",
    "vector_add_gpu_time",
    "valu_lane_ops",
    "open_close",
    "signal_store_load",
];

#[test]
fn bench_measures_every_path_and_prints_json() {
    let out = bench(&["--iterations", "10", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["schema"], 1);
    assert_eq!(report["simulated"], true);
    assert_eq!(report["command"], "aqueduct bench --iterations 10");
    assert!(report["host"]["cores"].as_u64().unwrap() >= 1, "{report}");
    assert!(!report["host"]["cpu"].as_str().unwrap().is_empty());
    let figures = report["figures"].as_array().unwrap();
    let ids: Vec<&str> = figures.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids, PATHS, "{report}");
    for figure in figures {
        let median = figure["median"].as_f64().unwrap();
        assert!(median > 0.0, "{figure}");
        assert!(
            figure["p10"].as_f64().unwrap() <= median && median <= figure["p90"].as_f64().unwrap(),
            "{figure}"
        );
        assert!(figure["samples"].as_u64().unwrap() >= 3, "{figure}");
        assert!(!figure["goal"].as_str().unwrap().is_empty(), "{figure}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("aqueduct bench: dispatch"), "{stderr}");
    assert!(
        stderr.contains("aqueduct bench: shader throughput"),
        "{stderr}"
    );
}

#[test]
fn markdown_has_the_machine_and_one_row_per_path() {
    let out = bench(&["--iterations", "10", "--markdown"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("Machine: ") && first.contains(" cores, Linux "),
        "{text}"
    );
    assert!(first.contains("simulated GPU"), "{text}");
    assert!(first.contains("`aqueduct bench --iterations 10`"), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| what"))
        .collect();
    assert_eq!(rows.len(), PATHS.len(), "{text}");
    for row in rows {
        assert!(
            row.ends_with("| `aqueduct bench --iterations 10` |"),
            "{row}"
        );
    }
    let both = Command::new(env!("CARGO_BIN_EXE_aqueduct"))
        .args(["bench", "--json", "--markdown"])
        .output()
        .unwrap();
    assert!(!both.status.success(), "--json and --markdown conflict");
}

/// `aqueduct bench` counts `VALU_PER_ITERATION` (9) lane operations per loop iteration of
/// `valu_loop`: the committed llvm-objdump listings of the `.co5` builds it embeds must show
/// exactly that many VALU instructions between the loop's head and its backward branch.
#[test]
fn valu_loop_body_has_the_counted_valu_instructions() {
    for target in ["gfx90a", "gfx942"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../tests/kernels/bin/{target}/valu_loop.co5.dis"));
        let listing = std::fs::read_to_string(&path).unwrap();
        // Lines look like "\tv_fma_f32 v1, v1, s2, 0.5   // 000000001854: D1CB0001 ...", and a
        // branch names its target as "<valu_loop+0x54>".
        let address = |line: &str| {
            let hex = line.split("// ").nth(1)?.split(':').next()?;
            u64::from_str_radix(hex.trim(), 16).ok()
        };
        let lines: Vec<&str> = listing.lines().collect();
        let start_of = |name: &str| {
            lines
                .iter()
                .position(|l| l.ends_with(&format!("<{name}>:")))
                .and_then(|i| address(lines[i + 1]))
        };
        let entry = start_of("valu_loop").unwrap();
        let (branch, head) = lines
            .iter()
            .find_map(|l| {
                let at = address(l)?;
                let offset = l.split("<valu_loop+0x").nth(1)?.trim_end_matches('>');
                let head = entry + u64::from_str_radix(offset, 16).ok()?;
                (l.trim_start().starts_with("s_cbranch") && head < at).then_some((at, head))
            })
            .expect("a backward branch");
        let valu = lines
            .iter()
            .filter(|l| l.trim_start().starts_with("v_"))
            .filter_map(|l| address(l))
            .filter(|&at| (head..branch).contains(&at))
            .count();
        assert_eq!(valu, 9, "{target}: VALU instructions in the loop body");
    }
}
