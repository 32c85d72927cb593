//! Watching a bench child: a limit on how long it may go without progress, and on its whole
//! run.
//!
//! A child says what it is about to do ([`step`], one line on stderr) before every call that
//! may block. The parent kills a child that has said nothing for the stall limit and reports
//! the step it was in. A step takes milliseconds, even on a loaded machine; the limit is
//! seconds, so only a child that stopped making progress reaches it. ROCr 5.2 can stop for good
//! in `hsa_queue_destroy` (a lost wake-up of its own, see `rocr::QUEUE_DESTROY_STALL`).

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ExitStatus};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How a progress line starts.
const STEP_PREFIX: &str = "aqueduct bench-child step: ";
/// Env var: the stall limit in seconds (a slow machine may want more; tests want less).
pub const STALL_LIMIT_ENV: &str = "AQUEDUCT_BENCH_STALL_LIMIT";
/// The stall limit unless [`STALL_LIMIT_ENV`] says otherwise.
const DEFAULT_STALL_LIMIT: Duration = Duration::from_secs(10);
/// How often the parent looks at the child.
const LOOK_EVERY: Duration = Duration::from_millis(5);

/// Say, in a child, what it is about to do.
pub fn step(what: &str) {
    eprintln!("{STEP_PREFIX}{what}");
}

/// The stall limit: [`STALL_LIMIT_ENV`] (seconds, fractions allowed) or the default.
pub fn stall_limit() -> Duration {
    std::env::var(STALL_LIMIT_ENV)
        .ok()
        .and_then(|text| text.trim().parse::<f64>().ok())
        .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
        .filter(|limit| !limit.is_zero())
        .unwrap_or(DEFAULT_STALL_LIMIT)
}

/// How a watched child ended.
#[derive(Debug)]
pub enum Ended {
    /// It exited.
    Exited(ExitStatus),
    /// It said nothing for the stall limit, last in `step`; it was killed.
    Stalled {
        /// The step it was in.
        step: String,
        /// The limit it reached.
        limit: Duration,
    },
    /// It ran longer than the deadline; it was killed.
    Overran(Duration),
    /// Waiting for it failed.
    Lost(String),
}

/// What a watched child left.
pub struct Watched {
    /// How it ended.
    pub ended: Ended,
    /// Its stdout.
    pub stdout: Vec<u8>,
    /// Its stderr, progress lines left out.
    pub said: Vec<String>,
}

/// The last progress a child reported, and when.
struct Progress {
    at: Instant,
    step: String,
    said: Vec<String>,
}

/// Wait for `child` (stdout and stderr piped), killing it when it stalls for `stall_limit` or
/// runs past `deadline`.
pub fn watch(mut child: Child, stall_limit: Duration, deadline: Duration) -> Watched {
    let started = Instant::now();
    let progress = Arc::new(Mutex::new(Progress {
        at: started,
        step: "starting".to_owned(),
        said: Vec::new(),
    }));
    let stdout = child.stdout.take().map(read_all);
    let stderr = child.stderr.take().map(|stderr| {
        let progress = progress.clone();
        std::thread::spawn(move || follow(stderr, &progress))
    });
    let lock = |p: &Mutex<Progress>| {
        // The reader only pushes and overwrites: a poisoned lock holds usable data.
        p.lock().unwrap_or_else(PoisonError::into_inner).at
    };
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ended::Exited(status),
            Ok(None) if started.elapsed() > deadline => break Ended::Overran(deadline),
            Ok(None) if lock(&progress).elapsed() > stall_limit => {
                let step = progress
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .step
                    .clone();
                break Ended::Stalled {
                    step,
                    limit: stall_limit,
                };
            }
            // Polling the child's exit with a short pause: the limits above bound it.
            Ok(None) => std::thread::sleep(LOOK_EVERY),
            Err(e) => break Ended::Lost(e.to_string()),
        }
    };
    if !matches!(ended, Ended::Exited(_)) {
        let _ = child.kill();
        let _ = child.wait();
    }
    // The pipes close when the child is gone (it starts no process of its own), so the
    // readers end.
    let stdout = stdout.and_then(|r| r.join().ok()).unwrap_or_default();
    if let Some(reader) = stderr {
        let _ = reader.join();
    }
    let said = std::mem::take(&mut progress.lock().unwrap_or_else(PoisonError::into_inner).said);
    Watched {
        ended,
        stdout,
        said,
    }
}

/// Read the child's stderr line by line: progress lines move the progress on, the rest is
/// kept.
fn follow(stderr: impl Read, progress: &Mutex<Progress>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        let mut p = progress.lock().unwrap_or_else(PoisonError::into_inner);
        p.at = Instant::now();
        match text.strip_prefix(STEP_PREFIX) {
            Some(step) => step.clone_into(&mut p.step),
            None => p.said.push(text.to_owned()),
        }
    }
}

fn read_all(mut from: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        bytes
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    fn shell(script: &str) -> Child {
        Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    #[test]
    fn a_silent_child_is_killed_in_its_last_step() {
        let child = shell(&format!(
            "echo '{STEP_PREFIX}one' >&2; echo other >&2; echo '{STEP_PREFIX}two' >&2; exec sleep 60"
        ));
        let started = Instant::now();
        let watched = watch(child, Duration::from_millis(300), Duration::from_secs(50));
        assert!(started.elapsed() < Duration::from_secs(50));
        match watched.ended {
            Ended::Stalled { step, .. } => assert_eq!(step, "two"),
            other => panic!("{other:?}"),
        }
        assert_eq!(watched.said, ["other"]);
    }

    #[test]
    fn a_child_that_finishes_is_read_whole() {
        let watched = watch(
            shell("echo out; echo err >&2"),
            Duration::from_secs(50),
            Duration::from_secs(50),
        );
        assert!(matches!(watched.ended, Ended::Exited(s) if s.success()));
        assert_eq!(watched.stdout, b"out\n");
        assert_eq!(watched.said, ["err"]);
    }

    #[test]
    fn a_child_that_keeps_stepping_still_meets_the_deadline() {
        let child = shell(&format!(
            "while :; do echo '{STEP_PREFIX}loop' >&2; sleep 0.05; done"
        ));
        let watched = watch(child, Duration::from_secs(50), Duration::from_millis(500));
        assert!(
            matches!(watched.ended, Ended::Overran(_)),
            "{:?}",
            watched.ended
        );
    }
}
