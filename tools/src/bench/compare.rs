//! `aqueduct bench --rocr`: aqueduct's and ROCr's figures for the same paths (init, queue
//! creation, dispatch round trip, shutdown, reinit) on the same device, in one run.
//!
//! Each runtime is measured in child processes of the run: the `aqueduct` binary re-executes
//! itself with the hidden `bench-child` subcommand, which prints its samples as JSON. A real
//! kernel keeps one KFD process per address space and lets a process acquire a GPU's VM only
//! once, so ROCr and aqueduct cannot both bind in one process; running aqueduct's side in a
//! child too gives both the same start (a fresh process, its first init cold). Children inherit
//! the environment, so under the LD_PRELOAD interposer both sides talk to the same simulated
//! machine through the real system-call path.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aqueduct::{Condition, Device, Geometry, LaunchOptions, MemoryOrder, QueueOptions};

use super::figures::{Measured, Outcome, Samples};
use super::{loaded, micros, rocr, watch};

/// The library ROCr is loaded from unless `--rocr-library` says otherwise.
pub const ROCR_LIBRARY: &str = "libhsa-runtime64.so.1";
/// Fresh processes per runtime: each gives one cold-init sample; the first also measures
/// every other path.
const PROCESSES: usize = 5;
/// How long one child may run in all before it counts as hung (its steps are bounded by the
/// much shorter stall limit of [`watch`]).
const CHILD_DEADLINE: Duration = Duration::from_secs(600);
/// How many times ROCr's child is started when it stalls (never aqueduct's: a stall of ours
/// is a bug to report, not to retry).
const ROCR_ATTEMPTS: usize = 3;
const WAIT: Option<Duration> = Some(Duration::from_secs(30));

/// What `aqueduct bench --rocr` compares aqueduct with.
#[derive(Debug, Clone, Copy)]
pub struct Against<'a> {
    /// The library ROCr is loaded from (`--rocr-from`).
    pub rocr: &'a str,
    /// An HSA library to measure on ROCr's paths beside it (`--rocr-library`).
    pub library: Option<&'a str>,
}

/// Which runtime a child measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Runtime {
    /// aqueduct, through the safe API.
    Aqueduct,
    /// ROCr, through `libhsa-runtime64`.
    Rocr,
    /// The HSA library given with `--rocr-library` (aqueduct's `libhsa-runtime64.so.1`), on
    /// ROCr's paths, loaded from its file.
    Library,
}

impl Runtime {
    fn name(self) -> &'static str {
        match self {
            Self::Aqueduct => "aqueduct",
            Self::Rocr => "rocr",
            Self::Library => "library",
        }
    }
}

/// The HSA library measured in ROCr's place (`--rocr-library`).
pub struct LibrarySide {
    /// As given: a `libhsa-runtime64.so.1` or the directory holding one.
    pub asked: String,
    /// The file it names, symbolic links resolved (as `/proc/self/maps` shows it), if it exists.
    pub file: Option<String>,
    /// Its figures, or why there are none.
    pub outcome: Outcome,
}

/// Both runtimes' figures, and the HSA library's where one was given.
pub struct Comparison {
    /// aqueduct's.
    pub aqueduct: Outcome,
    /// ROCr's.
    pub rocr: Outcome,
    /// The library ROCr was asked for.
    pub rocr_library: String,
    /// The HSA library measured on ROCr's paths beside ROCr (`--rocr-library`).
    pub library: Option<LibrarySide>,
    /// Fresh processes per runtime.
    pub processes: usize,
    /// Each time a ROCr child stopped making progress and was killed: where, and why if known.
    pub rocr_stalls: Vec<String>,
}

/// Measure aqueduct and ROCr (loaded as `rocr_library`) and, with `library`, that HSA library
/// on ROCr's paths, each in [`PROCESSES`] fresh children of this process. Fails only if
/// aqueduct's side fails; ROCr's and the library's problems are reported in their
/// [`Outcome`]s. A ROCr child that stalls is started again, up to [`ROCR_ATTEMPTS`] times, and
/// each stall is reported; a stall of the library's is reported, not retried (it is the
/// library under test).
pub fn run(
    iterations: usize,
    rocr_library: &str,
    library: Option<&str>,
) -> Result<Comparison, String> {
    let mut rocr_stalls = Vec::new();
    let aqueduct = measure_side(Runtime::Aqueduct, "", iterations, &mut rocr_stalls);
    if let Outcome::NotInstalled(why) | Outcome::Unavailable(why) = &aqueduct {
        return Err(format!("aqueduct's side of the comparison: {why}"));
    }
    let mut rocr = measure_side(Runtime::Rocr, rocr_library, iterations, &mut rocr_stalls);
    let library = library.map(|asked| {
        let (file, outcome) = match loaded::resolve(asked) {
            Ok(file) => {
                let outcome = measure_side(Runtime::Library, &file, iterations, &mut Vec::new());
                (Some(file.clone()), loaded::check_library(outcome, &file))
            }
            Err(why) => (None, Outcome::NotInstalled(why)),
        };
        LibrarySide {
            asked: asked.to_owned(),
            file,
            outcome,
        }
    });
    if let Some(file) = library.as_ref().and_then(|l| l.file.as_deref()) {
        rocr = loaded::check_rocr(rocr, file);
    }
    Ok(Comparison {
        aqueduct,
        rocr,
        rocr_library: rocr_library.to_owned(),
        library,
        processes: PROCESSES,
        rocr_stalls,
    })
}

