//! Child processes with a deadline: a test that runs a program waits for it so long and no
//! longer. A child that outlives its deadline is killed, with every process it started (it
//! runs in a process group of its own), and the test fails naming what it waited for and
//! showing what the child had written.
//!
//! Every test that starts a process goes through [`run_with_deadline`] (or
//! [`try_run_with_deadline`], where a missing program is a skip); `test-support`'s guard test
//! (`tests/deadlines.rs`) fails on a test file that calls `Command::output`, `Command::status`
//! or `Child::wait` itself.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::wait;

/// A generous deadline for a test's child that does a few seconds of work (one `aqueduct`
/// command, a C client on the simulator): long enough for a debug build on a loaded 2-core
/// machine, short enough to beat any CI job's time-out.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(300);

/// How long, after the child ended or was killed, the readers of its output may take to see
/// the end of its pipes (a grandchild that left the group could hold them open).
const DRAIN_GRACE: Duration = Duration::from_secs(10);

/// The most of each stream quoted in a failure message (its end: where a hang shows).
const QUOTE_LIMIT: usize = 16 * 1024;

/// Run `command` (stdin empty, stdout and stderr captured, in a process group of its own) and
/// return what [`Command::output`] would. `what` says what the test waits for ("aqueduct run
/// vector_add on gfx90a"); it names the failure.
///
/// # Panics
///
/// If the program cannot be started, or if it has not ended within `limit`: then it and its
/// process group are killed and the panic names `what`, the limit and the command and quotes
/// the end of its stdout and stderr.
#[track_caller]
pub fn run_with_deadline(command: &mut Command, limit: Duration, what: &str) -> Output {
    try_run_with_deadline(command, limit, what)
        .unwrap_or_else(|err| panic!("{what}: cannot start {command:?}: {err}"))
}

/// [`run_with_deadline`] for a program that may be missing (a C compiler, a tool a test
/// skips without): the error of starting it is returned instead of a panic. A child that
/// started and outlives `limit` still fails the test.
///
/// # Errors
///
/// What `spawn` said if the program could not be started.
///
/// # Panics
///
/// If the child has not ended within `limit` (see [`run_with_deadline`]).
#[track_caller]
pub fn try_run_with_deadline(
    command: &mut Command,
    limit: Duration,
    what: &str,
) -> std::io::Result<Output> {
    match run_bounded(command, limit, what)? {
        Ok(output) => Ok(output),
        Err(overdue) => panic!("{what}: {overdue}"),
    }
}

/// A child that had not ended within its limit, killed with its process group: what it had
/// written by then.
#[derive(Debug)]
pub struct Overdue {
    /// The command, as `Debug` prints it.
    pub command: String,
    /// The limit it outlived.
    pub limit: Duration,
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote to stderr.
    pub stderr: Vec<u8>,
}

impl std::fmt::Display for Overdue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "not within {:?}: killed {} and its process group\n\
             --- stdout (end)\n{}\n--- stderr (end)\n{}",
            self.limit,
            self.command,
            quote(&self.stdout),
            quote(&self.stderr)
        )
    }
}

/// [`try_run_with_deadline`] for a test that decides itself what a child outliving `limit`
/// means (a retry of a third-party program's known hang, say): such a child is killed with
/// its process group and returned as [`Overdue`] instead of failing the test.
///
/// # Errors
///
/// The outer error: what `spawn` said if the program could not be started.
pub fn run_bounded(
    command: &mut Command,
    limit: Duration,
    what: &str,
) -> std::io::Result<Result<Output, Overdue>> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command.spawn()?;
    let stdout = Collected::start(child.stdout.take(), "stdout");
    let stderr = Collected::start(child.stderr.take(), "stderr");
    let mut status = None;
    let ended = wait::until(limit, || {
        status = poll(&mut child, what);
        status.is_some()
    });
    if !ended {
        kill_group(&child);
        // SIGKILL cannot be caught; a process in uninterruptible sleep may take a moment.
        let _ = wait::until(DRAIN_GRACE, || poll(&mut child, what).is_some());
        return Ok(Err(Overdue {
            command: format!("{command:?}"),
            limit,
            stdout: stdout.finish(),
            stderr: stderr.finish(),
        }));
    }
    let status = status.unwrap_or_else(|| unreachable!("ended without a status"));
    Ok(Ok(Output {
        status,
        stdout: stdout.finish(),
        stderr: stderr.finish(),
    }))
}

/// The child's status if it has ended.
fn poll(child: &mut Child, what: &str) -> Option<ExitStatus> {
    child
        .try_wait()
        .unwrap_or_else(|err| panic!("{what}: waiting for the child: {err}"))
}

/// SIGKILL to the child's process group (it leads one: `process_group(0)`).
fn kill_group(child: &Child) {
    let group = libc::pid_t::try_from(child.id()).unwrap_or(libc::pid_t::MAX);
    // SAFETY: kill(2) with a negative pid signals that process group; the child has not been
    // reaped (the caller saw no status), so its id still names its group.
    unsafe { libc::kill(-group, libc::SIGKILL) };
}

/// The end of `bytes` as text, at most [`QUOTE_LIMIT`] bytes of it.
fn quote(bytes: &[u8]) -> String {
    let start = bytes.len().saturating_sub(QUOTE_LIMIT);
    let text = String::from_utf8_lossy(&bytes[start..]);
    if start > 0 {
        format!("[{start} bytes before this left out]\n{text}")
    } else {
        text.into_owned()
    }
}

/// One of the child's output streams, read on a thread of its own as it comes (so a chatty
/// child never blocks on a full pipe), kept where a time-out can still quote it.
struct Collected {
    bytes: Arc<Mutex<Vec<u8>>>,
    reader: Option<JoinHandle<()>>,
}

impl Collected {
    fn start(stream: Option<impl Read + Send + 'static>, name: &str) -> Self {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let reader = stream.map(|mut stream| {
            let bytes = Arc::clone(&bytes);
            std::thread::Builder::new()
                .name(format!("child-{name}"))
                .spawn(move || {
                    let mut chunk = [0u8; 8192];
                    while let Ok(n @ 1..) = stream.read(&mut chunk) {
                        bytes
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .extend_from_slice(&chunk[..n]);
                    }
                })
                .unwrap_or_else(|err| {
                    panic!("cannot start the reader of the child's {name}: {err}")
                })
        });
        Self { bytes, reader }
    }

    /// Everything read: all of it once the stream ended, what came so far if it has not
    /// ended within [`DRAIN_GRACE`] (the reader is then left behind).
    fn finish(mut self) -> Vec<u8> {
        if let Some(reader) = self.reader.take() {
            if wait::until(DRAIN_GRACE, || reader.is_finished()) {
                let _ = reader.join();
            }
        }
        std::mem::take(
            &mut *self
                .bytes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}
