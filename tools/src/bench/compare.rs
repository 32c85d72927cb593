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

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use aqueduct::{Condition, Device, Geometry, LaunchOptions, MemoryOrder, QueueOptions};

use super::figures::{Measured, Outcome, Samples};
use super::{micros, rocr};

/// The library ROCr is loaded from unless `--rocr-library` says otherwise.
pub const ROCR_LIBRARY: &str = "libhsa-runtime64.so.1";
/// Fresh processes per runtime: each gives one cold-init sample; the first also measures
/// every other path.
const PROCESSES: usize = 5;
/// How long one child may run before it counts as hung.
const CHILD_DEADLINE: Duration = Duration::from_secs(600);
const WAIT: Option<Duration> = Some(Duration::from_secs(30));

/// Which runtime a child measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Runtime {
    /// aqueduct, through the safe API.
    Aqueduct,
    /// ROCr, through `libhsa-runtime64`.
    Rocr,
}

impl Runtime {
    fn name(self) -> &'static str {
        match self {
            Self::Aqueduct => "aqueduct",
            Self::Rocr => "rocr",
        }
    }
}

/// Both runtimes' figures.
pub struct Comparison {
    /// aqueduct's.
    pub aqueduct: Outcome,
    /// ROCr's.
    pub rocr: Outcome,
    /// The library ROCr was asked for.
    pub rocr_library: String,
    /// Fresh processes per runtime.
    pub processes: usize,
}

/// Measure both runtimes, each in [`PROCESSES`] fresh children of this process. Fails only if
/// aqueduct's side fails; ROCr's problems are reported in its [`Outcome`].
pub fn run(iterations: usize, rocr_library: &str) -> Result<Comparison, String> {
    let mut sides = Vec::new();
    for runtime in [Runtime::Aqueduct, Runtime::Rocr] {
        super::progress(&format!(
            "{} side of the comparison, {PROCESSES} fresh processes",
            runtime.name()
        ));
        let mut merged: Option<Outcome> = None;
        for process in 0..PROCESSES {
            let work = if process == 0 { iterations } else { 0 };
            let outcome = spawn_child(runtime, work, rocr_library);
            merged = Some(match (merged, outcome) {
                (None, outcome) => outcome,
                (Some(Outcome::Measured(mut all)), Outcome::Measured(more)) => {
                    all.samples.extend(&more.samples);
                    Outcome::Measured(all)
                }
                (Some(Outcome::Measured(_)), other) => other,
                (Some(failed), _) => failed,
            });
            if !matches!(merged, Some(Outcome::Measured(_))) {
                break;
            }
        }
        sides.push(merged.unwrap_or_else(|| Outcome::Unavailable("not run".into())));
    }
    let rocr = sides.pop().unwrap_or_else(|| unreachable!());
    let aqueduct = sides.pop().unwrap_or_else(|| unreachable!());
    if let Outcome::NotInstalled(why) | Outcome::Unavailable(why) = &aqueduct {
        return Err(format!("aqueduct's side of the comparison: {why}"));
    }
    Ok(Comparison {
        aqueduct,
        rocr,
        rocr_library: rocr_library.to_owned(),
        processes: PROCESSES,
    })
}

/// Run `aqueduct bench-child` and read its report; a crash, a hang or garbage is
/// [`Outcome::Unavailable`] with what the child said on stderr.
fn spawn_child(runtime: Runtime, iterations: usize, rocr_library: &str) -> Outcome {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return Outcome::Unavailable(format!("finding this program: {e}")),
    };
    let child = Command::new(exe)
        .args(["bench-child", "--runtime", runtime.name(), "--iterations"])
        .arg(iterations.to_string())
        .arg("--rocr-library")
        .arg(rocr_library)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return Outcome::Unavailable(format!("starting the child: {e}")),
    };
    let readers = [
        child.stdout.take().map(read_all),
        child.stderr.take().map(read_all),
    ];
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if started.elapsed() > CHILD_DEADLINE => {
                let _ = child.kill();
                let _ = child.wait();
                break Err(format!("did not finish within {CHILD_DEADLINE:?}"));
            }
            // Polling the child's exit with a short pause: the deadline above bounds it.
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => break Err(format!("waiting for the child: {e}")),
        }
    };
    let [stdout, stderr] = readers.map(|r| r.and_then(|r| r.join().ok()).unwrap_or_default());
    let stderr = String::from_utf8_lossy(&stderr);
    let said = |why: String| {
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        if tail.is_empty() {
            why
        } else {
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            format!("{why}; it said: {}", tail.join(" / "))
        }
    };
    match status {
        Err(why) => Outcome::Unavailable(said(format!("the {} child {why}", runtime.name()))),
        Ok(status) if !status.success() => Outcome::Unavailable(said(format!(
            "the {} child failed ({status})",
            runtime.name()
        ))),
        // The report is the last line; a runtime may print lines of its own before it.
        Ok(_) => String::from_utf8_lossy(&stdout)
            .lines()
            .rev()
            .find(|line| line.starts_with('{'))
            .ok_or_else(|| format!("the {} child printed no report", runtime.name()))
            .and_then(|line| {
                serde_json::from_str(line)
                    .map_err(|e| format!("the {} child's report: {e}", runtime.name()))
            })
            .and_then(|value| Outcome::from_json(&value))
            .unwrap_or_else(|why| Outcome::Unavailable(said(why))),
    }
}

fn read_all(mut from: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        bytes
    })
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
        Runtime::Rocr => rocr::measure(rocr_library, iterations),
    };
    println!("{}", outcome.to_json());
}

/// aqueduct's side: the paths through the safe API, as ROCr's side measures them.
fn measure_aqueduct(iterations: usize) -> Result<Outcome, super::Error> {
    let mut samples = Samples::default();
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
        for _ in 0..iterations {
            let started = Instant::now();
            let queue = device.create_queue(&gpu, &options)?;
            samples.queue_create.push(micros(started.elapsed()));
            let started = Instant::now();
            drop(queue);
            samples.queue_destroy.push(micros(started.elapsed()));
        }
        let code = super::empty_kernel(&gpu.target_id.version.processor_name())?;
        let executable = device.load_code_object(&gpu, code)?;
        let empty = executable.kernel("empty")?;
        let queue = device.create_queue(&gpu, &options)?;
        let one = Geometry::d1(1, 1);
        let done = device.signal(1)?;
        for _ in 0..iterations {
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
    let started = Instant::now();
    device.shutdown()?;
    samples.shutdown.push(micros(started.elapsed()));
    drop(device);
    for _ in 0..iterations {
        let started = Instant::now();
        let device = Device::open()?;
        samples.reinit.push(micros(started.elapsed()));
        let started = Instant::now();
        device.shutdown()?;
        samples.shutdown.push(micros(started.elapsed()));
    }
    Ok(Outcome::Measured(Measured { samples, detail }))
}
