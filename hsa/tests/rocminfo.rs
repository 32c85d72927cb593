//! Debian's unmodified `rocminfo` over this library prints what it prints over ROCr on the
//! same simulated machine, line for line, except the lines listed in [`KNOWN_DIFFERENCES`]
//! with their reasons; and ROCr's library (and libhsakmt) is never loaded. Each rocminfo run
//! has a time limit (`support::run_on_simulator` waits through `process::run_with_deadline`).

mod support;

use std::process::Command;

use support::{describe, rocr_loaded, run_on_simulator};

/// Lines (trimmed) that only one of the two outputs has, and why.
const KNOWN_DIFFERENCES: &[(Side, &str, &str)] = &[(
    Side::Rocr,
    "L1:                      32768(0x8000) KB",
    "ROCr's libhsakmt reads the CPU's caches from the host's /sys/devices/system/cpu (and \
     files the last level as L1); aqueduct reports the caches the KFD topology lists, and the \
     simulated CPU node lists none",
)];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Rocr,
    Ours,
}

/// The lines only ROCr's or only our output has, by a longest common subsequence.
fn difference(rocr: &[&str], ours: &[&str]) -> Vec<(Side, String)> {
    let (rows, cols) = (rocr.len(), ours.len());
    let mut lcs = vec![vec![0usize; cols + 1]; rows + 1];
    for row in (0..rows).rev() {
        for col in (0..cols).rev() {
            lcs[row][col] = if rocr[row] == ours[col] {
                lcs[row + 1][col + 1] + 1
            } else {
                lcs[row + 1][col].max(lcs[row][col + 1])
            };
        }
    }
    let (mut row, mut col, mut out) = (0, 0, Vec::new());
    while row < rows || col < cols {
        if row < rows && col < cols && rocr[row] == ours[col] {
            row += 1;
            col += 1;
        } else if col == cols || (row < rows && lcs[row + 1][col] >= lcs[row][col + 1]) {
            out.push((Side::Rocr, rocr[row].trim().to_owned()));
            row += 1;
        } else {
            out.push((Side::Ours, ours[col].trim().to_owned()));
            col += 1;
        }
    }
    out
}

#[test]
fn rocminfo_prints_the_same_agents_pools_and_isas_as_over_rocr() {
    if !support::require("rocminfo", "/usr/bin/rocminfo")
        || !support::require("rocminfo", "/usr/include/hsa/hsa.h")
    {
        return;
    }
    let rocr = run_on_simulator(Command::new("/usr/bin/rocminfo"), false);
    assert!(
        rocr.status.success(),
        "rocminfo over ROCr: {}",
        describe(&rocr)
    );
    let mut command = Command::new("/usr/bin/rocminfo");
    command.env("LD_DEBUG", "files");
    let ours = run_on_simulator(command, true);
    assert!(
        ours.status.success(),
        "rocminfo over aqueduct: {}",
        describe(&ours)
    );
    let trace = String::from_utf8_lossy(&ours.stderr);
    assert!(
        trace.contains("hsa-runtime-test/libhsa-runtime64.so.1"),
        "our library was not the one loaded: {trace}"
    );
    assert_eq!(rocr_loaded(&trace), None, "ROCr's own library was loaded");
    let (rocr, ours) = (
        String::from_utf8_lossy(&rocr.stdout).into_owned(),
        String::from_utf8_lossy(&ours.stdout).into_owned(),
    );
    assert!(
        ours.contains("AMD Instinct MI210") && ours.contains("gfx90a"),
        "{ours}"
    );
    let a: Vec<&str> = rocr.lines().collect();
    let b: Vec<&str> = ours.lines().collect();
    let unexplained: Vec<(Side, String)> = difference(&a, &b)
        .into_iter()
        .filter(|(side, line)| {
            !KNOWN_DIFFERENCES
                .iter()
                .any(|(s, known, _)| s == side && line == known.trim())
        })
        .collect();
    assert!(
        unexplained.is_empty(),
        "rocminfo lines that differ without a listed reason: {unexplained:#?}\n--- ROCr\n{rocr}\n--- aqueduct\n{ours}"
    );
}
