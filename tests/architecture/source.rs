//! Reading Rust source as far as imports go: comments and string literals dropped, tokens,
//! `use` trees (with the name each binds), and every `crate::`/`super::`/`self::` path in code,
//! with the (inline) module it appears in.

use std::fs;
use std::path::{Path, PathBuf};

/// A module path (`["driver", "process"]`); the crate root is empty.
pub type ModPath = Vec<String>;

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

/// One path of a `use` tree and the name it binds (`None` for a glob or `as _`).
pub struct UsePath {
    pub segments: Vec<String>,
    pub binds: Option<String>,
}

/// Parse a `use` tree starting at `toks[*at]`; append every full path to `out`.
fn use_tree(toks: &[String], at: &mut usize, prefix: &[String], out: &mut Vec<UsePath>) {
    let mut path = prefix.to_vec();
    let named = |path: Vec<String>| UsePath {
        binds: path.last().cloned(),
        segments: path,
    };
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
                out.push(UsePath {
                    segments: path,
                    binds: None,
                });
                return;
            }
            "as" => {
                let alias = toks.get(*at + 1).filter(|a| *a != "_").cloned();
                *at += 2;
                out.push(UsePath {
                    segments: path,
                    binds: alias,
                });
                return;
            }
            "," | "}" | ";" => {
                out.push(named(path));
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
                out.push(named(path));
                return;
            }
        }
    }
    out.push(named(path));
}

/// A path as found in one module: where (the file's module plus inline `mod x { }` blocks),
/// the segments, and whether it came from a `use` tree (bare first segments count there).
pub struct FoundPath {
    pub scope: ModPath,
    pub segments: Vec<String>,
    /// The name a `use` binds in `scope`; `None` for paths in code, globs and `as _`.
    pub binds: Option<String>,
    pub in_use: bool,
}

/// Every path one file names.
pub fn paths_in(module: &ModPath, text: &str) -> Vec<FoundPath> {
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
                found.extend(paths.into_iter().map(|p| FoundPath {
                    scope: scope.clone(),
                    segments: p.segments,
                    binds: p.binds,
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
                    binds: None,
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
pub fn crate_sources(crate_dir: &str) -> Vec<(ModPath, String)> {
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