/// One runtime's figures from [`PROCESSES`] fresh children (the first measures every path,
/// the others the cold init and its shutdown); ROCr's stalls are retried and pushed to
/// `stalls`.
fn measure_side(
    runtime: Runtime,
    library: &str,
    iterations: usize,
    stalls: &mut Vec<String>,
) -> Outcome {
    super::progress(&format!(
        "{} side of the comparison, {PROCESSES} fresh processes",
        runtime.name()
    ));
    let mut merged: Option<Outcome> = None;
    for process in 0..PROCESSES {
        let work = if process == 0 { iterations } else { 0 };
        let mut attempts = 0;
        let outcome = loop {
            attempts += 1;
            match spawn_child(runtime, work, library) {
                Child::Reported(outcome) => break outcome,
                Child::Stalled(why) if runtime == Runtime::Rocr && attempts < ROCR_ATTEMPTS => {
                    super::progress(&format!("{why}; starting it again"));
                    stalls.push(why);
                }
                Child::Stalled(why) => {
                    if runtime == Runtime::Rocr {
                        stalls.push(why.clone());
                    }
                    break Outcome::Unavailable(format!(
                        "{why} ({attempts} attempt{})",
                        if attempts == 1 { "" } else { "s" }
                    ));
                }
            }
        };
        merged = Some(match (merged, outcome) {
            (None, outcome) => outcome,
            (Some(Outcome::Measured(mut all)), Outcome::Measured(more)) => {
                all.samples.extend(&more.samples);
                for file in more.loaded {
                    if !all.loaded.contains(&file) {
                        all.loaded.push(file);
                    }
                }
                Outcome::Measured(all)
            }
            (Some(Outcome::Measured(_)), other) => other,
            (Some(failed), _) => failed,
        });
        if !matches!(merged, Some(Outcome::Measured(_))) {
            break;
        }
    }
    merged.unwrap_or_else(|| Outcome::Unavailable("not run".into()))
}

/// How one child ended, for [`run`].
enum Child {
    /// It reported (a failure to start, a crash or garbage is [`Outcome::Unavailable`]).
    Reported(Outcome),
    /// It stopped making progress and was killed: what it was doing.
    Stalled(String),
}

/// Run `aqueduct bench-child` and read its report, bounded by [`watch`]: a child that says
/// nothing for the stall limit, or runs past [`CHILD_DEADLINE`], is killed.
fn spawn_child(runtime: Runtime, iterations: usize, library: &str) -> Child {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return Child::Reported(Outcome::Unavailable(format!("finding this program: {e}")));
        }
    };
    let child = Command::new(exe)
        .args(["bench-child", "--runtime", runtime.name(), "--iterations"])
        .arg(iterations.to_string())
        .arg("--rocr-library")
        .arg(library)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let child = match child {
        Ok(child) => child,
        Err(e) => return Child::Reported(Outcome::Unavailable(format!("starting the child: {e}"))),
    };
    let watched = watch::watch(child, watch::stall_limit(), CHILD_DEADLINE);
    let said = |why: String| {
        let tail: Vec<&str> = watched
            .said
            .iter()
            .rev()
            .take(5)
            .map(String::as_str)
            .collect();
        if tail.is_empty() {
            why
        } else {
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            format!("{why}; it said: {}", tail.join(" / "))
        }
    };
    let name = runtime.name();
    let status = match watched.ended {
        watch::Ended::Exited(status) => status,
        watch::Ended::Stalled { step, limit } => {
            let known = match runtime {
                Runtime::Rocr if step.starts_with("hsa_queue_destroy") => rocr::QUEUE_DESTROY_STALL,
                _ => "",
            };
            return Child::Stalled(said(format!(
                "the {name} child made no progress for {limit:?} in {step}{known}"
            )));
        }
        watch::Ended::Overran(deadline) => {
            return Child::Reported(Outcome::Unavailable(said(format!(
                "the {name} child did not finish within {deadline:?}"
            ))));
        }
        watch::Ended::Lost(e) => {
            return Child::Reported(Outcome::Unavailable(said(format!(
                "waiting for the {name} child: {e}"
            ))));
        }
    };
    if !status.success() {
        return Child::Reported(Outcome::Unavailable(said(format!(
            "the {name} child failed ({status})"
        ))));
    }
    // The report is the last line; a runtime may print lines of its own before it.
    Child::Reported(
        String::from_utf8_lossy(&watched.stdout)
            .lines()
            .rev()
            .find(|line| line.starts_with('{'))
            .ok_or_else(|| format!("the {name} child printed no report"))
            .and_then(|line| {
                serde_json::from_str(line).map_err(|e| format!("the {name} child's report: {e}"))
            })
            .and_then(|value| Outcome::from_json(&value))
            .unwrap_or_else(|why| Outcome::Unavailable(said(why))),
    )
}

