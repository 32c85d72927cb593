//! Compile a small C (or C++) program against real headers, run it, and compare what it prints
//! with the Rust side: struct sizes, alignments and field offsets, and constant values.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use test_support::process::{DEFAULT_DEADLINE, try_run_with_deadline};

/// One field of a struct check.
pub struct FieldCheck {
    pub rust: &'static str,
    /// `None` for Rust padding fields that C leaves implicit.
    pub c: Option<&'static str>,
    pub offset: usize,
    pub size: usize,
}

/// One struct: every field of the Rust struct, with its C name.
pub struct StructCheck {
    pub c_type: &'static str,
    pub rust: &'static str,
    pub size: usize,
    pub align: usize,
    pub fields: Vec<FieldCheck>,
    /// The C size may be larger than the Rust size (the kernel copies `min` of the two).
    pub extensible: bool,
}

/// One constant: a C expression and the value the Rust side uses.
pub struct ConstCheck {
    pub c_expr: String,
    pub rust: String,
    pub value: i128,
}

/// A check, with the preprocessor condition under which the header has the item.
pub enum Item {
    Struct(StructCheck),
    Const(ConstCheck),
}

pub struct Check {
    pub item: Item,
    /// `#if` condition (C preprocessor) under which the header defines the item.
    pub guard: Option<String>,
}

impl Check {
    pub fn id(&self) -> String {
        match &self.item {
            Item::Struct(s) => format!("{} ({})", s.c_type, s.rust),
            Item::Const(c) => format!("{} ({})", c.c_expr, c.rust),
        }
    }
}

pub fn field_size<T, F>(_: impl Fn(&T) -> &F) -> usize {
    size_of::<F>()
}

/// `layout!("struct c_name" => RustType { field, field = "CName", ... })`. The destructuring
/// pattern makes the build fail if a Rust field is missing from the list.
#[macro_export]
macro_rules! layout {
    ($c:literal => $ty:path { $($field:ident $(= $cname:tt)?),* $(,)? }) => {{
        #[allow(unused, clippy::all)]
        fn complete(v: $ty) { let $ty { $($field: _),* } = v; }
        $crate::harness::Check {
            guard: None,
            item: $crate::harness::Item::Struct($crate::harness::StructCheck {
                c_type: $c,
                rust: stringify!($ty),
                size: size_of::<$ty>(),
                align: align_of::<$ty>(),
                extensible: false,
                fields: vec![$($crate::harness::FieldCheck {
                    rust: stringify!($field),
                    c: $crate::layout!(@cname $field $($cname)?),
                    offset: core::mem::offset_of!($ty, $field),
                    size: $crate::harness::field_size(|s: &$ty| &s.$field),
                }),*],
            }),
        }
    }};
    (@cname $field:ident) => { Some(stringify!($field)) };
    (@cname $field:ident _) => { None };
    (@cname $field:ident $cname:literal) => { Some($cname) };
}

/// `constant!("C_EXPR", rust_value)`.
#[macro_export]
macro_rules! constant {
    ($c:expr, $value:expr) => {
        $crate::harness::Check {
            guard: None,
            item: $crate::harness::Item::Const($crate::harness::ConstCheck {
                c_expr: $c.to_string(),
                rust: stringify!($value).to_string(),
                value: ($value) as i128,
            }),
        }
    };
}

impl Check {
    /// Only check where the header defines the macro `name` (for `#define`d constants).
    pub fn ifdef(self) -> Self {
        let Item::Const(c) = &self.item else {
            return self;
        };
        let condition = format!("defined({})", c.c_expr);
        self.since(&condition)
    }

    /// Only check where the header satisfies this `#if` condition.
    pub fn since(mut self, condition: &str) -> Self {
        self.guard = Some(match self.guard.take() {
            Some(guard) => format!("({guard}) && ({condition})"),
            None => condition.to_string(),
        });
        self
    }

