//! The simulator's architecture, checked from the source: `sim/src/gpu` never imports
//! `sim/src/driver`, the driver model reaches the GPU only through the contracts, the top of
//! `sim/src` holds at most 8 entries, and no two modules of `sim`, `kfd` or `loader` import each
//! other, directly or around a circle.
//!
//! How the import graph is built: every `.rs` file under a crate's `src/` is a node (named by its
//! module path: `driver/process/mod.rs` is `driver::process`). Comments and string literals are
//! dropped; then every path in a `use` tree and every `crate::`/`super::`/`self::` path in code
//! is resolved to the longest module path that is a file. An edge between a module and one of
//! its own ancestors or descendants is not a circle (a `mod.rs` and its children are one unit);
//! any other edge is lifted to the two sibling modules below the lowest common ancestor (an
//! import of `driver::files` from `gpu::cp::ring` is an edge `gpu -> driver` among the top-level
//! modules, and `driver::process::events -> driver::files` an edge `process -> files` inside
//! `driver`). At every level of the tree, the siblings' graph must have no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// A module path (`["driver", "process"]`).
type ModPath = Vec<String>;

/// What the contracts are: the only modules of `gpu/` the driver model may name.
const CONTRACTS: &[&str] = &["queue", "dispatch", "vm", "target", "clock"];

// ---------------------------------------------------------------------------------------------
// Reading the source

/// Drop comments, string and char literals (keeping line structure is not needed).
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !is_ident_byte(b[i - 1]))
        {
            // A raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"'
                    && b[j + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&h| h == b'#')
                        .count()
                        == hashes
                {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == b'\'' {
            // A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                // Skip the escaped character, which may itself be a quote.
                let mut j = i + 3;
                while j < b.len() && b[j] != b'\'' {
                    j += 1;
                }
                i = j + 1;
                out.push_str("' '");
            } else if b.get(i + 2) == Some(&b'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push('\'');
                i += 1;
            }
        } else {
            // Multi-byte UTF-8 passes through unchanged: push the whole char.
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Tokens: identifiers, `::`, and single punctuation characters.
fn tokens(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if is_ident_byte(c) {
            let start = i;
            while i < b.len() && is_ident_byte(b[i]) {
                i += 1;
            }
            out.push(text[start..i].to_owned());
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            out.push("::".to_owned());
            i += 2;
        } else if c.is_ascii_whitespace() || !c.is_ascii() {
            i += 1;
        } else {
            out.push((c as char).to_string());
            i += 1;
        }
    }
    out
}

/// Parse a `use` tree starting at `toks[*at]`; append every full path to `out`.
fn use_tree(toks: &[String], at: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    while *at < toks.len() {
        let t = toks[*at].as_str();
        match t {
            "{" => {
                *at += 1;
                while *at < toks.len() && toks[*at] != "}" {
                    let before = *at;
                    use_tree(toks, at, &path, out);
                    if toks.get(*at).map(String::as_str) == Some(",") {
                        *at += 1;
                    } else if *at == before {
                        break; // not a use tree after all
                    }
                }
                *at += 1;
                return;
            }
            "::" => *at += 1,
            "*" => {
                *at += 1;
                out.push(path);
                return;
            }
            "as" => {
                *at += 2;
                out.push(path);
                return;
            }
            "," | "}" | ";" => {
                out.push(path);
                return;
            }
            "self" if !path.is_empty() => {
                // `a::{self, X}`: the path `a` itself.
                *at += 1;
            }
            _ if t.bytes().all(is_ident_byte) => {
                path.push(t.to_owned());
                *at += 1;
            }
            _ => {
                out.push(path);
                return;
            }
        }
    }
    out.push(path);
}

/// A path as found in one module: where (the file's module plus inline `mod x { }` blocks),
/// the segments, and whether it came from a `use` tree (bare first segments count there).
struct FoundPath {
    scope: ModPath,
    segments: Vec<String>,
    in_use: bool,
}

