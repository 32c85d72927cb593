//! The rule that every wait in a test has a time limit, kept by a guard: no test file of the
//! workspace starts or waits for a process by hand (`Command::output`, `status`, `spawn`,
//! `wait_with_output`, raw `fork`/`waitpid`) instead of through
//! `test_support::process::run_with_deadline` or `test_support::fork`, and none waits on the
//! GPU through the safe API with no time-out (`.wait(None)`, `.finish(None)`).
//!
//! A plain text search, line by line, of every `.rs` file under a `tests` directory (the
//! kernel corpus's sources aside); comment lines do not count. Where a wait must have no
//! limit of its own (an infinite wait is what the test is about), `watchdog::arm` bounds it
//! and the line says so in a trailing comment naming it: `// bounded by: the watchdog`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What a test file must not contain, and what to use instead. The needles are split so that
/// this file does not match itself.
const FORBIDDEN: &[(&str, &str, &str)] = &[
    (".output", "()", "process::run_with_deadline"),
    (".status", "()", "process::run_with_deadline"),
    (".spawn", "()", "process::run_with_deadline"),
    ("wait_with", "_output", "process::run_with_deadline"),
    ("libc::fork", "(", "fork::run_in_child"),
    ("waitpid", "(", "fork::run_in_child"),
    (".wait(", "None)", "a time-out: .wait(Some(limit))"),
    (".finish(", "None)", "a time-out: .finish(Some(limit))"),
];

/// The trailing comment of a line whose wait a watchdog bounds.
const BOUNDED_BY: &str = "// bounded by: ";

/// Files that still wait by hand, each with the work that converts it. The list may only
/// shrink: an entry whose file no longer offends fails the guard.
const NOT_YET: &[(&str, &str)] = &[];

/// The offending lines of one file's text: (line number, line, what to use instead).
fn offences(text: &str) -> Vec<(usize, String, &'static str)> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("//") || code.contains(BOUNDED_BY) {
            continue;
        }
        for (head, tail, instead) in FORBIDDEN {
            if code.contains(&format!("{head}{tail}")) {
                found.push((number + 1, line.trim().to_owned(), *instead));
            }
        }
    }
    found
}

/// Every `.rs` file under a directory named `tests` in the workspace, outside build output
/// and the kernel corpus, relative to the workspace root.
fn test_files(root: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, in_tests: bool, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let relative = path.strip_prefix(root).unwrap().to_owned();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name.starts_with('.')
                    || name == "target"
                    || relative == Path::new("tests/kernels")
                {
                    continue;
                }
                walk(root, &path, in_tests || name == "tests", out);
            } else if in_tests && path.extension().is_some_and(|ext| ext == "rs") {
                out.push(relative);
            }
        }
    }
    let mut files = Vec::new();
    walk(root, root, false, &mut files);
    files
}

#[test]
fn no_test_starts_or_waits_for_a_process_or_the_gpu_without_a_deadline() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let files = test_files(&root);
    // The walk finds the suites (a wrong root would pass vacuously).
    for expected in [
        "tests/quickstart.rs",
        "tools/tests/run.rs",
        "sim/preload/tests/clients.rs",
        "aql/tests/signal.rs",
    ] {
        assert!(
            files.iter().any(|f| f == Path::new(expected)),
            "{expected} not among the files searched"
        );
    }
    let mut report = String::new();
    for file in &files {
        if file == Path::new("test-support/tests/deadlines.rs") {
            continue;
        }
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let found = offences(&text);
        let exempt = NOT_YET.iter().any(|(f, _)| Path::new(f) == file);
        if exempt {
            assert!(
                !found.is_empty(),
                "{}: waits with deadlines now; take it off NOT_YET",
                file.display()
            );
            continue;
        }
        for (line, text, instead) in found {
            writeln!(report, "{}:{line}: {text}  (use {instead})", file.display()).unwrap();
        }
    }
    assert!(
        report.is_empty(),
        "waits without a time limit in tests:\n{report}"
    );
}

#[test]
fn the_guard_sees_a_bare_wait_and_ignores_comments_and_bounded_ones() {
    let bare = format!(
        "let out = Command::new(\"x\").output{}.unwrap();\n    launch.wait(None{}.unwrap();\n",
        "()", ")"
    );
    assert_eq!(
        offences(&bare)
            .iter()
            .map(|(line, _, _)| *line)
            .collect::<Vec<_>>(),
        [1, 2]
    );
    let fine = format!(
        "// a comment about .output{}\nrun_with_deadline(&mut cmd, DEFAULT_DEADLINE, \"x\");\n\
         launch.wait(Some(WAIT)).unwrap();\nscope.spawn(|| 1);\n\
         event.wait(None{}.unwrap(); // bounded by: the watchdog\n",
        "()", ")"
    );
    assert!(offences(&fine).is_empty(), "{:?}", offences(&fine));
}
