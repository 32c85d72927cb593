//! aqueduct inside a plugin: the `aqueduct-dlopen-fixture` cdylib (which embeds aqueduct and
//! the simulator) is loaded with `dlopen`, used for one dispatch and one GPU program run (whose
//! RPC server thread must leave nothing on the calling thread either), shut down and unloaded
//! with `dlclose`, [`ROUNDS`] times in one process.
//!
//! A load that reuses the previous copy proves nothing (reliability.md §1.5: `dlclose` returns
//! 0 and leaves the library mapped while a thread-local destructor of it is pending), so after
//! every `dlclose` the library's file must be gone from `/proc/self/maps`: each round runs a
//! fresh copy, statics zeroed. Each round must also leave no thread behind, and open files
//! and mappings must stay flat from the second round on. One test in its own binary, so
//! nothing else in the process moves the counts.
//!
//! After the rounds the process forks once: no unloaded copy may have left a fork handler.
//! Each fresh copy also announces the simulator once on stderr (a `Once` that only a fresh,
//! zeroed copy runs again): the test captures stderr during the rounds and counts the
//! announcements, one per round.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use test_support::fork;

mod dlopen_support;

use dlopen_support::{build_fixture, is_mapped, maps, round};

/// Loads, dispatches and unloads.
const ROUNDS: usize = 100;
/// Resident memory may grow this much over the rounds after the first (allocator caches,
/// pages touched once). The simulator's decoder tables used to be built on the heap by every
/// copy and leaked at unload: 27 KiB a round, 2.6 MiB over the rounds.
const RESIDENT_GROWTH_BOUND_KIB: u64 = 1024;
/// What every fresh copy of aqueduct says once when it picks the simulator.
const ANNOUNCEMENT: &str = "aqueduct: using the simulator";

/// What the process holds, counted from `/proc/self`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Footprint {
    fds: usize,
    maps: usize,
    threads: usize,
}

fn footprint() -> Footprint {
    let count = |dir| std::fs::read_dir(dir).unwrap().count();
    Footprint {
        fds: count("/proc/self/fd"),
        maps: maps().lines().count(),
        threads: count("/proc/self/task"),
    }
}

/// Resident memory in KiB (statm counts pages; 4 KiB here).
fn resident_kib() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    statm
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 4
}

/// Standard error (fd 2, which the fixture writes to directly) sent to a file until dropped;
/// then restored, and on a panic the captured text is copied back so nothing is hidden.
struct StderrCapture {
    file: File,
    saved: i32,
}

impl StderrCapture {
    fn start() -> Self {
        let file = tempfile();
        // SAFETY: plain fd calls on fds this process owns (2, and the file's); `saved` is a
        // fresh duplicate that `finish`/`drop` puts back and closes.
        let saved = unsafe { libc::dup(2) };
        assert!(saved >= 0, "dup(2)");
        // SAFETY: as above.
        assert!(unsafe { libc::dup2(file.as_raw_fd(), 2) } >= 0, "dup2");
        Self { file, saved }
    }

    fn restore(&mut self) {
        if self.saved >= 0 {
            // SAFETY: `saved` is our duplicate of the original fd 2.
            unsafe {
                libc::dup2(self.saved, 2);
                libc::close(self.saved);
            }
            self.saved = -1;
        }
    }

    /// Restore stderr and return what was written to it.
    fn finish(mut self) -> String {
        self.restore();
        let mut text = String::new();
        self.file.rewind().unwrap();
        self.file.read_to_string(&mut text).unwrap();
        text
    }
}

impl Drop for StderrCapture {
    fn drop(&mut self) {
        if self.saved >= 0 {
            self.restore();
            let mut text = String::new();
            let _ = self.file.rewind();
            let _ = self.file.read_to_string(&mut text);
            let _ = std::io::stderr().write_all(text.as_bytes());
        }
    }
}

/// An unnamed temporary file (`O_TMPFILE`), gone when closed.
fn tempfile() -> File {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_TMPFILE)
        .open(std::env::temp_dir())
        .unwrap()
}

/// Fork once: the `pthread_atfork` handlers every copy registered (aqueduct's fork epoch, the
/// simulator's fork gate) must have left with it, or the fork would call into unmapped code
/// (glibc drops an object's handlers when it unloads it: they are registered with its
/// `__dso_handle`). The child does nothing but report; a crash or hang in it fails the test.
fn assert_fork_survives() {
    fork::assert_child_passes(Duration::from_secs(60), || Ok(()));
}

#[test]
fn a_plugin_embedding_aqueduct_is_loaded_used_and_unloaded_a_hundred_times() {
    // The fixture opens the default backend. This test is about the built-in simulator,
    // whose state dies with each copy (on the real kernel path each fresh copy takes over the
    // binding the unloaded one left, which `tests/dlopen_adopt.rs` proves), so it asks for the
    // simulator whatever this machine has.
    // SAFETY: nothing else in the process reads or writes the environment meanwhile: this
    // binary has this one test, and no fixture is loaded yet.
    unsafe { std::env::set_var(aqueduct::backend::BACKEND_ENV, "sim") };
    assert_eq!(
        aqueduct::backend::choose().ok(),
        Some(aqueduct::backend::BackendChoice::Simulator)
    );
    let library = build_fixture();
    assert!(!is_mapped(&library));
    let stderr = StderrCapture::start();
    let baseline = footprint();
    // The first round may leave what the process keeps once: glibc's cached thread stack and
    // the malloc arena of the command-processor threads.
    round(&library, 0);
    let warm = footprint();
    let warm_kib = resident_kib();
    assert_eq!(
        warm.threads, baseline.threads,
        "threads after the first round"
    );
    assert_eq!(warm.fds, baseline.fds, "open files after the first round");
    let started = Instant::now();
    for i in 1..ROUNDS {
        round(&library, i);
        let now = footprint();
        assert_eq!(now.threads, baseline.threads, "threads after round {i}");
        assert_eq!(now.fds, warm.fds, "open files after round {i}");
        assert_eq!(now.maps, warm.maps, "mappings after round {i}");
    }
    let elapsed = started.elapsed();
    let end_kib = resident_kib();
    assert_fork_survives();
    let said = stderr.finish();
    let announcements = said.lines().filter(|l| l.starts_with(ANNOUNCEMENT)).count();
    for line in said.lines().filter(|l| !l.starts_with(ANNOUNCEMENT)) {
        eprintln!("the fixture said: {line}");
    }
    eprintln!(
        "{} rounds of dlopen → open → dispatch → shutdown → dlclose in {elapsed:?} ({:?} \
         each); baseline {baseline:?}, after the first round {warm:?}, at the end {:?}; \
         resident memory {warm_kib} KiB after the first round, {end_kib} KiB at the end",
        ROUNDS - 1,
        elapsed / (ROUNDS - 1) as u32,
        footprint()
    );
    assert!(
        end_kib <= warm_kib + RESIDENT_GROWTH_BOUND_KIB,
        "resident memory grew by {} KiB over {} rounds",
        end_kib.saturating_sub(warm_kib),
        ROUNDS - 1
    );
    assert_eq!(
        announcements, ROUNDS,
        "every round must run a fresh copy that announces the simulator once"
    );
}