/// Every path one file names.
fn paths_in(module: &ModPath, text: &str) -> Vec<FoundPath> {
    let toks = tokens(&strip(text));
    let mut found = Vec::new();
    // Inline modules: (name, brace depth at which they close).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let scope_of = |inline: &Vec<(String, usize)>| {
        let mut s = module.clone();
        s.extend(inline.iter().map(|(n, _)| n.clone()));
        s
    };
    while i < toks.len() {
        let t = toks[i].as_str();
        match t {
            "{" => {
                depth += 1;
                i += 1;
            }
            "}" => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            "mod" if toks.get(i + 2).map(String::as_str) == Some("{") => {
                inline.push((toks[i + 1].clone(), depth + 1));
                i += 2;
            }
            "use" => {
                i += 1;
                let mut paths = Vec::new();
                use_tree(&toks, &mut i, &[], &mut paths);
                let scope = scope_of(&inline);
                found.extend(paths.into_iter().map(|segments| FoundPath {
                    scope: scope.clone(),
                    segments,
                    in_use: true,
                }));
            }
            "crate" | "super" | "self" if toks.get(i + 1).map(String::as_str) == Some("::") => {
                let mut segments = vec![t.to_owned()];
                i += 1;
                while toks.get(i).map(String::as_str) == Some("::")
                    && toks.get(i + 1).is_some_and(|s| {
                        s.as_bytes()[0].is_ascii_alphabetic() || s.starts_with('_')
                    })
                {
                    segments.push(toks[i + 1].clone());
                    i += 2;
                }
                found.push(FoundPath {
                    scope: scope_of(&inline),
                    segments,
                    in_use: false,
                });
            }
            _ => i += 1,
        }
    }
    found
}