    /// The C struct may be longer than the Rust one.
    pub fn extensible(mut self) -> Self {
        if let Item::Struct(s) = &mut self.item {
            s.extensible = true;
        }
        self
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    C,
    Cxx,
}

/// One header configuration: what to include, with which compiler and include path.
pub struct HeaderSet {
    pub name: String,
    pub lang: Lang,
    pub include_dirs: Vec<PathBuf>,
    pub prelude: String,
}

/// Results of running every check against every header set.
#[derive(Default)]
pub struct Report {
    pub verified: BTreeMap<String, Vec<String>>,
    pub failures: Vec<String>,
    pub unavailable: Vec<String>,
}

fn program(set: &HeaderSet, checks: &[Check]) -> String {
    let mut src = String::new();
    src.push_str("#include <stdio.h>\n#include <stddef.h>\n#include <stdint.h>\n");
    src.push_str(if set.lang == Lang::C {
        "#define ALIGNOF(t) _Alignof(t)\n"
    } else {
        "#define ALIGNOF(t) alignof(t)\n"
    });
    src.push_str(&set.prelude);
    src.push_str("\nint main(void) {\n");
    for (i, check) in checks.iter().enumerate() {
        if let Some(guard) = &check.guard {
            let _ = writeln!(src, "#if {guard}");
        }
        match &check.item {
            Item::Struct(s) => {
                let t = s.c_type;
                let _ = writeln!(
                    src,
                    "  printf(\"S {i} %zu %zu\\n\", sizeof({t}), (size_t)ALIGNOF({t}));"
                );
                for (j, f) in s.fields.iter().enumerate() {
                    let Some(c) = f.c else { continue };
                    let _ = writeln!(
                        src,
                        "  printf(\"F {i} {j} %zu %zu\\n\", (size_t)offsetof({t}, {c}), sizeof((({t} *)0)->{c}));"
                    );
                }
            }
            Item::Const(c) => {
                let e = &c.c_expr;
                let _ = writeln!(
                    src,
                    "  printf(\"K {i} %lld %zu\\n\", (long long)({e}), sizeof({e}));"
                );
            }
        }
        if check.guard.is_some() {
            let _ = writeln!(src, "#else\n  printf(\"X {i}\\n\");\n#endif");
        }
    }
    src.push_str("  return 0;\n}\n");
    src
}

fn compiler(lang: Lang) -> &'static str {
    match lang {
        Lang::C => "cc",
        Lang::Cxx => "c++",
    }
}

