//! The corpus checks of `tests/kernels/checks/` driven through the `aqueduct` binary, as a user
//! of the command line would run them: the same interface as `tests/corpus_support` and
//! `sim/tests/shader_support` (a `Gpu` per target that loads code objects, makes buffers and
//! runs kernels), but buffers live on the host, at made-up distinct addresses that stand for
//! them in `Arg::Ptr`, and every run writes each buffer argument to a file, calls
//! `aqueduct run FILE KERNEL --grid .. --block .. --arg buf=PATH .. --out N=PATH .. --json` on
//! the simulator (`AQUEDUCT_SIM_MACHINE` mi210 for gfx90a, mi300x for gfx942, rx7900xtx for
//! gfx1100's wave32 and wave64 builds) and reads every buffer back from its `--out` file.
//!
//! Checks the command line cannot express are listed, with the reason, in
//! [`inexpressible::INEXPRESSIBLE`]; a pass that reaches one is reported on stderr as skipped,
//! and the checks that skip are listed exactly in [`inexpressible::SKIPPED_CHECKS`].

#![allow(dead_code, reason = "each check file uses a different part")]

mod inexpressible;

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::rc::Rc;

#[allow(
    unused_imports,
    reason = "run_corpus.rs checks the lists; run_corpus_rdna3.rs does not"
)]
pub use inexpressible::{INEXPRESSIBLE, NOT_IN_THE_SHARED_CHECKS, SKIPPED_CHECKS};
pub use test_support::corpus::{Arg, Opts};
/// Deterministic test inputs, the same as the other suites'.
pub use test_support::rng::Rng;

/// How long one kernel may take before `aqueduct run` gives up (`--timeout`).
const RUN_TIMEOUT_SECONDS: &str = "120";

/// The simulated targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Gfx90a,
    Gfx942,
    /// The Radeon RX 7900 XTX preset running gfx1100's (wave32) builds.
    Gfx1100,
    /// The same preset running gfx1100's wave64 builds (`<kernel>.w64.co5`, `.w64.co6`).
    Gfx1100Wave64,
}

/// The targets the including suite runs (`run_corpus.rs`: gfx90a and gfx942;
/// `run_corpus_rdna3.rs`: gfx1100's wave32 and wave64 builds).
pub(crate) use crate::TARGETS;

thread_local! {
    /// Code objects loaded by the running check (for the known-gaps accounting).
    static LOADED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Run one pass of a check holding the suite's known gaps (`crate::KNOWN_GAPS`: a kernel, or
/// one code object such as `f32_ops.co6`, and why) to account, as `tests/corpus_support`
/// does: a pass that fails on a code object of a listed kernel is expected to, and one that
/// passes on it fails the test, so the list cannot go stale.
fn with_known_gaps(build: &str, pass: impl FnOnce()) {
    LOADED.with_borrow_mut(Vec::clear);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(pass));
    let loaded = LOADED.with_borrow_mut(std::mem::take);
    let gap = loaded.iter().find_map(|file| {
        let kernel = file.split('.').next().unwrap_or(file);
        crate::KNOWN_GAPS
            .iter()
            .find(|(k, _)| *k == kernel || *k == file)
    });
    match (result, gap) {
        (Ok(()), Some((kernel, why))) => panic!(
            "{build}: {kernel} is listed as a known gap ({why}) but its check passes: \
             remove it from KNOWN_GAPS"
        ),
        (Err(panic), None) => std::panic::resume_unwind(panic),
        (Err(_), Some((kernel, why))) => {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("known gap: {build}: {kernel}: {why}\n").as_bytes(),
            );
        }
        (Ok(()), None) => {}
    }
}

/// Kernels tests/kernels/build.sh does not build for a target directory, and why: a check
/// that loads one there ends without running (said on stderr); one that finds it built fails.
pub const NOT_BUILT: &[(&str, &str, &str)] = &[(
    "gfx1100",
    "preload",
    "kernarg preloading exists only on gfx90a, gfx94x and gfx950",
)];

/// The unwinding payload of a check that loaded a kernel of [`NOT_BUILT`].
struct NotBuilt(String);

/// The first made-up device address; buffers follow at distinct, page-aligned addresses with
/// a gap between them, so a pointer into one is never the start of another.
const FIRST_ADDRESS: u64 = 0x7e00_0000_0000;

