//! The import graph of one crate and what is wrong with it.
//!
//! Every `.rs` file under a crate's `src/` is a node (named by its module path:
//! `driver/process/mod.rs` is `driver::process`). Every path in a `use` tree and every
//! `crate::`/`super::`/`self::` path in code is resolved to the longest module path that is a
//! file; a name a module imports or re-exports (`pub use buffer::Buffer` in `lib.rs`) is
//! followed to where it comes from, so `crate::Buffer` is an edge to `buffer`, not to the crate
//! root. An edge between a module and one of its own ancestors or descendants is not a circle
//! (a `mod.rs` and its children are one unit); any other edge is lifted to the two sibling
//! modules below the lowest common ancestor (an import of `driver::files` from `gpu::cp::ring`
//! is an edge `gpu -> driver` among the top-level modules, and `driver::process::events ->
//! driver::files` an edge `process -> files` inside `driver`). At every level of the tree the
//! siblings' graph must have no cycle, and where a crate declares the order of its top-level
//! modules (lowest first), no edge may point up that order.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::source::{ModPath, paths_in};

/// One import: the importing file's module, the file module it names, and the path as written.
#[derive(Clone, Debug)]
pub struct Import {
    pub from: ModPath,
    pub to: ModPath,
    pub written: String,
}

/// A name a module binds with `use`: the module it is in and the path it names.
#[derive(Clone, Debug)]
struct Binding {
    scope: ModPath,
    segments: Vec<String>,
    in_use: bool,
}

/// Every file's module and the names each module binds.
struct Crate {
    modules: BTreeSet<ModPath>,
    bindings: BTreeMap<(ModPath, String), Binding>,
}

impl Crate {
    /// The file module `segments` (written in `scope`) names, following `use` bindings through
    /// modules (re-exports) at most `depth` times; `None` for another crate's path.
    fn resolve(
        &self,
        scope: &ModPath,
        segments: &[String],
        in_use: bool,
        depth: u32,
    ) -> Option<ModPath> {
        let first = segments.first()?;
        let (mut base, rest): (ModPath, &[String]) = match first.as_str() {
            "crate" => (Vec::new(), &segments[1..]),
            "self" => (scope.clone(), &segments[1..]),
            "super" => {
                let mut base = scope.clone();
                let mut k = 0;
                while segments.get(k).map(String::as_str) == Some("super") {
                    base.pop();
                    k += 1;
                }
                (base, &segments[k..])
            }
            _ if in_use => {
                let mut child = scope.clone();
                child.push(first.clone());
                if self.modules.contains(&child) {
                    (scope.clone(), segments)
                } else if let Some(bound) = self.bindings.get(&(scope.clone(), first.clone())) {
                    // `use x::Y; use Y::Z;` style: a name bound in this scope.
                    return self.follow(bound, &segments[1..], depth);
                } else {
                    return None; // another crate
                }
            }
            _ => return None,
        };
        // The module containing the scope may be an inline module: fall back to a file.
        while !self.modules.contains(&base) && !base.is_empty() {
            base.pop();
        }
        for (i, seg) in rest.iter().enumerate() {
            base.push(seg.clone());
            if self.modules.contains(&base) {
                continue;
            }
            base.pop();
            if let Some(bound) = self.bindings.get(&(base.clone(), seg.clone())) {
                if depth > 0 {
                    if let Some(target) = self.follow(bound, &rest[i + 1..], depth) {
                        return Some(target);
                    }
                }
            }
            break;
        }
        Some(base)
    }

    /// Where `bound` (followed by `more`) leads; `None` if it leaves the crate.
    fn follow(&self, bound: &Binding, more: &[String], depth: u32) -> Option<ModPath> {
        if depth == 0 {
            return None;
        }
        let mut segments = bound.segments.clone();
        segments.extend(more.iter().cloned());
        self.resolve(&bound.scope, &segments, bound.in_use, depth - 1)
    }
}

/// Resolve every path of every file to the file module it names.
pub fn imports(files: &[(ModPath, String)]) -> Vec<Import> {
    let modules: BTreeSet<ModPath> = files.iter().map(|(m, _)| m.clone()).collect();
    let found: Vec<_> = files
        .iter()
        .map(|(module, text)| (module, paths_in(module, text)))
        .collect();
    let mut bindings = BTreeMap::new();
    for (_, paths) in &found {
        for p in paths {
            if let Some(name) = &p.binds {
                bindings.insert(
                    (p.scope.clone(), name.clone()),
                    Binding {
                        scope: p.scope.clone(),
                        segments: p.segments.clone(),
                        in_use: p.in_use,
                    },
                );
            }
        }
    }
    let krate = Crate { modules, bindings };
    let mut out = Vec::new();
    for (module, paths) in found {
        for p in paths {
            let Some(to) = krate.resolve(&p.scope, &p.segments, p.in_use, 8) else {
                continue;
            };
            if &to != module {
                out.push(Import {
                    from: module.clone(),
                    to,
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
pub type Edges = BTreeMap<(ModPath, ModPath), Vec<Import>>;

/// Lift every import to the sibling graph of its level.
pub fn sibling_edges(imports: &[Import]) -> Edges {
    let mut edges: Edges = BTreeMap::new();
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
pub fn find_cycle(edges: &Edges) -> Option<Vec<ModPath>> {
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
pub fn describe_cycle(cycle: &[ModPath], edges: &Edges) -> String {
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

/// What is wrong with one crate's imports.
#[derive(Debug, PartialEq, Eq)]
pub enum Violation {
    /// Modules that import each other around a circle (the message names them).
    Circle(String),
    /// A top-level module imports one declared above it.
    Upward(String),
    /// A top-level module the declared order does not place.
    Unplaced(String),
}

/// Check a crate's files: no circle at any level; with `layers` (the top-level modules, lowest
/// first; modules on one line of the same layer may import each other one way), no arrow up
/// and no top-level module left out.
pub fn check(files: &[(ModPath, String)], layers: Option<&[&[&str]]>) -> Vec<Violation> {
    let edges = sibling_edges(&imports(files));
    let mut violations = Vec::new();
    if let Some(cycle) = find_cycle(&edges) {
        violations.push(Violation::Circle(describe_cycle(&cycle, &edges)));
    }
    let Some(layers) = layers else {
        return violations;
    };
    let rank = |name: &str| layers.iter().position(|layer| layer.contains(&name));
    let top: BTreeSet<&str> = files
        .iter()
        .filter_map(|(m, _)| m.first().map(String::as_str))
        .collect();
    for name in top {
        if rank(name).is_none() {
            violations.push(Violation::Unplaced(name.to_owned()));
        }
    }
    for ((a, b), why) in &edges {
        if a.len() != 1 {
            continue;
        }
        if let (Some(ra), Some(rb)) = (rank(&a[0]), rank(&b[0])) {
            if rb > ra {
                let example = &why[0];
                violations.push(Violation::Upward(format!(
                    "{} -> {} [{} names {}]",
                    a[0],
                    b[0],
                    example.from.join("::"),
                    example.written
                )));
            }
        }
    }
    violations
}
