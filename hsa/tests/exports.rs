//! Every function ROCr's own library exports is exported by this one, under the symbol version
//! `ROCR_1`, and SONAME `libhsa-runtime64.so.1` (read with binutils' `readelf`).

mod support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use test_support::process;

/// How long one readelf may take.
const LIMIT: Duration = Duration::from_secs(60);

/// ROCr's library as Debian installs it (libhsa-runtime64-1).
const ROCR: &str = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1";

/// The defined functions of `library` with their version suffix (`name@@VERSION`).
fn exported_functions(library: &Path) -> Vec<String> {
    let output = process::run_with_deadline(
        Command::new("readelf")
            .args(["-W", "--dyn-syms"])
            .arg(library),
        LIMIT,
        "readelf --dyn-syms",
    );
    assert!(output.status.success(), "readelf {}", library.display());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields.len() >= 8 && fields[3] == "FUNC" && fields[6] != "UND")
                .then(|| fields[7].to_owned())
        })
        .collect()
}

#[test]
fn every_rocr_function_is_exported_with_rocr_s_version_and_soname() {
    if !support::require("exports", ROCR) {
        return;
    }
    let ours = support::hsa_dir().join("libhsa-runtime64.so.1");
    let exported = exported_functions(&ours);
    let names: BTreeSet<&str> = exported
        .iter()
        .filter_map(|s| s.strip_suffix("@@ROCR_1"))
        .collect();
    let unversioned: Vec<&String> = exported
        .iter()
        .filter(|s| s.starts_with("hsa_") && !s.ends_with("@@ROCR_1"))
        .collect();
    assert!(
        unversioned.is_empty(),
        "exports without ROCR_1: {unversioned:?}"
    );
    let missing: Vec<String> = exported_functions(Path::new(ROCR))
        .into_iter()
        .map(|s| s.split('@').next().unwrap_or_default().to_owned())
        .filter(|name| !names.contains(name.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "ROCr exports these, we do not: {missing:?}"
    );
    let dynamic = process::run_with_deadline(
        Command::new("readelf").arg("-d").arg(&ours),
        LIMIT,
        "readelf -d",
    );
    assert!(
        String::from_utf8_lossy(&dynamic.stdout)
            .contains("Library soname: [libhsa-runtime64.so.1]"),
        "{}",
        String::from_utf8_lossy(&dynamic.stdout)
    );
    // The generated list and the library agree.
    for name in hsa_runtime64::exports::EXPORTS {
        assert!(
            names.contains(name),
            "{name} is in the export list but not exported"
        );
    }
}
