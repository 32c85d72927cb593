//! The workspace's architecture, checked from the source: in every crate no two modules import
//! each other, directly, around a circle or through the crate root's re-exports; where a crate
//! declares the order of its top-level modules, no import points up it; and the simulator's two
//! halves stay apart (`sim/src/gpu` never imports `sim/src/driver`, the driver model reaches
//! the GPU only through the contracts, the top of `sim/src` holds at most 8 entries).
//!
//! How the graph is built and judged: `architecture/graph.rs`. The checker is itself tested:
//! on synthetic crates, and with a circle planted into each real crate.

#[path = "architecture/graph.rs"]
mod graph;
#[path = "architecture/source.rs"]
mod source;

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use graph::{Violation, check, find_cycle, imports, sibling_edges};
use source::{ModPath, crate_sources, paths_in};

/// Every crate of the workspace: its folder, and the order of its top-level modules (lowest
/// first) where it declares one.
const CRATES: &[(&str, Option<&[&[&str]]>)] = &[
    (".", Some(AQUEDUCT_LAYERS)),
    ("aql", None),
    ("amdgpu-target", None),
    ("hsa", Some(HSA_LAYERS)),
    ("kfd", None),
    ("drm-amdgpu", None),
    ("loader", None),
    ("sim", None),
    ("sim/preload", None),
    ("tools", None),
    ("test-support", None),
    ("unload-safe-thread", None),
];

/// The safe API's layers, lowest first: pure pieces, the error type, the device, its memory and
/// signals, queues and kernels, launching, executables, the driver's own kernels (copies and
/// fills), GPU programs.
const AQUEDUCT_LAYERS: &[&[&str]] = &[
    &[
        "agent",
        "backend",
        "code_object_source",
        "kernarg",
        "sdma_packet",
    ],
    &["error"],
    &["device"],
    &["buffer", "signal", "host_memory"],
    &["queue", "kernel", "copy"],
    &["launch"],
    &["executable"],
    &["blit"],
    &["program"],
];

/// libhsa-runtime64's layers, lowest first: pure pieces, the error type, what the info
/// functions answer from, the objects a program creates (tables and the runtime's threads, none
/// knowing the runtime), the runtime holding them, the C API's entry points above it.
const HSA_LAYERS: &[&[&str]] = &[
    &["status", "table", "loaded_code_object"],
    &["error"],
    &["value", "model"],
    &["objects"],
    &["runtime"],
    &["api", "exports"],
];

/// What the contracts are: the only modules of `sim/src/gpu/` the driver model may name.
const CONTRACTS: &[&str] = &["queue", "dispatch", "vm", "target", "clock"];

