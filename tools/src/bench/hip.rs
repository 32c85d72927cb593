//! HIP's side of `aqueduct bench --hip`: the launch paths of issue 23 through HIP's runtime
//! (`hipLaunchKernel`, launch + `hipDeviceSynchronize`, back-to-back launches, a 10-kernel
//! chain, `hipGraphLaunch` of the chain captured from a stream, and launch +
//! `hipDeviceSynchronize` again with blocking sync), measured by a HIP program
//! (`hip/launch_cost.hip`) that this run builds with `hipcc` and runs as a child on the GPU HIP
//! sees. On the simulator that is the GPU the LD_PRELOAD interposer serves, so the run must be
//! under it (`sim/preload/run-under.sh`); aqueduct's figures of the same run are beside each
//! HIP figure. Without `hipcc` or a GPU for HIP, the side says why and the run goes on.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::report::Figure;
use super::watch::{self, Ended};

/// The program, built at run time (Debian's `hipcc` and HIP runtime are run-time needs only).
const SOURCE: &str = include_str!("hip/launch_cost.hip");
/// How long building the program may take (hipcc under load).
const BUILD_DEADLINE: Duration = Duration::from_secs(600);
/// How long the program may run.
const RUN_DEADLINE: Duration = Duration::from_secs(600);

/// What HIP's side came to.
pub enum HipSide {
    /// The figures, ids prefixed `hip_`.
    Measured(Vec<Figure>),
    /// Not measured, and why (no `hipcc`, no GPU for HIP, a failed build or run).
    NotMeasured(String),
}

/// Each HIP figure: its id (the program's id with `hip_`), what it measures, and the aqueduct
/// figure of this run it is compared with.
const PATHS: [(&str, &str, &str, &str); 7] = [
    (
        "launch_host",
        "hip_launch_host",
        "hipLaunchKernel of the empty kernel, host cost per launch (32 timed together)",
        "launch_host",
    ),
    (
        "launch_sync",
        "hip_launch_sync",
        "hipLaunchKernel + hipDeviceSynchronize, empty kernel",
        "dispatch_event_wait",
    ),
    (
        "back_to_back",
        "hip_back_to_back",
        "64 hipLaunchKernel calls, then hipDeviceSynchronize",
        "dispatch_back_to_back",
    ),
    (
        "chain_10",
        "hip_chain_10",
        "10 hipLaunchKernel calls in one stream, then hipDeviceSynchronize",
        "chain_10",
    ),
    (
        "graph_launch_host",
        "hip_graph_launch_host",
        "hipGraphLaunch of the 10 launches captured from a stream, host cost per kernel",
        "command_list_chain_10_host",
    ),
    (
        "graph_chain_10",
        "hip_graph_chain_10",
        "hipGraphLaunch of the captured chain + hipStreamSynchronize",
        "command_list_chain_10",
    ),
    (
        "launch_sync_blocking",
        "hip_launch_sync_blocking",
        "hipLaunchKernel + hipDeviceSynchronize, empty kernel, hipDeviceScheduleBlockingSync \
         (HIP's default spins, holding a core the simulated GPU needs)",
        "dispatch_event_wait",
    ),
];

/// Build and run the HIP program for `processor` (`gfx90a`), `iterations` samples a path;
/// each figure's note compares it with aqueduct's figure of the same path in `ours`.
pub fn measure(processor: &str, iterations: usize, ours: &[Figure]) -> HipSide {
    match build(processor).and_then(|program| run(&program, iterations)) {
        Ok(lines) => HipSide::Measured(figures(&lines, ours)),
        Err(why) => HipSide::NotMeasured(why),
    }
}

/// `hipcc` from PATH.
fn hipcc() -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("hipcc"))
        .find(|path| path.is_file())
}

/// Build the program into a directory of this run; returns its path.
fn build(processor: &str) -> Result<PathBuf, String> {
    let hipcc = hipcc().ok_or("not measured: no hipcc on PATH (Debian package hipcc)")?;
    let dir = std::env::temp_dir().join(format!("aqueduct-bench-hip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let source = dir.join("launch_cost.hip");
    std::fs::write(&source, SOURCE).map_err(|e| format!("writing {}: {e}", source.display()))?;
    let program = dir.join("launch_cost");
    // The compiler must not run on the interposer's simulated GPU (nor start its threads).
    let child = Command::new(&hipcc)
        .arg(format!("--offload-arch={processor}"))
        .args(["-O2", "-o"])
        .arg(&program)
        .arg(&source)
        .env_remove("LD_PRELOAD")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", hipcc.display()))?;
    finished(watch::watch(child, BUILD_DEADLINE, BUILD_DEADLINE), "hipcc")?;
    Ok(program)
}

/// Run the program; returns its stdout.
fn run(program: &Path, iterations: usize) -> Result<String, String> {
    let child = Command::new(program)
        .arg(iterations.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", program.display()))?;
    let watched = watch::watch(child, RUN_DEADLINE, RUN_DEADLINE);
    let stdout = String::from_utf8_lossy(&watched.stdout).into_owned();
    finished(watched, "the HIP program")?;
    Ok(stdout)
}

/// Ok if the watched child exited 0, else what went wrong with what it said.
fn finished(watched: watch::Watched, what: &str) -> Result<(), String> {
    let why = match watched.ended {
        Ended::Exited(status) if status.success() => return Ok(()),
        Ended::Exited(status) => format!("{what} failed ({status})"),
        Ended::Stalled { limit, .. } | Ended::Overran(limit) => {
            format!("{what} ran longer than {limit:?} and was killed")
        }
        Ended::Lost(e) => format!("waiting for {what}: {e}"),
    };
    let said: Vec<&str> = watched.said.iter().map(String::as_str).collect();
    let hint = if under_interposer_or_gpu() {
        ""
    } else {
        " (no /dev/kfd here: on the simulator, run under sim/preload/run-under.sh)"
    };
    Err(format!("{why}{hint}: {}", said.join(" / ")))
}

/// Whether HIP can see a GPU at all: a real `/dev/kfd`, or the interposer preloaded.
fn under_interposer_or_gpu() -> bool {
    Path::new("/dev/kfd").exists()
        || std::env::var("LD_PRELOAD").is_ok_and(|p| p.contains("libamdgpu_sim_preload"))
}

/// The program's `figure ID UNIT SAMPLE...` lines as figures, each noting aqueduct's figure
/// of the same path.
fn figures(stdout: &str, ours: &[Figure]) -> Vec<Figure> {
    let mut figures = Vec::new();
    for line in stdout.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("figure") {
            continue;
        }
        let (Some(id), Some(unit)) = (words.next(), words.next()) else {
            continue;
        };
        let Some(&(_, hip_id, name, against)) = PATHS.iter().find(|(own, ..)| *own == id) else {
            continue;
        };
        let samples: Vec<f64> = words.filter_map(|w| w.parse().ok()).collect();
        let note = match ours.iter().find(|f| f.id == against) {
            Some(ours) if !samples.is_empty() => {
                let theirs = Figure::median_of(&samples);
                let mine = ours.percentile(0.5);
                format!(
                    "aqueduct's `{against}` in this run: {mine:.2} {}; aqueduct / HIP = {:.2}",
                    ours.unit,
                    mine / theirs
                )
            }
            _ => format!("aqueduct's `{against}` was not measured in this run"),
        };
        figures.push(Figure {
            id: hip_id,
            name,
            unit: if unit == "k/s" {
                "k/s"
            } else if unit == "ns" {
                "ns"
            } else {
                "µs"
            },
            goal: "report",
            samples,
            note,
        });
    }
    figures
}