/// The hidden `bench-child` subcommand: measure `runtime` in this (fresh) process and print
/// its report as one JSON object. aqueduct's failures are reported as `unavailable` too; the
/// parent turns them into an error.
pub fn child(runtime: Runtime, iterations: usize, rocr_library: &str) {
    // Under the LD_PRELOAD interposer, the first look at a served path builds the simulated
    // machine (its memory, its shader workers, the sysfs mirror): 10-150 ms on this machine,
    // depending on load, that no kernel spends when a program opens /dev/kfd. Look once before
    // the clock starts, so that "init" is the runtime's own work on both sides. On a real
    // kernel this is one stat(2) and changes nothing.
    let _ = std::fs::metadata("/dev/kfd");
    let outcome = match runtime {
        Runtime::Aqueduct => {
            measure_aqueduct(iterations).unwrap_or_else(|e| Outcome::Unavailable(e.to_string()))
        }
        Runtime::Rocr | Runtime::Library => rocr::measure(rocr_library, iterations),
    };
    println!("{}", outcome.to_json());
}

/// aqueduct's side: the paths through the safe API, as ROCr's side measures them.
fn measure_aqueduct(iterations: usize) -> Result<Outcome, super::Error> {
    let mut samples = Samples::default();
    watch::step("Device::open");
    let started = Instant::now();
    let device = Device::open()?;
    samples.init.push(micros(started.elapsed()));
    let gpu = device.gpus()?[0].clone();
    let detail = format!("{} ({})", device.description(), gpu.target_id);
    if iterations > 0 {
        let options = QueueOptions {
            packets: 256,
            ..QueueOptions::default()
        };
        for i in 1..=iterations {
            watch::step(&format!("create_queue and drop ({i} of {iterations})"));
            let started = Instant::now();
            let queue = device.create_queue(&gpu, &options)?;
            samples.queue_create.push(micros(started.elapsed()));
            let started = Instant::now();
            drop(queue);
            samples.queue_destroy.push(micros(started.elapsed()));
        }
        watch::step("load_code_object");
        let code = super::empty_kernel(gpu.target_id.processor.name)?;
        let executable = device.load_code_object(&gpu, code)?;
        let empty = executable.kernel("empty")?;
        let queue = device.create_queue(&gpu, &options)?;
        let one = Geometry::d1(1, 1);
        let done = device.signal(1)?;
        for i in 1..=iterations {
            watch::step(&format!("dispatch ({i} of {iterations})"));
            let started = Instant::now();
            let launch = queue.launch(&empty, &one, &[])?;
            while !launch.is_complete()? {
                std::hint::spin_loop();
            }
            samples.dispatch_spin.push(micros(started.elapsed()));
            done.store(1, MemoryOrder::Relaxed)?;
            let started = Instant::now();
            queue.launch_with(
                &empty,
                &one,
                &[],
                &LaunchOptions {
                    completion: Some(&done),
                    ..Default::default()
                },
            )?;
            queue.wait(&done, Condition::Eq, 0, WAIT)?;
            samples.dispatch_event_wait.push(micros(started.elapsed()));
        }
    }
    watch::step("Device::shutdown");
    let started = Instant::now();
    device.shutdown()?;
    samples.shutdown.push(micros(started.elapsed()));
    drop(device);
    for i in 1..=iterations {
        watch::step(&format!("reopen and shutdown ({i} of {iterations})"));
        let started = Instant::now();
        let device = Device::open()?;
        samples.reinit.push(micros(started.elapsed()));
        let started = Instant::now();
        device.shutdown()?;
        samples.shutdown.push(micros(started.elapsed()));
    }
    Ok(Outcome::Measured(Measured {
        samples,
        detail,
        loaded: Vec::new(),
    }))
}
