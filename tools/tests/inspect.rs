//! `aqueduct inspect` on synthetic files: the JSON it prints, and failure on an invalid object.

use std::process::Command;

use amdgpu_loader::synth::{S_ENDPGM, Synth, SynthKernel, SynthVariable, offload_bundle};
use test_support::process::{DEFAULT_DEADLINE, run_with_deadline};

fn inspect(bytes: &[u8], name: &str, json: bool) -> (bool, String) {
    // One directory per call (tests run in parallel), removed afterwards.
    let dir = std::env::temp_dir().join(format!("aqueduct-inspect-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_aqueduct"));
    cmd.arg("inspect").arg(&path);
    if json {
        cmd.arg("--json");
    }
    let out = run_with_deadline(
        &mut cmd,
        DEFAULT_DEADLINE,
        &format!("aqueduct inspect {name}"),
    );
    std::fs::remove_dir_all(&dir).unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn object() -> Vec<u8> {
    let mut kernel = SynthKernel::new("scale", S_ENDPGM.to_vec());
    kernel.hidden = vec!["hidden_block_count_x", "hidden_group_size_x"];
    Synth {
        kernels: vec![kernel],
        variables: vec![SynthVariable {
            name: "factor".into(),
            data: Some(vec![1, 2, 3, 4]),
            size: 4,
            exported: true,
        }],
        ..Synth::default()
    }
    .build()
}

#[test]
fn json_describes_every_code_object_of_a_bundle() {
    let co = object();
    let bundle = offload_bundle(&[
        ("host-x86_64-unknown-linux-gnu-", &[]),
        ("hipv4-amdgcn-amd-amdhsa--gfx90a", &co),
    ]);
    let (ok, out) = inspect(&bundle, "bundle.hipfb", true);
    assert!(ok, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["schema"], 1);
    assert_eq!(doc["container"], "offload_bundle");
    let entries = doc["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert!(entries[0]["code_object"].is_null());
    let co = &entries[1]["code_object"];
    assert_eq!(co["target"], "gfx90a");
    assert_eq!(co["code_object_version"], 5);
    let kernel = &co["kernels"][0];
    assert_eq!(kernel["name"], "scale");
    assert_eq!(kernel["descriptor_symbol"], "scale.kd");
    assert_eq!(kernel["kind"], "normal");
    assert_eq!(kernel["kernarg_size"], 8 + 256);
    assert_eq!(kernel["implicit_args"]["offset"], 8);
    assert_eq!(kernel["args"][1]["value_kind"], "hidden_block_count_x");
    assert_eq!(kernel["args"][1]["hidden"], true);
    assert_eq!(co["variables"][0]["name"], "factor");
    assert_eq!(co["variables"][0]["exported"], true);
}

#[test]
fn text_output_and_invalid_objects() {
    let (ok, out) = inspect(&object(), "k.hsaco", false);
    assert!(ok, "{out}");
    assert!(
        out.contains("target gfx90a") && out.contains("scale (scale.kd at"),
        "{out}"
    );
    let mut broken = object();
    broken[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes()); // e_shoff
    let (ok, out) = inspect(&broken, "broken.hsaco", true);
    assert!(!ok);
    let json_end = out.rfind('}').unwrap() + 1;
    let doc: serde_json::Value = serde_json::from_str(&out[..json_end]).unwrap();
    assert!(
        doc["entries"][0]["error"]
            .as_str()
            .unwrap()
            .contains("section header")
    );
    assert!(out.contains("failed validation"));
    let (ok, out) = inspect(b"hello", "text.txt", false);
    assert!(!ok && out.contains("neither an ELF file"), "{out}");
}

#[test]
fn json_of_a_real_host_binary_lists_its_hip_fatbin() {
    // clang-built fixture: an x86-64 shared object whose .hip_fatbin holds an offload bundle of
    // vector_add for gfx90a and gfx942 (tests/kernels/README.md, "Loader fixtures").
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/kernels/bin/fixtures/hip_fatbin_host.so"
    );
    let (ok, out) = inspect(&std::fs::read(path).unwrap(), "host.so", true);
    assert!(ok, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["container"], "host_elf");
    let code_objects: Vec<_> = doc["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !e["code_object"].is_null())
        .map(|e| &e["code_object"])
        .collect();
    let processors: Vec<_> = code_objects.iter().map(|co| &co["processor"]).collect();
    assert_eq!(processors, ["gfx90a", "gfx942"]);
    for co in code_objects {
        let kernel = &co["kernels"][0];
        assert_eq!(kernel["name"], "vector_add");
        let explicit = kernel["args"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["hidden"] == false)
            .count();
        assert_eq!(explicit, 4, "a, b, c, n");
        assert_eq!(kernel["implicit_args"]["layout"], "v5");
    }
}

/// The object above is kept in `tests/loader-oracle/synth/` with llvm-readelf-19's reading of
/// it in `golden/synth/` (written and drift-checked by `tests/loader-oracle/generate.sh`): what
/// `inspect` reports must be what LLVM reads in our ELF writer's output.
#[test]
fn the_inspected_object_is_kept_and_llvm_readelf_reads_what_inspect_reports() {
    let oracle = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/loader-oracle");
    let path = format!("{oracle}/synth/inspect.scale.co");
    let bytes = object();
    if std::env::var_os("AQUEDUCT_BLESS_SYNTH").is_some_and(|v| !v.is_empty()) {
        std::fs::write(&path, &bytes).unwrap();
    }
    let kept = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert!(
        kept == bytes,
        "the ELF writer's output changed; rerun with AQUEDUCT_BLESS_SYNTH=1, then \
         tests/loader-oracle/generate.sh, and review the readelf diff"
    );
    let golden = format!("{oracle}/golden/synth/inspect.scale.co.readelf");
    let readelf = std::fs::read_to_string(&golden).unwrap_or_else(|e| panic!("{golden}: {e}"));
    let (ok, out) = inspect(&bytes, "kept.hsaco", true);
    assert!(ok, "{out}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let co = &doc["entries"][0]["code_object"];
    // The dynamic symbols llvm-readelf lists, by name.
    let dynsym: Vec<&str> = readelf
        .split("Symbol table '.dynsym'")
        .nth(1)
        .expect("a .dynsym listing")
        .lines()
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().nth(7))
        .collect();
    for name in [
        co["kernels"][0]["name"].as_str().unwrap(),
        co["kernels"][0]["descriptor_symbol"].as_str().unwrap(),
        co["variables"][0]["name"].as_str().unwrap(),
    ] {
        assert!(
            dynsym.contains(&name),
            "{name} not in llvm-readelf's {dynsym:?}"
        );
    }
    // e_flags as LLVM decodes them: the processor inspect reports.
    let flags = readelf
        .lines()
        .find(|l| l.trim_start().starts_with("Flags:"))
        .expect("an ELF header Flags line");
    assert_eq!(co["target"], "gfx90a");
    assert!(flags.contains(", gfx90a"), "{flags}");
}
