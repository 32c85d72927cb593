//! `aqueduct run` on the simulator, driven as a user would: results written to files and
//! compared with the CPU reference, JSON output, and clear errors for bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use test_support::process::{DEFAULT_DEADLINE, run_with_deadline};

fn kernels() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/bin")
}

fn aqueduct(args: &[&str]) -> Output {
    run_with_deadline(
        Command::new(env!("CARGO_BIN_EXE_aqueduct"))
            .args(args)
            .env("AQUEDUCT_BACKEND", "sim"),
        DEFAULT_DEADLINE,
        &format!("aqueduct {args:?}"),
    )
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("aqueduct-run-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn file(&self, name: &str, words: &[i32]) -> String {
        let path = self.0.join(name);
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn vector_add_runs_on_every_simulated_target_and_writes_its_output() {
    let scratch = Scratch::new("vector-add");
    let n = 1000usize;
    let a: Vec<i32> = (0..n as i32).map(|i| i * 7 - 300).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| i32::MAX - i).collect();
    let (fa, fb) = (scratch.file("a.bin", &a), scratch.file("b.bin", &b));
    // The RX 7900 XTX runs gfx1100's wave32 build and its wave64 one (tests/kernels/README.md).
    for (target, machine, file) in [
        ("gfx90a", "mi210", "vector_add.co6"),
        ("gfx942", "mi300x", "vector_add.co6"),
        ("gfx1100", "rx7900xtx", "vector_add.co6"),
        ("gfx1100", "rx7900xtx", "vector_add.w64.co6"),
    ] {
        let c = scratch.0.join(format!("c-{target}-{file}.bin"));
        let object = kernels().join(target).join(file);
        let out = run_with_deadline(
            Command::new(env!("CARGO_BIN_EXE_aqueduct"))
                .args([
                    "run",
                    object.to_str().unwrap(),
                    "vector_add",
                    "--grid",
                    "1000",
                    "--block",
                    "64",
                ])
                .args(["--arg", &format!("buf={fa}"), "--arg", &format!("buf={fb}")])
                .args(["--arg", "buf:fill=0xee*4004", "--arg", "u32=1000"])
                .args(["--out", &format!("2={}", c.display()), "--json"])
                .env("AQUEDUCT_BACKEND", "sim")
                .env("AQUEDUCT_SIM_MACHINE", machine),
            DEFAULT_DEADLINE,
            &format!("aqueduct run vector_add on {machine}"),
        );
        assert!(out.status.success(), "{target} {file}: {}", stderr(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["schema"], 1);
        assert_eq!(report["kernel"], "vector_add");
        assert_eq!(report["simulated"], true);
        assert!(
            report["target"].as_str().unwrap().starts_with(target),
            "{report}"
        );
        assert!(report["kernel_time_ns"].as_u64().unwrap() > 0, "{report}");
        let bytes = std::fs::read(&c).unwrap();
        assert_eq!(bytes.len(), 4004, "the whole buffer is written");
        let c: Vec<i32> = bytes[..4 * n]
            .chunks(4)
            .map(|w| i32::from_le_bytes(w.try_into().unwrap()))
            .collect();
        let expected: Vec<i32> = (0..n).map(|i| a[i].wrapping_add(b[i])).collect();
        assert_eq!(c, expected, "{target} {file}");
        assert_eq!(&bytes[4 * n..], &[0xee; 4], "past n, untouched");
    }
}

#[test]
fn bad_input_gets_a_clear_error() {
    let object = kernels().join("gfx90a/vector_add.co5");
    let object = object.to_str().unwrap();
    let cases: [(&[&str], &str); 7] = [
        (
            &["run", object, "nope", "--grid", "1", "--block", "1"],
            "no kernel \"nope\"",
        ),
        (
            &[
                "run",
                object,
                "vector_add",
                "--grid",
                "1",
                "--block",
                "1",
                "--arg",
                "u32=1",
            ],
            "takes 4 argument(s), 1 given",
        ),
        (
            &[
                "run",
                object,
                "vector_add",
                "--grid",
                "1",
                "--block",
                "1",
                "--arg",
                "buf:zero=4",
                "--arg",
                "buf:zero=4",
                "--arg",
                "buf:zero=4",
                "--arg",
                "f64=1.5",
            ],
            "argument 3",
        ),
        (
            &[
                "run",
                object,
                "vector_add",
                "--grid",
                "1",
                "--block",
                "1",
                "--arg",
                "u32=4",
                "--arg",
                "buf:zero=4",
                "--arg",
                "buf:zero=4",
                "--arg",
                "u32=1",
            ],
            "--arg 0: the kernel expects a buffer",
        ),
        (
            &[
                "run",
                object,
                "vector_add",
                "--grid",
                "1",
                "--block",
                "1",
                "--arg",
                "buf=/nonexistent/a.bin",
                "--arg",
                "buf:zero=4",
                "--arg",
                "buf:zero=4",
                "--arg",
                "u32=1",
            ],
            "/nonexistent/a.bin",
        ),
        (
            &[
                "run",
                "/nonexistent/k.co",
                "k",
                "--grid",
                "1",
                "--block",
                "1",
            ],
            "/nonexistent/k.co",
        ),
        (
            &[
                "run",
                object,
                "vector_add",
                "--grid",
                "1",
                "--block",
                "1",
                "--arg",
                "u16=4",
                "--arg",
                "buf:zero=4",
                "--arg",
                "buf:zero=4",
                "--arg",
                "u32=1",
            ],
            "unknown argument kind \"u16\"",
        ),
    ];
    for (args, expected) in cases {
        let out = aqueduct(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            stderr(&out).contains(expected),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    // A code object for another GPU: both targets named.
    let other = kernels().join("gfx1100/vector_add.co5");
    let out = aqueduct(&[
        "run",
        other.to_str().unwrap(),
        "vector_add",
        "--grid",
        "1",
        "--block",
        "1",
    ]);
    assert!(!out.status.success());
    let text = stderr(&out);
    assert!(
        text.contains("gfx1100") && text.contains("gfx90a"),
        "{text}"
    );
}

/// `--arg lds=BYTES` gives a `__local` pointer argument its dynamic LDS: `dynamic_lds` reverses
/// each work-group through it (`out[g*L + l] = in[g*L + L-1-l] + 1000 + g`); `lds=` on a
/// buffer argument, or a buffer for the LDS argument, is refused naming the argument.
#[test]
fn dynamic_lds_from_the_command_line() {
    let scratch = Scratch::new("dynamic-lds");
    let (wg, groups) = (100usize, 2usize);
    let input: Vec<i32> = (0..(wg * groups) as i32).map(|i| i * 3 - 50).collect();
    let fin = scratch.file("in.bin", &input);
    let out = scratch.0.join("out.bin");
    let object = kernels().join("gfx90a/dynamic_lds.co5");
    let object = object.to_str().unwrap();
    let grid = (wg * groups).to_string();
    let run = |lds: &str| {
        aqueduct(&[
            "run",
            object,
            "dynamic_lds",
            "--grid",
            &grid,
            "--block",
            &wg.to_string(),
            "--arg",
            &format!("buf={fin}"),
            "--arg",
            &format!("buf:zero={}", 4 * wg * groups),
            "--arg",
            lds,
            "--out",
            &format!("1={}", out.display()),
        ])
    };
    let done = run(&format!("lds={}", 4 * wg));
    assert!(done.status.success(), "{}", stderr(&done));
    let got: Vec<i32> = std::fs::read(&out)
        .unwrap()
        .chunks(4)
        .map(|w| i32::from_le_bytes(w.try_into().unwrap()))
        .collect();
    let want: Vec<i32> = (0..wg * groups)
        .map(|i| {
            let (g, l) = (i / wg, i % wg);
            input[g * wg + (wg - 1 - l)] + 1000 + g as i32
        })
        .collect();
    assert_eq!(got, want);
    let refused = run("buf:zero=400");
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("--arg 2: the kernel expects a dynamic LDS area"),
        "{}",
        stderr(&refused)
    );
    let misplaced = aqueduct(&[
        "run",
        object,
        "dynamic_lds",
        "--grid",
        "64",
        "--block",
        "64",
        "--arg",
        "lds=256",
        "--arg",
        "buf:zero=256",
        "--arg",
        "lds=256",
    ]);
    assert!(!misplaced.status.success());
    let text = stderr(&misplaced);
    assert!(
        text.contains("--arg 0") && text.contains("expects a buffer"),
        "{text}"
    );
    let help = aqueduct(&["run", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("lds=BYTES"));
}
