//! Checks that run in a forked child and cannot pass by accident.
//!
//! Under libtest a forked child that panics unwinds back into the harness, which reports the
//! test as passed and exits 0: the parent sees success. [`run_in_child`] closes that hole: the
//! child runs its checks under `catch_unwind` with a timer watchdog, reports through a pipe
//! with a raw `write(2)`, and leaves with `_exit` (no exit handlers, no harness). The parent
//! fails on anything but a reported pass, and says which way the child failed.
//!
//! What the child may do: it is the copy of one thread of a possibly multi-threaded process.
//! A lock another thread held at the fork stays held in the child forever; if the check
//! touches one, the watchdog turns that hang into [`ChildFailure::TimedOut`]. The helper
//! itself, after the fork, only formats the panic message (one allocation, the usual practice
//! of fork tests in Rust), writes to the pipe and calls `_exit`.

use std::cell::RefCell;
use std::fmt;
use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// Why a forked child did not pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChildFailure {
    /// The check panicked; the panic's location and message, sent back through the pipe.
    Panicked(String),
    /// The check returned `Err(message)` (e.g. an errno mismatch).
    Failed(String),
    /// The watchdog fired: the child had not finished within this time.
    TimedOut(Duration),
    /// The child was killed by this signal (other than the watchdog's).
    Signalled(i32),
    /// The child exited with this status without reporting a result (it did not get as far as
    /// the helper's report, or exited 0 without one).
    ExitCode(i32),
}

impl fmt::Display for ChildFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Panicked(message) => write!(f, "the forked child panicked: {message}"),
            Self::Failed(message) => write!(f, "the forked child's check failed: {message}"),
            Self::TimedOut(timeout) => write!(
                f,
                "the forked child did not finish within {timeout:?} (hung, e.g. on a lock held across fork?)"
            ),
            Self::Signalled(signal) => {
                write!(f, "the forked child was killed by signal {signal}")?;
                match signal_name(*signal) {
                    Some(name) => write!(f, " ({name})"),
                    None => Ok(()),
                }
            }
            Self::ExitCode(code) => write!(
                f,
                "the forked child exited with status {code} without reporting a result"
            ),
        }
    }
}

impl std::error::Error for ChildFailure {}

/// Names of the signals a failing child usually dies of.
fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGTERM => "SIGTERM",
        libc::SIGPIPE => "SIGPIPE",
        _ => return None,
    })
}

/// The first byte of the child's report: what happened.
const REPORT_PASS: u8 = b'P';
/// The check panicked; the message follows.
const REPORT_PANICKED: u8 = b'X';
/// The check returned an error; the message follows.
const REPORT_FAILED: u8 = b'F';

/// Exit status of a child whose check passed.
const EXIT_PASS: i32 = 0;
/// Exit status of a child whose check returned an error.
const EXIT_FAILED: i32 = 1;
/// Exit status of a child whose check panicked (Rust's own panic status).
const EXIT_PANICKED: i32 = 101;

/// The longest message sent back: below the smallest pipe capacity Linux gives (one page), so
/// the child's write never blocks on a parent that reads only after the child has ended.
const MESSAGE_LIMIT: usize = 3 * 1024;

/// How long the parent waits beyond `timeout` before it kills a child whose own watchdog did
/// not fire (the check blocked SIGALRM, say).
const PARENT_GRACE: Duration = Duration::from_secs(5);