/// The module path of a file under `src`.
fn module_of(relative: &Path) -> ModPath {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.last_mut() {
        *last = last.trim_end_matches(".rs").to_owned();
    }
    if matches!(
        parts.last().map(String::as_str),
        Some("lib" | "mod" | "main")
    ) {
        parts.pop();
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// Every file of a crate's `src/`, as (module path, text).
fn crate_sources(crate_dir: &str) -> Vec<(ModPath, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(crate_dir)
        .join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    assert!(!files.is_empty(), "no sources under {}", src.display());
    files
        .into_iter()
        .map(|f| {
            let text = fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            (module_of(f.strip_prefix(&src).expect("under src")), text)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The graph

/// One import: the importing file's module, the file module it names, and the path as written.
#[derive(Clone, Debug)]
struct Import {
    from: ModPath,
    to: ModPath,
    written: String,
}

/// Resolve every path of every file to the file module it names.
fn imports(files: &[(ModPath, String)]) -> Vec<Import> {
    let modules: BTreeSet<ModPath> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut out = Vec::new();
    for (module, text) in files {
        for p in paths_in(module, text) {
            let Some(first) = p.segments.first() else {
                continue;
            };
            let (mut base, rest): (ModPath, &[String]) = match first.as_str() {
                "crate" => (Vec::new(), &p.segments[1..]),
                "self" => (p.scope.clone(), &p.segments[1..]),
                "super" => {
                    let mut base = p.scope.clone();
                    let mut k = 0;
                    while p.segments.get(k).map(String::as_str) == Some("super") {
                        base.pop();
                        k += 1;
                    }
                    (base, &p.segments[k..])
                }
                _ if p.in_use => {
                    let mut child = p.scope.clone();
                    child.push(first.clone());
                    if !modules.contains(&child) {
                        continue; // another crate
                    }
                    (p.scope.clone(), &p.segments[..])
                }
                _ => continue,
            };
            for seg in rest {
                base.push(seg.clone());
                if !modules.contains(&base) {
                    base.pop();
                    break;
                }
            }
            // `base` is a module (or a prefix of the scope, which may be an inline module).
            while !modules.contains(&base) && !base.is_empty() {
                base.pop();
            }
            if &base != module {
                out.push(Import {
                    from: module.clone(),
                    to: base,
                    written: p.segments.join("::"),
                });
            }
        }
    }
    out
}

fn is_prefix(a: &[String], b: &[String]) -> bool {
    a.len() <= b.len() && a == &b[..a.len()]
}

/// The sibling graph at every level: `(a, b)` edges between modules with the same parent, each
/// with the imports that make it.
fn sibling_edges(imports: &[Import]) -> BTreeMap<(ModPath, ModPath), Vec<Import>> {
    let mut edges: BTreeMap<(ModPath, ModPath), Vec<Import>> = BTreeMap::new();
    for imp in imports {
        if is_prefix(&imp.from, &imp.to) || is_prefix(&imp.to, &imp.from) {
            continue;
        }
        let common = imp
            .from
            .iter()
            .zip(&imp.to)
            .take_while(|(a, b)| a == b)
            .count();
        let a = imp.from[..=common].to_vec();
        let b = imp.to[..=common].to_vec();
        edges.entry((a, b)).or_default().push(imp.clone());
    }
    edges
}

/// Depth-first search from `v`; `state`: 0 unvisited, 1 on the stack, 2 done.
fn visit<'a>(
    v: &'a ModPath,
    next: &BTreeMap<&'a ModPath, Vec<&'a ModPath>>,
    state: &mut BTreeMap<&'a ModPath, u8>,
    stack: &mut Vec<&'a ModPath>,
) -> Option<Vec<ModPath>> {
    state.insert(v, 1);
    stack.push(v);
    for &w in next.get(v).map(Vec::as_slice).unwrap_or_default() {
        match state.get(w).copied().unwrap_or(0) {
            1 => {
                let at = stack.iter().position(|m| *m == w).unwrap_or(0);
                return Some(stack[at..].iter().map(|m| (*m).clone()).collect());
            }
            0 => {
                if let Some(cycle) = visit(w, next, state, stack) {
                    return Some(cycle);
                }
            }
            _ => {}
        }
    }
    stack.pop();
    state.insert(v, 2);
    None
}

/// A cycle of the sibling graph, if there is one, as the modules around it.
fn find_cycle(edges: &BTreeMap<(ModPath, ModPath), Vec<Import>>) -> Option<Vec<ModPath>> {
    let mut next: BTreeMap<&ModPath, Vec<&ModPath>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
    }
    let mut state: BTreeMap<&ModPath, u8> = BTreeMap::new();
    let starts: Vec<&ModPath> = next.keys().copied().collect();
    for v in starts {
        if state.get(v).copied().unwrap_or(0) == 0 {
            let mut stack = Vec::new();
            if let Some(cycle) = visit(v, &next, &mut state, &mut stack) {
                return Some(cycle);
            }
        }
    }
    None
}

/// A failure message for a cycle: the modules around it and the imports that close it.
fn describe_cycle(cycle: &[ModPath], edges: &BTreeMap<(ModPath, ModPath), Vec<Import>>) -> String {
    let mut text = String::new();
    for (i, a) in cycle.iter().enumerate() {
        let b = &cycle[(i + 1) % cycle.len()];
        let _ = write!(text, "\n  {} -> {}:", a.join("::"), b.join("::"));
        for imp in edges
            .get(&(a.clone(), b.clone()))
            .into_iter()
            .flatten()
            .take(3)
        {
            let _ = write!(text, " [{} names {}]", imp.from.join("::"), imp.written);
        }
    }
    text
}

fn assert_no_cycle(crate_dir: &str) {
    let edges = sibling_edges(&imports(&crate_sources(crate_dir)));
    assert!(
        !edges.is_empty(),
        "{crate_dir}: no imports found: the reader is broken"
    );
    if let Some(cycle) = find_cycle(&edges) {
        panic!(
            "{crate_dir}: modules import each other around a circle:{}",
            describe_cycle(&cycle, &edges)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The rules

#[test]
fn gpu_never_imports_the_driver_model() {
    let files = crate_sources(".");
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
        // The crate root re-exports driver items (`crate::FaultInjection`): not that way either.
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
    let files = crate_sources(".");
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
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

#[test]
fn no_import_circle_in_sim() {
    assert_no_cycle(".");
}

#[test]
fn no_import_circle_in_kfd() {
    assert_no_cycle("../kfd");
}

#[test]
fn no_import_circle_in_loader() {
    assert_no_cycle("../loader");
}

// ---------------------------------------------------------------------------------------------
// The checker itself must be able to fail.

fn module(path: &str) -> ModPath {
    path.split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn use_trees_comments_and_strings_are_read_as_rust_reads_them() {
    let found = paths_in(
        &module("a"),
        "use crate::{b::{self, X}, c::*};\n\
         // use crate::commented;\n\
         /* crate::block::x */\n\
         let s = \"crate::in_a_string\";\n\
         fn f<'a>(x: &'a u8) -> char { crate::d::g(); 'x' }\n\
         mod tests { use super::e::Y; }",
    );
    let seen: Vec<(String, String)> = found
        .iter()
        .map(|p| (p.scope.join("::"), p.segments.join("::")))
        .collect();
    assert_eq!(
        seen,
        [
            ("a".to_owned(), "crate::b".to_owned()),
            ("a".to_owned(), "crate::b::X".to_owned()),
            ("a".to_owned(), "crate::c".to_owned()),
            ("a".to_owned(), "crate::d::g".to_owned()),
            ("a::tests".to_owned(), "super::e::Y".to_owned()),
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