/// A host-side buffer standing for a device buffer the binary will allocate.
#[derive(Clone)]
pub struct Buffer {
    /// The made-up address that names this buffer in `Arg::Ptr`.
    pub va: u64,
    pub len: usize,
    bytes: Rc<RefCell<Vec<u8>>>,
}

impl Buffer {
    pub fn write(&self, at: usize, data: &[u8]) {
        self.bytes.borrow_mut()[at..at + data.len()].copy_from_slice(data);
    }

    pub fn read(&self, at: usize, out: &mut [u8]) {
        out.copy_from_slice(&self.bytes.borrow()[at..at + out.len()]);
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.bytes.borrow().clone()
    }

    pub fn write_u32s(&self, v: &[u32]) {
        self.write(0, &words(v.iter().map(|x| x.to_le_bytes())));
    }

    pub fn write_u64s(&self, v: &[u64]) {
        self.write(0, &words(v.iter().map(|x| x.to_le_bytes())));
    }

    pub fn write_f32s(&self, v: &[f32]) {
        self.write(0, &words(v.iter().map(|x| x.to_le_bytes())));
    }

    pub fn write_f64s(&self, v: &[f64]) {
        self.write(0, &words(v.iter().map(|x| x.to_le_bytes())));
    }

    pub fn u32s(&self) -> Vec<u32> {
        self.bytes
            .borrow()
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes")))
            .collect()
    }

    pub fn u64s(&self) -> Vec<u64> {
        self.bytes
            .borrow()
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
            .collect()
    }

    pub fn fill(&self, byte: u8) {
        self.bytes.borrow_mut().fill(byte);
    }
}

fn words<const N: usize>(values: impl Iterator<Item = [u8; N]>) -> Vec<u8> {
    values.flatten().collect()
}

/// A code object the binary will load (by path: every run loads it afresh).
pub struct Loaded {
    pub file: String,
    pub path: PathBuf,
    /// What the checks read from a loaded image: here only a gate (see [`ImageAddresses`]).
    pub image: ImageAddresses,
}

/// Stands for the loaded image of the other suites. Its addresses exist only inside the
/// `aqueduct` process that loaded it, so asking for one skips the check.
pub struct ImageAddresses {
    kernel: String,
}

/// A program variable's device address, as the other suites' images report it.
pub struct Variable {
    pub address: u64,
}

impl ImageAddresses {
    /// Never returns: the check that asks is skipped.
    pub fn variable(&self, _name: &str) -> Option<Variable> {
        inexpressible::skip_if_inexpressible(&self.kernel);
        panic!(
            "{}: the check reads a device address the command line never shows; add the \
             kernel to INEXPRESSIBLE",
            self.kernel
        );
    }
}

/// A simulated GPU of one target as the command line sees it: a machine preset and a
/// directory of argument files.
pub struct Gpu {
    pub target: Target,
    buffers: RefCell<Vec<Buffer>>,
    next_address: Cell<u64>,
    scratch: Scratch,
}

impl Gpu {
    pub fn new(target: Target) -> Self {
        Self {
            target,
            buffers: RefCell::new(Vec::new()),
            next_address: Cell::new(FIRST_ADDRESS),
            scratch: Scratch::new(target),
        }
    }

    /// The binary's simulated machine has its own shader-core workers.
    pub fn with_workers(target: Target, _workers: usize) -> Self {
        Self::new(target)
    }