/// Fork; in the child run `check` under catch_unwind with an alarm(2) watchdog of
/// `timeout`, report through a pipe, leave with _exit. The parent waits and returns.
///
/// The watchdog is `setitimer(ITIMER_REAL)`, the finer-grained form of `alarm(2)`: SIGALRM,
/// reset to its default action and unblocked in the child, ends it. Should the check block
/// that signal, the parent kills the child a few seconds after `timeout` and reports a time-out
/// all the same.
///
/// # Panics
///
/// In the parent, if the pipe or the fork cannot be made, or waiting for the child fails:
/// those are failures of the test machine, not of the child.
pub fn run_in_child<F: FnOnce() -> Result<(), String>>(
    timeout: Duration,
    check: F,
) -> Result<(), ChildFailure> {
    let mut ends = [0 as RawFd; 2];
    // SAFETY: `ends` has room for the two descriptors pipe2 writes.
    let made = unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) };
    assert!(
        made == 0,
        "run_in_child: pipe2: {}",
        io::Error::last_os_error()
    );
    let [read_end, write_end] = ends;
    // SAFETY: fork has no preconditions; the child below only runs `check` (whose safety in a
    // forked child is the caller's to argue, with the watchdog catching a hang), writes to the
    // pipe and leaves with _exit, never returning into the caller or the harness.
    match unsafe { libc::fork() } {
        -1 => {
            let err = io::Error::last_os_error();
            close(read_end);
            close(write_end);
            panic!("run_in_child: fork: {err}");
        }
        0 => {
            close(read_end);
            child(write_end, timeout, check)
        }
        pid => {
            close(write_end);
            let status = wait_for(pid, timeout + PARENT_GRACE);
            let report = read_report(read_end);
            close(read_end);
            judge(status, report.as_deref(), timeout)
        }
    }
}

/// [`run_in_child`], panicking in the parent on anything but a pass, saying which.
#[track_caller]
pub fn assert_child_passes<F: FnOnce() -> Result<(), String>>(timeout: Duration, check: F) {
    if let Err(failure) = run_in_child(timeout, check) {
        panic!("{failure}");
    }
}

thread_local! {
    /// The panic hook's account of a panic in the child (location and message).
    static PANIC_REPORT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The child's side: watchdog, check, report, `_exit`.
fn child<F: FnOnce() -> Result<(), String>>(pipe: RawFd, timeout: Duration, check: F) -> ! {
    arm_watchdog(timeout);
    // The harness's hook (or the default one) would print into libtest's capture buffer, which
    // nobody reads in the child; record the panic for the report instead.
    std::panic::set_hook(Box::new(|info| {
        let text = info.to_string();
        PANIC_REPORT.with(|report| *report.borrow_mut() = Some(text));
    }));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(check));
    let (kind, code, message) = match outcome {
        Ok(Ok(())) => (REPORT_PASS, EXIT_PASS, String::new()),
        Ok(Err(message)) => (REPORT_FAILED, EXIT_FAILED, message),
        Err(payload) => {
            let message = PANIC_REPORT
                .with(|report| report.borrow_mut().take())
                .unwrap_or_else(|| payload_text(payload.as_ref()));
            (REPORT_PANICKED, EXIT_PANICKED, message)
        }
    };
    let mut report = Vec::with_capacity(1 + MESSAGE_LIMIT);
    report.push(kind);
    report.extend_from_slice(truncated(&message).as_bytes());
    write_all(pipe, &report);
    // SAFETY: ends the child at once: no atexit handlers, no destructors of the parent's
    // state, no return into the test harness.
    unsafe { libc::_exit(code) }
}

/// Make SIGALRM end the child `timeout` from now, whatever the parent had done with it.
fn arm_watchdog(timeout: Duration) {
    // A zero it_value would disarm the timer.
    let timeout = timeout.max(Duration::from_millis(1));
    let value = libc::timeval {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_usec: libc::suseconds_t::from(timeout.subsec_micros()),
    };
    let timer = libc::itimerval {
        it_interval: libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        it_value: value,
    };
    // SAFETY: plain system calls on valid, initialised arguments; signal() with SIG_DFL and
    // sigemptyset/sigaddset/pthread_sigmask on a local set have no other preconditions.
    unsafe {
        libc::signal(libc::SIGALRM, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        libc::sigaddset(&raw mut set, libc::SIGALRM);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &raw const set, std::ptr::null_mut());
        libc::setitimer(libc::ITIMER_REAL, &raw const timer, std::ptr::null_mut());
    }
}

