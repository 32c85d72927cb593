//! `aqueduct exec` on simulated gfx90a (MI210) and gfx942 (MI300X), driven as a user would:
//! the program's output on ours, our environment as its envp, its exit code as ours, and the
//! statuses of a fault, a timeout and an abort. The programs' contracts:
//! tests/kernels/src/programs/.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use test_support::process::{DEFAULT_DEADLINE, run_with_deadline};

const MACHINES: [(&str, &str); 2] = [("gfx90a", "mi210"), ("gfx942", "mi300x")];

fn program(target: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/kernels/bin/programs")
        .join(target)
        .join(name)
}

fn exec(machine: &str, args: &[&str]) -> Output {
    run_with_deadline(
        Command::new(env!("CARGO_BIN_EXE_aqueduct"))
            .arg("exec")
            .args(args)
            .env("AQUEDUCT_BACKEND", "sim")
            .env("AQUEDUCT_SIM_MACHINE", machine)
            .env("AQ_GREETING", "hello there"),
        DEFAULT_DEADLINE,
        &format!("aqueduct exec {args:?} on {machine}"),
    )
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn main_return_value_is_the_exit_code() {
    for (target, machine) in MACHINES {
        let out = exec(
            machine,
            &[program(target, "return_value").to_str().unwrap()],
        );
        assert_eq!(
            out.status.code(),
            Some(42),
            "{target}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{target}");
    }
}

#[test]
fn output_goes_to_our_stdout_and_stderr() {
    for (target, machine) in MACHINES {
        let out = exec(machine, &[program(target, "hello").to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{target}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), "hello from the GPU\n", "{target}");
        assert!(text(&out.stderr).contains("a line on stderr\n"), "{target}");
    }
}

/// Text built in stack arrays prints whole: clang's strlen over a stack array starts a MUBUF
/// offset at -1 and loads with `offset:1` on gfx90a, which the shader core must wrap at 32 bits.
#[test]
fn strings_on_the_stack_print() {
    for (target, machine) in MACHINES {
        let out = exec(
            machine,
            &[program(target, "stack_strings").to_str().unwrap()],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{target}: {}",
            text(&out.stderr)
        );
        assert_eq!(
            text(&out.stdout),
            "stack line 1: aqueduct\nstack line 2: scratch\nstack line 3: 4294967295\ndesrever\n",
            "{target}"
        );
    }
}

#[test]
fn exit_from_a_lane() {
    for (target, machine) in MACHINES {
        let out = exec(
            machine,
            &[
                "--threads",
                "64",
                program(target, "exit_lane").to_str().unwrap(),
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(3),
            "{target}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn lines_from_many_lanes_stay_whole() {
    for (target, machine) in MACHINES {
        let out = exec(
            machine,
            &[
                "--threads",
                "64",
                "--blocks",
                "2",
                program(target, "many_lanes").to_str().unwrap(),
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{target}: {}",
            text(&out.stderr)
        );
        let stdout = text(&out.stdout);
        let mut lines: Vec<&str> = stdout.lines().collect();
        lines.sort_unstable();
        let mut expected: Vec<String> = (0..128)
            .map(|i| format!("line {i} from a lane of the GPU"))
            .collect();
        expected.sort_unstable();
        assert_eq!(lines, expected, "{target}");
    }
}

#[test]
fn malloc_and_free() {
    for (target, machine) in MACHINES {
        let out = exec(
            machine,
            &[
                "--threads",
                "64",
                program(target, "malloc_loop").to_str().unwrap(),
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{target}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), "malloc ok\n", "{target}");
    }
}

#[test]
fn arguments_and_our_environment_reach_the_program() {
    for (target, machine) in MACHINES {
        let path = program(target, "echo_args");
        let path = path.to_str().unwrap();
        let out = exec(
            machine,
            &[
                "--threads",
                "4",
                path,
                "one",
                "--not-an-option",
                "two words",
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(4),
            "{target}: {}",
            text(&out.stderr)
        );
        let stdout = text(&out.stdout);
        assert!(
            stdout.starts_with(&format!(
                "argv[0]={path}\nargv[1]=one\nargv[2]=--not-an-option\nargv[3]=two words\n"
            )),
            "{target}: {stdout}"
        );
        assert!(
            stdout.contains("env AQ_GREETING=hello there\n"),
            "{target}: {stdout}"
        );
    }
}

#[test]
fn constructors_and_destructors() {
    for (target, machine) in MACHINES {
        let out = exec(machine, &[program(target, "constructor").to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{target}: {}",
            text(&out.stderr)
        );
        assert_eq!(
            text(&out.stdout),
            "constructed 1234\ndestructor ran\n",
            "{target}"
        );
    }
}

#[test]
fn a_fault_reports_its_address() {
    for (target, machine) in MACHINES {
        let out = exec(machine, &[program(target, "fault").to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(134), "{target}");
        assert_eq!(text(&out.stdout), "about to fault\n", "{target}");
        assert!(
            text(&out.stderr).contains("memory access at 0xdead0000"),
            "{target}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn timeout_stops_a_program_that_never_ends() {
    for (target, machine) in MACHINES {
        let out = exec(
            machine,
            &[
                "--timeout",
                "1",
                program(target, "forever").to_str().unwrap(),
            ],
        );
        assert_eq!(out.status.code(), Some(124), "{target}");
        assert!(
            text(&out.stderr).contains("did not end within 1s"),
            "{target}"
        );
    }
}

#[test]
fn abort_and_unserved_calls() {
    for (target, machine) in MACHINES {
        let out = exec(machine, &[program(target, "abort").to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(134), "{target}");
        assert!(text(&out.stderr).contains("abort()"), "{target}");
        let out = exec(
            machine,
            &[program(target, "unknown_opcode").to_str().unwrap()],
        );
        assert_eq!(out.status.code(), Some(125), "{target}");
        assert!(
            text(&out.stderr).contains("0x63000063"),
            "{target}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn the_doorbell_generation() {
    for (target, machine) in MACHINES {
        let out = exec(
            machine,
            &[
                "--threads",
                "2",
                program(target, "doorbell_layout").to_str().unwrap(),
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(5),
            "{target}: {}",
            text(&out.stderr)
        );
        let stdout = text(&out.stdout);
        let mut lines: Vec<&str> = stdout.lines().collect();
        lines.sort_unstable();
        assert_eq!(
            lines,
            [
                "lane 0 over the doorbell layout",
                "lane 1 over the doorbell layout"
            ],
            "{target}"
        );
    }
}

#[test]
fn help_has_an_example_and_bad_input_is_refused() {
    let out = run_with_deadline(
        Command::new(env!("CARGO_BIN_EXE_aqueduct")).args(["exec", "--help"]),
        DEFAULT_DEADLINE,
        "aqueduct exec --help",
    );
    assert!(text(&out.stdout).contains("Example: aqueduct exec"));
    let out = exec("mi210", &["--threads", "0", "nowhere"]);
    assert_eq!(out.status.code(), Some(125));
    let out = exec(
        "mi210",
        &[Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/kernels/bin/gfx90a/empty.co5")
            .to_str()
            .unwrap()],
    );
    assert_eq!(out.status.code(), Some(125));
    assert!(
        text(&out.stderr).contains("not a GPU program"),
        "{}",
        text(&out.stderr)
    );
}
