//! aqueduct inside a plugin on the real kernel path: the `aqueduct-dlopen-fixture` cdylib is
//! loaded, used for one dispatch, shut down and unloaded, [`ROUNDS`] times in one process,
//! over the `Linux` backend (a GPU, or the LD_PRELOAD simulator: `sim/preload/run-under.sh
//! --hardware-tests` runs this test under it with `AQUEDUCT_BACKEND=hw`).
//!
//! The kernel keeps what the first copy bound for the life of the process (kfd.md §7): the
//! KFD process, each GPU's VM bound to the first copy's render-node file (ACQUIRE_VM with
//! another file: EBUSY) and the event page (a second one: EINVAL). So every fresh copy must
//! find that binding and take it over (`kfd::binding`'s handoff): the test fails at round 1
//! if it opens the devices anew. From round 1 on, the process holds exactly the device files
//! round 0 opened (counted by what their `/proc/self/fd` links name, as the kernel shows them),
//! the same number of fds, and one binding record; every round's dispatch result is checked
//! by the fixture. A fork child inherits no record (it must bind afresh, as a new KFD
//! process). Then the program moves the render-node file to another fd number (`dup2`, close
//! the old one): the next copy still finds it (by asking the kernel which open file holds the
//! VM); and at last it closes that file: the next copy must fail with a clear error, never
//! bind a second time. One test in its own binary, so nothing else in the process moves the
//! counts.

use std::path::Path;
use std::time::Duration;

use aqueduct::backend::{BackendChoice, choose};
use test_support::{fork, hardware};

mod dlopen_support;

use dlopen_support::{build_fixture, maps, round, try_round};

/// Loads, dispatches and unloads.
const ROUNDS: usize = 10;
/// What `/proc/self/maps` shows for the page holding a binding record.
const RECORD_MAPPING: &str = "/memfd:aqueduct-binding (deleted)";

/// The device files this process holds open, by what their fd links name.
#[derive(Clone, Debug, PartialEq, Eq)]
struct DeviceFiles {
    kfd: usize,
    render: Vec<String>,
    all_fds: usize,
}

fn device_files() -> DeviceFiles {
    let mut files = DeviceFiles {
        kfd: 0,
        render: Vec::new(),
        all_fds: 0,
    };
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        files.all_fds += 1;
        // The directory's own fd is gone by the time it is read: skip what cannot be read.
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        if target == Path::new("/dev/kfd") {
            files.kfd += 1;
        } else if target.starts_with("/dev/dri/") {
            files.render.push(target.display().to_string());
        }
    }
    files.render.sort();
    files
}

/// The fd of the first render-node file this process holds.
fn render_fd() -> i32 {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        .find(|entry| {
            std::fs::read_link(entry.path()).is_ok_and(|target| target.starts_with("/dev/dri/"))
        })
        .and_then(|entry| entry.file_name().to_str()?.parse().ok())
        .expect("a render-node fd")
}

fn record_pages() -> usize {
    maps()
        .lines()
        .filter(|line| line.ends_with(RECORD_MAPPING))
        .count()
}

#[test]
fn fresh_copies_of_a_plugin_take_over_the_binding_an_unloaded_copy_left_in_the_kernel() {
    const TEST: &str = "dlopen_adopt";
    if choose().ok() != Some(BackendChoice::Hardware) {
        hardware::skip(
            TEST,
            "the default backend is not /dev/kfd (run it on a GPU, or under \
             sim/preload/run-under.sh --hardware-tests)",
        );
        return;
    }
    let library = build_fixture();
    let before = device_files();
    assert_eq!(
        record_pages(),
        0,
        "a binding record before any copy was loaded"
    );

    round(&library, 0);
    let bound = device_files();
    assert_eq!(bound.kfd, before.kfd + 1, "round 0 keeps one /dev/kfd open");
    assert!(
        bound.render.len() > before.render.len(),
        "round 0 keeps its render-node files open: {bound:?}"
    );
    assert_eq!(record_pages(), 1, "round 0 leaves one binding record");

    for i in 1..ROUNDS {
        round(&library, i);
        let now = device_files();
        assert_eq!(
            now, bound,
            "round {i}: the device files changed (a fresh copy that opens its own instead of \
             taking over its predecessor's is refused by the kernel, or leaks them)"
        );
        assert_eq!(record_pages(), 1, "round {i}: binding records");
    }
    eprintln!(
        "{ROUNDS} rounds of dlopen → open → dispatch → shutdown → dlclose on one binding: \
         {bound:?}"
    );

    // A fork child has no record to take (MADV_DONTFORK): it is another KFD process and
    // must bind afresh.
    fork::assert_child_passes(Duration::from_secs(30), || {
        let inherited = record_pages();
        if inherited == 0 {
            Ok(())
        } else {
            Err(format!(
                "the fork child inherited {inherited} binding record(s)"
            ))
        }
    });

    // The program moves the render-node file: the next copy finds it where it is now.
    let old_fd = render_fd();
    // SAFETY: plain fd calls; `old_fd` is the binding's file, which no loaded copy uses now,
    // and 900 is a number nothing else in this test holds.
    let moved = unsafe { libc::dup2(old_fd, 900) };
    assert_eq!(moved, 900, "dup2: {}", std::io::Error::last_os_error());
    // SAFETY: as above; the file stays open through fd 900.
    assert_eq!(unsafe { libc::close(old_fd) }, 0);
    round(&library, ROUNDS);
    assert!(
        std::fs::read_link("/proc/self/fd/900").is_ok_and(|t| t.starts_with("/dev/dri/")),
        "the moved render-node file was closed"
    );
    assert_eq!(device_files(), bound, "after moving the render-node file");

    // The program closes the file that holds the VM: the kernel keeps the VM bound to it, so
    // the GPU is lost to this process, and the next copy must say so.
    // SAFETY: as above.
    assert_eq!(unsafe { libc::close(900) }, 0);
    let refused = try_round(&library, ROUNDS + 1)
        .expect_err("a copy opened the GPU although its VM is bound to a closed file");
    assert!(
        refused.contains("cannot take over this process' GPU binding")
            && refused.contains("no longer open"),
        "unexpected error: {refused}"
    );
    assert_eq!(device_files().render.len(), bound.render.len() - 1);
}