/// The text of a panic payload (`panic!` with a literal or a formatted message).
fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| (*text).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(a panic without a message)".to_owned())
}

/// `message` cut to [`MESSAGE_LIMIT`] bytes at a character boundary.
fn truncated(message: &str) -> &str {
    if message.len() <= MESSAGE_LIMIT {
        return message;
    }
    let mut end = MESSAGE_LIMIT;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    &message[..end]
}

/// Write all of `bytes` with raw `write(2)`; give up quietly on an error (the parent then
/// judges by the exit status alone).
fn write_all(fd: RawFd, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is valid for reads of its length.
        let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        match usize::try_from(written) {
            Ok(0) => return,
            Ok(n) => bytes = &bytes[n..],
            Err(_) if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// Close a descriptor this module opened; an error leaves nothing to do.
fn close(fd: RawFd) {
    // SAFETY: `fd` is a pipe end this module created and has not closed yet.
    unsafe { libc::close(fd) };
}

/// How the child ended, as `waitpid` says; the child is killed once `deadline` has passed.
#[derive(Debug, Clone, Copy)]
enum Ending {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it.
    Signalled(i32),
    /// The parent killed it after `deadline`.
    Killed,
}

/// Wait for `pid` to end, polling, and kill it if it outlives `limit`.
fn wait_for(pid: libc::pid_t, limit: Duration) -> Ending {
    let deadline = Instant::now() + limit;
    let mut pause = Duration::from_micros(100);
    let mut killed = false;
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid place for waitpid to write to; `pid` is our child.
        let reaped = unsafe { libc::waitpid(pid, &raw mut status, libc::WNOHANG) };
        match reaped {
            0 => {}
            -1 => {
                let err = io::Error::last_os_error();
                assert!(
                    err.kind() == io::ErrorKind::Interrupted,
                    "run_in_child: waitpid: {err}"
                );
                continue;
            }
            _ if killed => return Ending::Killed,
            _ if libc::WIFEXITED(status) => return Ending::Exited(libc::WEXITSTATUS(status)),
            _ if libc::WIFSIGNALED(status) => return Ending::Signalled(libc::WTERMSIG(status)),
            // Stopped or continued: not an ending; wait on.
            _ => {}
        }
        if !killed && Instant::now() >= deadline {
            // SAFETY: `pid` is our child and has not been reaped, so the id is still its.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(10));
    }
}

/// Everything the child wrote to the pipe, read once it has ended. The read end is made
/// non-blocking: a sibling child forked by another test thread may hold a copy of the write
/// end, so end-of-file may not come.
fn read_report(fd: RawFd) -> Option<Vec<u8>> {
    // SAFETY: fcntl on a descriptor this module owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
    let mut report = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        // SAFETY: `chunk` is valid for writes of its length.
        let read = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        match usize::try_from(read) {
            Ok(0) => break,
            Ok(n) => report.extend_from_slice(&chunk[..n]),
            Err(_) if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    (!report.is_empty()).then_some(report)
}

/// The verdict on a child from how it ended and what it reported.
fn judge(ending: Ending, report: Option<&[u8]>, timeout: Duration) -> Result<(), ChildFailure> {
    let message = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    match ending {
        Ending::Killed | Ending::Signalled(libc::SIGALRM) => Err(ChildFailure::TimedOut(timeout)),
        Ending::Signalled(signal) => Err(ChildFailure::Signalled(signal)),
        Ending::Exited(code) => match report {
            Some([REPORT_PASS]) if code == EXIT_PASS => Ok(()),
            Some([REPORT_PANICKED, text @ ..]) => Err(ChildFailure::Panicked(message(text))),
            Some([REPORT_FAILED, text @ ..]) => Err(ChildFailure::Failed(message(text))),
            _ => Err(ChildFailure::ExitCode(code)),
        },
    }
}