    pub fn dir(&self) -> &'static str {
        match self.target {
            Target::Gfx90a => "gfx90a",
            Target::Gfx942 => "gfx942",
            Target::Gfx1100 | Target::Gfx1100Wave64 => "gfx1100",
        }
    }

    /// The `AQUEDUCT_SIM_MACHINE` preset with this target.
    fn machine(&self) -> &'static str {
        match self.target {
            Target::Gfx90a => "mi210",
            Target::Gfx942 => "mi300x",
            Target::Gfx1100 | Target::Gfx1100Wave64 => "rx7900xtx",
        }
    }

    /// The lanes of a wave of the builds this GPU runs.
    pub fn wave_size(&self) -> usize {
        match self.target {
            Target::Gfx90a | Target::Gfx942 | Target::Gfx1100Wave64 => 64,
            Target::Gfx1100 => 32,
        }
    }

    /// The code-object suffixes of the builds this GPU runs (see [`Target`]).
    pub fn versions(&self) -> &'static [&'static str] {
        match self.target {
            Target::Gfx1100Wave64 => &["w64.co5", "w64.co6"],
            _ => &test_support::corpus::VERSIONS,
        }
    }

    pub fn buffer(&self, len: usize) -> Buffer {
        let va = self.next_address.get();
        self.next_address
            .set(va + (len as u64).next_multiple_of(4096) + 4096);
        let buffer = Buffer {
            va,
            len,
            bytes: Rc::new(RefCell::new(vec![0; len])),
        };
        self.buffers.borrow_mut().push(buffer.clone());
        buffer
    }

    pub fn buffer_u32(&self, v: &[u32]) -> Buffer {
        let b = self.buffer(v.len() * 4);
        b.write_u32s(v);
        b
    }

    /// `bin/<target>/<file>`, which every run hands to the binary.
    pub fn load(&self, file: &str) -> Loaded {
        LOADED.with_borrow_mut(|loaded| loaded.push(file.to_owned()));
        let path = kernels_bin().join(self.dir()).join(file);
        let kernel = file.split('.').next().unwrap_or(file).to_owned();
        if let Some((_, _, why)) = NOT_BUILT
            .iter()
            .find(|(dir, k, _)| *dir == self.dir() && *k == kernel)
        {
            assert!(
                !path.exists(),
                "{} exists, yet NOT_BUILT lists it ({why}): take it off the list",
                path.display()
            );
            std::panic::resume_unwind(Box::new(NotBuilt(format!(
                "{}/{file} is not built: {why}",
                self.dir()
            ))));
        }
        assert!(path.exists(), "{}: no such code object", path.display());
        Loaded {
            file: file.to_owned(),
            path,
            image: ImageAddresses { kernel },
        }
    }

    pub fn run(
        &self,
        loaded: &Loaded,
        kernel: &str,
        grid: [u32; 3],
        workgroup: [u32; 3],
        args: &[Arg],
    ) {
        self.run_opts(loaded, kernel, grid, workgroup, args, Opts::default());
    }

    /// One `aqueduct run`; every buffer argument goes in from a file and comes back from its
    /// `--out` file. `opts.extra_scratch` is not needed: the binary provides what the kernel
    /// declares.
    pub fn run_opts(
        &self,
        loaded: &Loaded,
        kernel: &str,
        grid: [u32; 3],
        workgroup: [u32; 3],
        args: &[Arg],
        opts: Opts,
    ) {
        inexpressible::skip_if_inexpressible(kernel);
        let context = format!("{} {} {kernel}", self.dir(), loaded.file);
        let dims = if grid[2] > 1 {
            3
        } else if grid[1] > 1 {
            2
        } else {
            1
        };
        let sizes = |v: [u32; 3]| {
            v[..dims]
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        let mut command = Command::new(env!("CARGO_BIN_EXE_aqueduct"));
        command
            .arg("run")
            .arg(&loaded.path)
            .arg(kernel)
            .args(["--grid", &sizes(grid), "--block", &sizes(workgroup)])
            .args(["--timeout", RUN_TIMEOUT_SECONDS, "--json"])
            .env("AQUEDUCT_BACKEND", "sim")
            .env("AQUEDUCT_SIM_MACHINE", self.machine());
        let mut outputs: Vec<(Buffer, PathBuf)> = Vec::new();
        for (index, arg) in args.iter().enumerate() {
            let spec = match *arg {
                Arg::Ptr(va) => {
                    let buffer = self.buffer_at(va, &context);
                    assert!(
                        outputs.iter().all(|(b, _)| b.va != va),
                        "{context}: buffer {va:#x} passed twice; the command line makes one \
                         device buffer per argument"
                    );
                    let input = self.scratch.path(&format!("arg{index}.in"));
                    let output = self.scratch.path(&format!("arg{index}.out"));
                    std::fs::write(&input, buffer.bytes()).expect("argument file");
                    command
                        .arg("--out")
                        .arg(format!("{index}={}", output.display()));
                    outputs.push((buffer, output));
                    format!("buf={}", input.display())
                }
                Arg::U32(v) => format!("u32={v}"),
                Arg::I32(v) => format!("i32={v}"),
                Arg::U64(v) => format!("u64={v}"),
                Arg::I64(v) => format!("i64={v}"),
                // `{:?}` prints the shortest text that parses back to the same float.
                Arg::F32(v) => format!("f32={v:?}"),
                Arg::Lds => format!("lds={}", opts.dynamic_lds),
            };
            command.arg("--arg").arg(spec);
        }
        let out = test_support::process::run_with_deadline(
            &mut command,
            test_support::process::DEFAULT_DEADLINE,
            &format!("aqueduct run: {context}"),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "{context}: aqueduct run failed: {stderr}"
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{context}: stdout is not JSON ({e}): {stderr}"));
        assert_eq!(report["kernel"], kernel, "{context}: {report}");
        assert!(
            report["target"]
                .as_str()
                .is_some_and(|t| t.starts_with(self.dir())),
            "{context}: ran on another target: {report}"
        );
        for (buffer, path) in outputs {
            let bytes = std::fs::read(&path)
                .unwrap_or_else(|e| panic!("{context}: {}: {e}", path.display()));
            assert_eq!(bytes.len(), buffer.len, "{context}: whole buffer written");
            buffer.write(0, &bytes);
            std::fs::remove_file(&path).expect("remove output file");
        }
    }

    /// The buffer that starts at `va`; a pointer anywhere else cannot be named on the
    /// command line.
    fn buffer_at(&self, va: u64, context: &str) -> Buffer {
        self.buffers
            .borrow()
            .iter()
            .find(|b| b.va == va)
            .cloned()
            .unwrap_or_else(|| {
                panic!(
                    "{context}: {va:#x} is not the start of a buffer (an offset or a device \
                     address); add the kernel to INEXPRESSIBLE"
                )
            })
    }
}

/// A per-`Gpu` directory for argument files, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(target: Target) -> Self {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "aqueduct-run-corpus-{}-{target:?}-{n}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        Self(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Where the committed test code objects are.
pub fn kernels_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/bin")
}

