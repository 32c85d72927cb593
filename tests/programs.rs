//! GPU programs through the library (`aqueduct::program`) on simulated gfx90a (MI210) and
//! gfx942 (MI300X): exit codes, output from many lanes, malloc/free, argv/envp,
//! constructors, faults, timeouts, abort and an unserved call. The programs' sources and
//! contracts: tests/kernels/src/programs/.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use aqueduct::Device;
use aqueduct::program::{Exit, Output, Program, ProgramError, ProtocolVersion, RunOptions};
use aqueduct::sim::{Machine, MachineConfig};

const TARGETS: [&str; 2] = ["gfx90a", "gfx942"];

/// A small simulated machine of `target`'s GPU.
fn device(target: &str) -> (Machine, Device) {
    let config = match target {
        "gfx90a" => MachineConfig::mi210(),
        _ => MachineConfig::mi300x(),
    };
    let machine = Machine::new(config.with_compute_units(8).with_vram(1 << 30)).unwrap();
    let device = Device::open_on(Arc::new(machine.clone())).unwrap();
    (machine, device)
}

fn image(target: &str, name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/kernels/bin/programs/{target}/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn options() -> RunOptions {
    RunOptions {
        args: vec![b"program".to_vec()],
        stdout: Output::Capture,
        stderr: Output::Capture,
        timeout: Some(Duration::from_secs(120)),
        // Odd, so the server's scan takes its one-port-at-a-time path too.
        ports: Some(63),
        ..RunOptions::default()
    }
}

fn run(target: &str, name: &str, options: &RunOptions) -> Result<Exit, ProgramError> {
    let (_machine, device) = device(target);
    let gpu = device.gpus().unwrap()[0].clone();
    let program = Program::new(&device, &gpu, image(target, name)).unwrap();
    program.run(options)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn main_returns_a_value() {
    for target in TARGETS {
        let exit = run(target, "return_value", &options()).unwrap();
        assert_eq!(exit.code, 42, "{target}");
        assert!(exit.stdout.is_empty() && exit.stderr.is_empty(), "{target}");
    }
}

#[test]
fn stdout_and_stderr() {
    for target in TARGETS {
        let exit = run(target, "hello", &options()).unwrap();
        assert_eq!(exit.code, 0, "{target}");
        assert_eq!(text(&exit.stdout), "hello from the GPU\n", "{target}");
        assert_eq!(text(&exit.stderr), "a line on stderr\n", "{target}");
    }
}

/// Text built in stack arrays and printed through the RPC client arrives whole (clang walks
/// it with a MUBUF offset that starts at -1 on gfx90a; see checks/private.rs).
#[test]
fn strings_on_the_stack_print() {
    for target in TARGETS {
        let exit = run(target, "stack_strings", &options()).unwrap();
        assert_eq!(exit.code, 0, "{target}");
        assert_eq!(
            text(&exit.stdout),
            "stack line 1: aqueduct\nstack line 2: scratch\nstack line 3: 4294967295\ndesrever\n",
            "{target}"
        );
        assert!(exit.stderr.is_empty(), "{target}");
    }
}

#[test]
fn exit_from_one_lane_wins_over_main() {
    for target in TARGETS {
        let exit = run(
            target,
            "exit_lane",
            &RunOptions {
                threads: [64, 1, 1],
                ..options()
            },
        )
        .unwrap();
        assert_eq!(exit.code, 3, "{target}");
    }
}

#[test]
fn many_lanes_print_whole_lines() {
    for target in TARGETS {
        let (threads, blocks) = (64, 2);
        let exit = run(
            target,
            "many_lanes",
            &RunOptions {
                threads: [threads, 1, 1],
                blocks: [blocks, 1, 1],
                ..options()
            },
        )
        .unwrap();
        assert_eq!(exit.code, 0, "{target}");
        let out = text(&exit.stdout);
        let mut lines: Vec<&str> = out.lines().collect();
        lines.sort_unstable();
        let mut expected: Vec<String> = (0..threads * blocks)
            .map(|i| format!("line {i} from a lane of the GPU"))
            .collect();
        expected.sort_unstable();
        assert_eq!(lines, expected, "{target}");
    }
}

#[test]
fn malloc_and_free_in_a_loop() {
    for target in TARGETS {
        let (machine, device) = device(target);
        let gpu = device.gpus().unwrap()[0].clone();
        let program = Program::new(&device, &gpu, image(target, "malloc_loop")).unwrap();
        let run_once = || {
            let exit = program
                .run(&RunOptions {
                    threads: [64, 1, 1],
                    ..options()
                })
                .unwrap();
            assert_eq!(exit.code, 0, "{target}: {}", text(&exit.stdout));
            assert_eq!(text(&exit.stdout), "malloc ok\n", "{target}");
            machine.counts().buffer_objects
        };
        // The first run may leave what the device keeps for later queues (signal pools,
        // scratch); every block a run allocates, the 64 leaked ones included, is freed when
        // it ends, so a second run leaves no more buffer objects than the first.
        let after_first = run_once();
        assert_eq!(run_once(), after_first, "{target}");
    }
}

#[test]
fn arguments_and_environment_echoed() {
    for target in TARGETS {
        let exit = run(
            target,
            "echo_args",
            &RunOptions {
                args: vec![
                    b"echo_args".to_vec(),
                    b"one".to_vec(),
                    b"two words".to_vec(),
                ],
                env: vec![b"HOME=/root".to_vec(), b"AQ_COLOUR=blue".to_vec()],
                threads: [8, 1, 1],
                ..options()
            },
        )
        .unwrap();
        assert_eq!(exit.code, 3, "{target}");
        assert_eq!(
            text(&exit.stdout),
            "argv[0]=echo_args\nargv[1]=one\nargv[2]=two words\nenv AQ_COLOUR=blue\n",
            "{target}"
        );
    }
}

#[test]
fn constructor_seen_by_main_and_destructor_at_exit() {
    for target in TARGETS {
        let exit = run(target, "constructor", &options()).unwrap();
        assert_eq!(exit.code, 0, "{target}");
        assert_eq!(
            text(&exit.stdout),
            "constructed 1234\ndestructor ran\n",
            "{target}"
        );
    }
}

#[test]
fn memory_fault_reports_the_address() {
    for target in TARGETS {
        let error = run(target, "fault", &options()).unwrap_err();
        match error {
            ProgramError::MemoryFault { address } => {
                assert_eq!(address, Some(0xdead_0000), "{target}");
            }
            other => panic!("{target}: {other:?}"),
        }
        assert!(
            error.to_string().contains("0xdead0000"),
            "{target}: {error}"
        );
    }
}

#[test]
fn a_program_that_never_ends_times_out() {
    for target in TARGETS {
        let started = Instant::now();
        let error = run(
            target,
            "forever",
            &RunOptions {
                timeout: Some(Duration::from_secs(2)),
                ..options()
            },
        )
        .unwrap_err();
        assert!(
            matches!(error, ProgramError::Timeout { .. }),
            "{target}: {error:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(60), "{target}");
    }
}

#[test]
fn abort_is_an_error() {
    for target in TARGETS {
        let error = run(target, "abort", &options()).unwrap_err();
        assert!(
            matches!(error, ProgramError::Aborted),
            "{target}: {error:?}"
        );
    }
}

#[test]
fn an_unserved_call_stops_the_program() {
    for target in TARGETS {
        let error = run(target, "unknown_opcode", &options()).unwrap_err();
        match error {
            ProgramError::UnhandledOpcode { opcode } => assert_eq!(opcode, 0x6300_0063),
            other => panic!("{target}: {other:?}"),
        }
    }
}

/// An image of the doorbell generation (2096-byte client, buffer shifted by the doorbell
/// record) is served by polling, the doorbell left unset; with the default (maximum) port
/// count, 16384, and with an odd one.
#[test]
fn the_doorbell_generation_is_served() {
    for target in TARGETS {
        let (_machine, device) = device(target);
        let gpu = device.gpus().unwrap()[0].clone();
        let program = Program::new(&device, &gpu, image(target, "doorbell_layout")).unwrap();
        assert_eq!(program.protocol(), ProtocolVersion::Doorbell, "{target}");
        for ports in [None, Some(63)] {
            let exit = program
                .run(&RunOptions {
                    threads: [64, 1, 1],
                    blocks: [2, 1, 1],
                    ports,
                    ..options()
                })
                .unwrap();
            assert_eq!(exit.code, 5, "{target} {ports:?}");
            let out = text(&exit.stdout);
            let mut lines: Vec<&str> = out.lines().collect();
            lines.sort_unstable();
            let mut expected: Vec<String> = (0..128)
                .map(|i| format!("lane {i} over the doorbell layout"))
                .collect();
            expected.sort_unstable();
            assert_eq!(lines, expected, "{target} {ports:?}");
        }
    }
    let (_machine, device) = device("gfx90a");
    let gpu = device.gpus().unwrap()[0].clone();
    let program = Program::new(&device, &gpu, image("gfx90a", "hello")).unwrap();
    assert_eq!(program.protocol(), ProtocolVersion::Polling);
}

#[test]
fn a_kernel_is_not_a_program() {
    let (_machine, device) = device("gfx90a");
    let gpu = device.gpus().unwrap()[0].clone();
    let error =
        Program::new(&device, &gpu, support::code_object("gfx90a", "empty.co5")).unwrap_err();
    assert!(matches!(error, ProgramError::NotAProgram(_)), "{error:?}");
}

/// The server's idle cost, bounded generously so that only busy-spinning fails: `quiet`
/// computes for 1 s of GPU time without a host call. The real figure is in the README
/// (`cargo bench --bench program_rpc` prints it too).
#[test]
fn an_idle_server_sleeps() {
    let target = "gfx942";
    let started = Instant::now();
    let exit = run(
        target,
        "quiet",
        &RunOptions {
            args: vec![b"quiet".to_vec(), b"1000".to_vec()],
            ports: None,
            ..options()
        },
    )
    .unwrap();
    let wall = started.elapsed();
    assert_eq!(
        exit.code, 0,
        "the loader did not write __llvm_libc_clock_freq"
    );
    assert!(wall >= Duration::from_secs(1), "{wall:?}");
    let cpu = exit.server_cpu_time.expect("getrusage(RUSAGE_THREAD)");
    assert!(
        cpu.as_secs_f64() < 0.2 * wall.as_secs_f64(),
        "the RPC server used {cpu:?} of CPU over {wall:?}"
    );
    eprintln!(
        "idle RPC server (4096 ports): {cpu:?} CPU over {wall:?} ({:.2} % of a core)",
        100.0 * cpu.as_secs_f64() / wall.as_secs_f64()
    );
}