fn module(path: &str) -> ModPath {
    path.split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

fn assert_sound(crate_dir: &str) {
    let (_, layers) = CRATES
        .iter()
        .find(|(dir, _)| *dir == crate_dir)
        .expect("a crate of the workspace");
    let files = crate_sources(crate_dir);
    let violations = check(&files, *layers);
    assert!(
        violations.is_empty(),
        "{crate_dir}: {violations:#?}\n{}",
        violations
            .iter()
            .map(|v| match v {
                Violation::Circle(m) | Violation::Upward(m) | Violation::Unplaced(m) => m.as_str(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// Every crate

#[test]
fn every_crate_of_the_workspace_is_checked() {
    let manifest = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .expect("the workspace manifest");
    let members = manifest
        .lines()
        .find(|l| l.starts_with("members"))
        .expect("a members line");
    let checked: BTreeSet<&str> = CRATES.iter().map(|(dir, _)| *dir).collect();
    for member in members.split('"').skip(1).step_by(2) {
        // Test fixtures are not part of the driver.
        if member.starts_with("tests/") {
            continue;
        }
        assert!(
            checked.contains(member),
            "workspace member {member} is not in CRATES"
        );
    }
}

#[test]
fn aqueduct_is_a_one_way_stack() {
    assert_sound(".");
}

#[test]
fn aql_is_a_one_way_stack() {
    assert_sound("aql");
}

#[test]
fn hsa_is_a_one_way_stack() {
    assert_sound("hsa");
}

#[test]
fn kfd_is_a_one_way_stack() {
    assert_sound("kfd");
}

#[test]
fn drm_amdgpu_is_a_one_way_stack() {
    assert_sound("drm-amdgpu");
}

#[test]
fn loader_is_a_one_way_stack() {
    assert_sound("loader");
}

#[test]
fn sim_is_a_one_way_stack() {
    assert_sound("sim");
}

#[test]
fn preload_is_a_one_way_stack() {
    assert_sound("sim/preload");
}

#[test]
fn tools_is_a_one_way_stack() {
    assert_sound("tools");
}

#[test]
fn test_support_is_a_one_way_stack() {
    assert_sound("test-support");
}

#[test]
fn unload_safe_thread_is_a_one_way_stack() {
    assert_sound("unload-safe-thread");
}

// ---------------------------------------------------------------------------------------------
// The simulator's two halves

#[test]
fn gpu_never_imports_the_driver_model() {
    let files = crate_sources("sim");
    let gpu_files = files
        .iter()
        .filter(|(m, _)| m.first().is_some_and(|f| f == "gpu"))
        .count();
    assert!(
        gpu_files > 50,
        "only {gpu_files} files under sim/src/gpu: the reader is broken"
    );
    let bad: Vec<String> = imports(&files)
        .iter()
        .filter(|i| i.from.first().is_some_and(|f| f == "gpu"))
        // Neither directly nor through the crate root (`crate::FaultInjection`, resolved to
        // the driver module it comes from; an item of `lib.rs` itself counts too).
        .filter(|i| i.to.is_empty() || i.to.first().is_some_and(|t| t == "driver"))
        .map(|i| format!("{} names {}", i.from.join("::"), i.written))
        .collect();
    assert!(
        bad.is_empty(),
        "gpu/ imports driver/ (or the crate root): {bad:#?}"
    );
}

#[test]
fn the_driver_model_reaches_the_gpu_only_through_the_contracts() {
    let files = crate_sources("sim");
    let bad: Vec<String> = imports(&files)
        .iter()
        .filter(|i| i.from.first().is_some_and(|f| f == "driver"))
        .filter(|i| i.to.first().is_some_and(|t| t == "gpu"))
        .filter(|i| !i.to.get(1).is_some_and(|c| CONTRACTS.contains(&c.as_str())))
        .map(|i| format!("{} names {}", i.from.join("::"), i.written))
        .collect();
    assert!(
        bad.is_empty(),
        "driver/ reaches past the contracts {CONTRACTS:?}: {bad:#?}"
    );
}

#[test]
fn the_top_of_sim_src_shows_two_halves() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("sim/src");
    let entries: BTreeSet<String> = fs::read_dir(&src)
        .expect("sim/src")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        entries.len() <= 8,
        "sim/src has {} entries: {entries:?}",
        entries.len()
    );
    assert!(
        src.join("driver").is_dir() && src.join("gpu").is_dir(),
        "{entries:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The checker itself must be able to fail.

#[test]
fn use_trees_comments_and_strings_are_read_as_rust_reads_them() {
    let found = paths_in(
        &module("a"),
        "use crate::{b::{self, X}, c::*};\n\
         // use crate::commented;\n\
         /* crate::block::x */\n\
         let s = \"crate::in_a_string\";\n\
         fn f<'a>(x: &'a u8) -> char { crate::d::g(); 'x' }\n\
         use crate::e::Y as Z;\n\
         mod tests { use super::e::Y; }",
    );
    let seen: Vec<(String, String, Option<String>)> = found
        .iter()
        .map(|p| (p.scope.join("::"), p.segments.join("::"), p.binds.clone()))
        .collect();
    let s = |x: &str| x.to_owned();
    assert_eq!(
        seen,
        [
            (s("a"), s("crate::b"), Some(s("b"))),
            (s("a"), s("crate::b::X"), Some(s("X"))),
            (s("a"), s("crate::c"), None),
            (s("a"), s("crate::d::g"), None),
            (s("a"), s("crate::e::Y"), Some(s("Z"))),
            (s("a::tests"), s("super::e::Y"), Some(s("Y"))),
        ]
    );
}

#[test]
fn the_checker_finds_a_circle_and_a_gpu_import_of_the_driver() {
    let files = vec![
        (module(""), "mod a; mod b; mod gpu; mod driver;".to_owned()),
        (module("a"), "use crate::b::X;".to_owned()),
        (
            module("b"),
            "pub struct X; fn f() { crate::a::g(); }".to_owned(),
        ),
        (module("gpu"), "mod cp;".to_owned()),
        (
            module("gpu::cp"),
            "use super::super::driver::files::F;".to_owned(),
        ),
        (module("driver"), "pub mod files;".to_owned()),
        (module("driver::files"), "use crate::gpu::cp;".to_owned()),
    ];
    let imports = imports(&files);
    let edges = sibling_edges(&imports);
    let cycle = find_cycle(&edges).expect("a <-> b is a circle");
    let mut around: Vec<String> = cycle.iter().map(|m| m.join("::")).collect();
    around.sort();
    // a <-> b or gpu <-> driver: both are circles; the search reports the first it meets.
    assert!(
        around == ["a", "b"] || around == ["driver", "gpu"],
        "{around:?}"
    );
    assert!(
        imports
            .iter()
            .any(|i| i.from == module("gpu::cp") && i.to == module("driver::files")),
        "{imports:?}"
    );
    // Parent and child are one unit: a mod.rs using its children is no circle.
    let tree = vec![
        (module(""), "mod p;".to_owned()),
        (module("p"), "mod c; use c::Y; pub struct X;".to_owned()),
        (module("p::c"), "use super::X; pub struct Y;".to_owned()),
    ];
    assert!(find_cycle(&sibling_edges(&self::imports(&tree))).is_none());
}

#[test]
fn the_checker_follows_re_exports_through_the_crate_root() {
    let files = vec![
        (
            module(""),
            "mod a; mod b; mod c; pub use b::Thing; pub use c::{Other as Renamed};".to_owned(),
        ),
        (
            module("a"),
            "use crate::Thing; fn f() { crate::Renamed::new(); }".to_owned(),
        ),
        (module("b"), "pub struct Thing;".to_owned()),
        (module("c"), "pub struct Other; use crate::a::f;".to_owned()),
    ];
    let found = imports(&files);
    let targets: BTreeSet<(String, String)> = found
        .iter()
        .filter(|i| i.from == module("a"))
        .map(|i| (i.written.clone(), i.to.join("::")))
        .collect();
    assert!(
        targets.contains(&("crate::Thing".to_owned(), "b".to_owned())),
        "{targets:?}"
    );
    assert!(
        targets.contains(&("crate::Renamed::new".to_owned(), "c".to_owned())),
        "{targets:?}"
    );
    // a -> c (through the root) and c -> a: a circle only the re-export shows.
    assert!(matches!(check(&files, None)[..], [Violation::Circle(_)]));
}

#[test]
fn the_checker_finds_an_arrow_up_the_declared_layers_and_an_unplaced_module() {
    let files = vec![
        (module(""), "mod low; mod high; mod stray;".to_owned()),
        (module("low"), "use crate::high::X;".to_owned()),
        (module("high"), "pub struct X;".to_owned()),
        (module("stray"), String::new()),
    ];
    let layers: &[&[&str]] = &[&["low"], &["high"]];
    let violations = check(&files, Some(layers));
    assert!(
        violations.contains(&Violation::Upward(
            "low -> high [low names crate::high::X]".to_owned()
        )),
        "{violations:?}"
    );
    assert!(
        violations.contains(&Violation::Unplaced("stray".to_owned())),
        "{violations:?}"
    );
    let ordered: &[&[&str]] = &[&["high"], &["low"], &["stray"]];
    assert!(check(&files, Some(ordered)).is_empty());
}

/// Plant a circle into a real crate through its root: the root re-exports an item of one
/// top-level module, another imports it from the root, and the first imports the second.
/// A crate of fewer than two modules gets two empty ones first.
fn plant_circle(files: &mut Vec<(ModPath, String)>) {
    let mut top: Vec<ModPath> = files
        .iter()
        .filter(|(m, _)| m.len() == 1)
        .map(|(m, _)| m.clone())
        .collect();
    for name in ["planted_a", "planted_b"] {
        if top.len() < 2 {
            files.push((module(name), String::new()));
            top.push(module(name));
        }
    }
    let (first, second) = (top[0][0].clone(), top[1][0].clone());
    for (m, text) in files.iter_mut() {
        if m.is_empty() {
            let _ = write!(text, "\npub use {first}::PlantedThing;\n");
        } else if m[..] == [second.clone()] {
            text.push_str("\nuse crate::PlantedThing;\n");
        } else if m[..] == [first.clone()] {
            let _ = write!(text, "\nfn planted() {{ crate::{second}::planted(); }}\n");
        }
    }
}

#[test]
fn a_circle_planted_in_any_crate_fails_its_check() {
    let mut found = 0;
    for (dir, layers) in CRATES {
        let mut files = crate_sources(dir);
        found += imports(&files).len();
        plant_circle(&mut files);
        let violations = check(&files, *layers);
        assert!(
            violations.iter().any(|v| matches!(v, Violation::Circle(_))),
            "{dir}: a planted circle went unseen: {violations:?}"
        );
    }
    assert!(found > 1000, "only {found} imports: the reader is broken");
}