/// A 1-D grid of `n` work-items rounded up to whole workgroups of `wg`.
pub fn grid1(n: u32, wg: u32) -> [u32; 3] {
    [n.next_multiple_of(wg), 1, 1]
}

impl test_support::corpus::SuiteGpu for Gpu {
    type Target = Target;

    fn for_target(target: Target) -> Self {
        Self::new(target)
    }

    fn bin_dir(&self) -> &'static str {
        self.dir()
    }

    fn versions(&self) -> &'static [&'static str] {
        Gpu::versions(self)
    }
}

/// Run one pass of a check; a pass that loaded a kernel of [`NOT_BUILT`] ends there, said on
/// stderr past libtest's capture.
fn run_unless_not_built(context: &str, pass: impl FnOnce()) {
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(pass)) {
        match payload.downcast::<NotBuilt>() {
            Ok(why) => {
                let _ = std::io::Write::write_all(
                    &mut std::io::stderr(),
                    format!("not run: {context}: {}\n", why.0).as_bytes(),
                );
            }
            Err(other) => std::panic::resume_unwind(other),
        }
    }
}

/// Run `f` for every (target, code object version) pair, unless the check is inexpressible
/// or the kernel not built for the target (or a known gap of the suite).
pub fn for_each_build(mut f: impl FnMut(&Gpu, &str)) {
    test_support::corpus::for_each_build(TARGETS, |gpu: &Gpu, v| {
        let context = format!("{} {v}", gpu.dir());
        with_known_gaps(&context, || {
            inexpressible::run_unless_inexpressible(&context, || {
                run_unless_not_built(&context, || f(gpu, v));
            });
        });
    });
}

/// Run `f` for every (target, code object version) pair `kernel` is built for: V5 and V6
/// always, V4 where it is built (gfx90a, some kernels); unless the check is inexpressible (or
/// a known gap of the suite).
pub fn for_each_built(kernel: &str, mut f: impl FnMut(&Gpu, &str)) {
    test_support::corpus::for_each_built(&kernels_bin(), TARGETS, kernel, |gpu: &Gpu, v| {
        let context = format!("{} {v} {kernel}", gpu.dir());
        with_known_gaps(&context, || {
            inexpressible::run_unless_inexpressible(&context, || f(gpu, v));
        });
    });
}