/// Compile and run the probe program; returns its stdout or why it could not.
fn run_probe(set: &HeaderSet, checks: &[Check], work: &Path) -> Result<String, String> {
    let stem = set.name.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
    let ext = if set.lang == Lang::C { "c" } else { "cc" };
    let src_path = work.join(format!("{stem}.{ext}"));
    let exe = work.join(&stem);
    std::fs::write(&src_path, program(set, checks)).map_err(|e| format!("write probe: {e}"))?;
    let mut cmd = Command::new(compiler(set.lang));
    if set.lang == Lang::Cxx {
        cmd.arg("-std=c++17");
    } else {
        cmd.arg("-std=gnu11");
    }
    for dir in &set.include_dirs {
        cmd.arg("-I").arg(dir);
    }
    let out = try_run_with_deadline(
        cmd.arg(&src_path).arg("-o").arg(&exe),
        DEFAULT_DEADLINE,
        &format!("compiling the {} probe", set.name),
    )
    .map_err(|e| format!("{} not runnable: {e}", compiler(set.lang)))?;
    if !out.status.success() {
        return Err(format!(
            "probe failed to compile:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let run = try_run_with_deadline(
        &mut Command::new(&exe),
        DEFAULT_DEADLINE,
        &format!("the {} probe", set.name),
    )
    .map_err(|e| format!("probe did not run: {e}"))?;
    if !run.status.success() {
        return Err("probe exited with an error".into());
    }
    Ok(String::from_utf8_lossy(&run.stdout).into_owned())
}

impl Report {
    /// Run `checks` against `set` (or record why the set is unavailable).
    pub fn run(&mut self, set: Result<HeaderSet, String>, checks: &[Check], work: &Path) {
        let set = match set {
            Ok(set) => set,
            Err(why) => {
                self.unavailable.push(why);
                return;
            }
        };
        let output = match run_probe(&set, checks, work) {
            Ok(output) => output,
            Err(why) => {
                self.failures.push(format!("[{}] {why}", set.name));
                return;
            }
        };
        let mut seen = BTreeSet::new();
        for line in output.lines() {
            let parts: Vec<&str> = line.split_whitespace().collect();
            let num = |k: usize| {
                parts
                    .get(k)
                    .and_then(|p| p.parse::<i128>().ok())
                    .unwrap_or(-1)
            };
            let index = num(1) as usize;
            let Some(check) = checks.get(index) else {
                continue;
            };
            let id = check.id();
            let fail = |msg: String| format!("[{}] {id}: {msg}", set.name);
            match (parts[0], &check.item) {
                ("S", Item::Struct(s)) => {
                    let (size, align) = (num(2) as usize, num(3) as usize);
                    let size_ok = if s.extensible {
                        size >= s.size
                    } else {
                        size == s.size
                    };
                    if !size_ok {
                        self.failures
                            .push(fail(format!("size is {size} in C, {} in Rust", s.size)));
                    }
                    if align != s.align {
                        self.failures.push(fail(format!(
                            "alignment is {align} in C, {} in Rust",
                            s.align
                        )));
                    }
                }
                ("F", Item::Struct(s)) => {
                    let f = &s.fields[num(2) as usize];
                    let (offset, size) = (num(3) as usize, num(4) as usize);
                    if offset != f.offset || size != f.size {
                        self.failures.push(fail(format!(
                            "field {} (C {:?}) is at {offset} size {size} in C, at {} size {} in Rust",
                            f.rust, f.c, f.offset, f.size
                        )));
                    }
                }
                ("K", Item::Const(c)) => {
                    // Compare within the width of the C expression: `(1 << 31)` is an int.
                    let bits = (num(3) * 8).clamp(8, 64) as u32;
                    let fits = c.value >= -(1i128 << (bits - 1)) && c.value < (1i128 << bits);
                    let mask = (1i128 << bits) - 1;
                    let value = num(2);
                    if !fits || value & mask != c.value & mask {
                        self.failures.push(fail(format!(
                            "C value {value:#x}, Rust value {:#x}",
                            c.value
                        )));
                    }
                }
                _ => continue,
            }
            seen.insert(index);
        }
        for index in seen {
            self.verified
                .entry(checks[index].id())
                .or_default()
                .push(set.name.clone());
        }
    }

    /// Print the outcome where `cargo test` does not hide it, and fail as required.
    pub fn finish(self, all_ids: &[String]) {
        let mut text = String::new();
        let unverified: Vec<&String> = all_ids
            .iter()
            .filter(|id| !self.verified.contains_key(*id))
            .collect();
        let _ = writeln!(
            text,
            "abi_headers: {} of {} items verified against real headers",
            all_ids.len() - unverified.len(),
            all_ids.len()
        );
        for why in &self.unavailable {
            let _ = writeln!(text, "abi_headers: SKIPPED a header set: {why}");
        }
        for id in &unverified {
            let _ = writeln!(
                text,
                "abi_headers: SKIPPED (no header defines it here): {id}"
            );
        }
        // Written straight to stderr: the test harness captures print!/eprint! of passing tests.
        let _ = std::io::stderr().write_all(text.as_bytes());
        assert!(
            self.failures.is_empty(),
            "ABI mismatches against the C headers:\n{}",
            self.failures.join("\n")
        );
        // Any non-empty value requires headers (as AQUEDUCT_REQUIRE_HW does for hardware).
        let required =
            std::env::var_os("AQUEDUCT_REQUIRE_ABI_HEADERS").is_some_and(|v| !v.is_empty());
        if !required {
            return;
        }
        assert!(
            unverified.is_empty() && self.unavailable.is_empty(),
            "AQUEDUCT_REQUIRE_ABI_HEADERS is set but some items were not verified:\n{text}"
        );
        // The README states how many items are checked; fewer verified means checks were lost.
        let promised = readme_item_count();
        let verified = all_ids.len() - unverified.len();
        assert!(
            verified >= promised,
            "{verified} items verified, the README promises {promised}"
        );
    }
}

/// The item count the README's ABI row states: "... (N items) is checked against the real C
/// headers".
pub fn readme_item_count() -> usize {
    const MARK: &str = " items) is checked against the real C headers";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let at = readme
        .find(MARK)
        .unwrap_or_else(|| panic!("README.md no longer says \"(N{MARK}\""));
    let before = &readme[..at];
    let digits = before.len()
        - before
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .count();
    before[digits..]
        .parse()
        .unwrap_or_else(|e| panic!("README.md item count: {e}"))
}
