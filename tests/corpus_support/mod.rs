//! The corpus checks of `tests/kernels/checks/` through the safe API: the same interface as
//! the simulator's `sim/tests/shader_support` (a `Gpu` per target that loads code objects,
//! makes buffers and runs kernels), but every load is `Device::load_code_object` and every run
//! a `Queue::launch` (kernarg builder, hidden arguments, scratch, completion signal) on a
//! small simulated machine.

#![allow(dead_code, reason = "each check file uses a different part")]

use std::sync::Arc;
use std::time::Duration;

use aqueduct::kernarg::{Arg as KernelArg, Geometry};
use aqueduct::loader::LoadedImage;
use aqueduct::sim::{Machine, MachineConfig};
use aqueduct::{Buffer as DeviceBuffer, Device, Executable, GpuAgent, MemoryLocation, Queue};
use aqueduct::{QueueOptions, kernarg::ArgKind};

/// How the including suite's runs reach the GPU (its crate root sets `LAUNCH_PATH`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchPath {
    /// `Queue::launch`, then a wait on the launch.
    Launch,
    /// `Queue::prepare` with placeholder values of the same kinds (null pointers, zero
    /// scalars), then one `PreparedLaunch::issue` with the real values, then a wait: the
    /// results prove the values come from the issue.
    Prepared,
}

/// How long one kernel of the corpus may take on the simulator before the check fails.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// The simulated targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Gfx90a,
    Gfx942,
    /// The Radeon RX 7900 XTX preset: wave32 builds on the GFX11 shader core.
    Gfx1100,
    /// The same preset running the wave64 builds of the gfx1100 corpus
    /// (`bin/gfx1100/<kernel>.w64.co5`, `.w64.co6`).
    Gfx1100Wave64,
}

/// The code objects of a kernel marked as not built for the suite's targets (see
/// [`crate::NOT_BUILT`]): a check that loads one ends without running.
struct NotBuilt;

/// The GFX9 targets (the including suite's `TARGETS` names those it runs).
pub const GFX9_TARGETS: [Target; 2] = [Target::Gfx90a, Target::Gfx942];

/// The targets the including suite runs.
pub(crate) use crate::TARGETS;

thread_local! {
    /// Code objects loaded by the running check (for the known-gaps accounting).
    static LOADED: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Run one check's body for one build, skipping it if it loads a kernel the corpus does not
/// build for the suite's targets ([`crate::NOT_BUILT`]), and holding the suite's known gaps (`crate::KNOWN_GAPS`:
/// a kernel, or one code object such as `f32_ops.co6`, and why) to account: a check that fails on a code object of a listed kernel is
/// expected to, and one that passes on it fails the test, so the list cannot go stale.
fn with_known_gaps(build: &str, body: impl FnOnce()) {
    LOADED.with_borrow_mut(Vec::clear);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    let loaded = LOADED.with_borrow_mut(std::mem::take);
    if result.as_ref().err().is_some_and(|p| p.is::<NotBuilt>()) {
        return;
    }
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
        _ => {}
    }
}

/// A device buffer with the typed helpers the checks use.
#[derive(Clone)]
pub struct Buffer {
    pub va: u64,
    pub len: usize,
    memory: DeviceBuffer,
}

impl Buffer {
    pub fn write(&self, at: usize, data: &[u8]) {
        self.memory.write(at, data).expect("buffer write");
    }

    pub fn read(&self, at: usize, out: &mut [u8]) {
        self.memory.read(at, out).expect("buffer read");
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.memory.to_vec().expect("buffer read")
    }

    pub fn write_u32s(&self, v: &[u32]) {
        self.memory.write(0, v).expect("buffer write");
    }

    pub fn write_u64s(&self, v: &[u64]) {
        self.memory.write(0, v).expect("buffer write");
    }

    pub fn write_f32s(&self, v: &[f32]) {
        self.memory.write(0, v).expect("buffer write");
    }

    pub fn write_f64s(&self, v: &[f64]) {
        self.memory.write(0, v).expect("buffer write");
    }

    pub fn u32s(&self) -> Vec<u32> {
        self.memory.to_vec().expect("buffer read")
    }

    pub fn u64s(&self) -> Vec<u64> {
        self.memory.to_vec().expect("buffer read")
    }

    pub fn fill(&self, byte: u8) {
        self.memory.fill(byte).expect("buffer fill");
    }
}

pub use test_support::corpus::{Arg, Opts};

/// A loaded code object.
pub struct Loaded {
    pub file: String,
    pub image: LoadedImage,
    executable: Executable,
}

/// One simulated GPU of a target, opened through the safe API, with one queue.
pub struct Gpu {
    pub target: Target,
    _machine: Machine,
    device: Device,
    agent: GpuAgent,
    queue: Queue,
}

impl Gpu {
    pub fn new(target: Target) -> Self {
        // Eight CUs: enough for the corpus' small grids, little scratch to allocate.
        let config = match target {
            Target::Gfx90a => MachineConfig::mi210(),
            Target::Gfx942 => MachineConfig::mi300x(),
            Target::Gfx1100 | Target::Gfx1100Wave64 => MachineConfig::rx7900xtx(),
        }
        .with_compute_units(8)
        .with_vram(1 << 30);
        let machine = Machine::new(config).expect("simulated machine");
        let device = Device::open_on(Arc::new(machine.clone())).expect("device");
        let agent = device.gpus().expect("gpus")[0].clone();
        let queue = device
            .create_queue(&agent, &QueueOptions::default())
            .expect("queue");
        Self {
            target,
            _machine: machine,
            device,
            agent,
            queue,
        }
    }

    /// The simulator's shader core has its own worker count; launches take what the
    /// machine has.
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
        let memory = self
            .device
            .alloc(&self.agent, MemoryLocation::Device, len.max(1))
            .expect("device memory");
        memory.fill(0).expect("zeroed");
        Buffer {
            va: memory.gpu_address(),
            len,
            memory,
        }
    }

    pub fn buffer_u32(&self, v: &[u32]) -> Buffer {
        let b = self.buffer(v.len() * 4);
        b.write_u32s(v);
        b
    }

    /// Load `bin/<target>/<file>` with `Device::load_code_object`.
    pub fn load(&self, file: &str) -> Loaded {
        LOADED.with_borrow_mut(|loaded| loaded.push(file.to_owned()));
        let path = kernels_bin().join(self.dir()).join(file);
        let kernel = file.split('.').next().unwrap_or(file);
        if let Some((_, why)) = crate::NOT_BUILT.iter().find(|(k, _)| *k == kernel) {
            assert!(
                !path.exists(),
                "{}: {kernel} is listed as not built ({why}) but {} exists: \
                 remove it from NOT_BUILT",
                self.dir(),
                path.display()
            );
            // Not a failure: nothing to run (resume_unwind skips the panic message).
            std::panic::resume_unwind(Box::new(NotBuilt));
        }
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let executable = self
            .device
            .load_code_object(&self.agent, &bytes)
            .unwrap_or_else(|e| panic!("{} {file}: {e}", self.dir()));
        Loaded {
            file: file.to_owned(),
            image: executable.image().clone(),
            executable,
        }
    }

    /// Launch a kernel that must complete; a failure panics naming the target, the code
    /// object and the kernel.
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

    /// [`Gpu::run`] with [`Opts`].
    pub fn run_opts(
        &self,
        loaded: &Loaded,
        name: &str,
        grid: [u32; 3],
        workgroup: [u32; 3],
        args: &[Arg],
        opts: Opts,
    ) {
        let context = || format!("{} {} {name}", self.dir(), loaded.file);
        let kernel = loaded
            .executable
            .kernel(name)
            .unwrap_or_else(|e| panic!("{}: {e}", context()));
        let explicit = kernel.layout.explicit_args();
        assert_eq!(explicit.len(), args.len(), "{}: argument count", context());
        let values: Vec<KernelArg<'_>> = explicit
            .iter()
            .zip(args)
            .map(|(slot, arg)| match (slot.kind(), *arg) {
                (ArgKind::Local { .. }, Arg::Lds) => KernelArg::local(opts.dynamic_lds),
                (_, Arg::Ptr(v)) if matches!(slot.kind(), ArgKind::Pointer(_)) => KernelArg::ptr(v),
                (_, Arg::Ptr(v) | Arg::U64(v)) => sized(slot.size(), v),
                (_, Arg::I64(v)) => sized(slot.size(), v as u64),
                (_, Arg::U32(v)) => sized(slot.size(), u64::from(v)),
                (_, Arg::I32(v)) => sized(slot.size(), u64::from(v as u32)),
                (_, Arg::F32(v)) => KernelArg::f32(v),
                (kind, v) => panic!("{}: {v:?} for {kind:?}", context()),
            })
            .collect();
        let dims = if grid[2] > 1 {
            3
        } else if grid[1] > 1 {
            2
        } else {
            1
        };
        let geometry = match dims {
            1 => Geometry::d1(grid[0], workgroup[0]),
            2 => Geometry::d2([grid[0], grid[1]], [workgroup[0], workgroup[1]]),
            _ => Geometry::d3(grid, workgroup),
        };
        match crate::LAUNCH_PATH {
            LaunchPath::Launch => self
                .queue
                .launch(&kernel, &geometry, &values)
                .and_then(|launch| launch.wait(Some(RUN_TIMEOUT)))
                .map(drop),
            LaunchPath::Prepared => {
                let zeros = [0u8; 64];
                let placeholders: Vec<KernelArg<'_>> = values
                    .iter()
                    .map(|value| match value {
                        KernelArg::Pointer(_) | KernelArg::Memory(_) => KernelArg::ptr(0),
                        KernelArg::Local(bytes) => KernelArg::local(*bytes),
                        other => KernelArg::bytes(&zeros[..other.size().min(64)]),
                    })
                    .collect();
                self.queue
                    .prepare(&kernel, &geometry, &placeholders)
                    .and_then(|mut prepared| {
                        let issued = prepared.issue(&values)?;
                        prepared.wait(issued, Some(RUN_TIMEOUT))
                    })
            }
        }
        .unwrap_or_else(|e| panic!("{}: {e}", context()));
    }
}

/// A by-value integer argument of `size` bytes (the low bytes of `value`).
fn sized(size: u32, value: u64) -> KernelArg<'static> {
    match size {
        1 => KernelArg::u8(value as u8),
        2 => KernelArg::u16(value as u16),
        4 => KernelArg::u32(value as u32),
        _ => KernelArg::u64(value),
    }
}

/// Where the committed test code objects are.
pub fn kernels_bin() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/bin")
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

/// Run `f` for every (target, code object version) pair.
pub fn for_each_build(mut f: impl FnMut(&Gpu, &str)) {
    test_support::corpus::for_each_build(crate::TARGETS, |gpu: &Gpu, v| {
        with_known_gaps(&format!("{} {v}", gpu.dir()), || f(gpu, v));
    });
}

/// Run `f` for every (target, code object version) pair `kernel` is built for: V5 and V6
/// always, V4 where it is built (gfx90a, some kernels).
pub fn for_each_built(kernel: &str, mut f: impl FnMut(&Gpu, &str)) {
    test_support::corpus::for_each_built(&kernels_bin(), crate::TARGETS, kernel, |gpu: &Gpu, v| {
        with_known_gaps(&format!("{} {v}", gpu.dir()), || f(gpu, v));
    });
}

/// Deterministic test inputs, the same as the simulator suite's.
#[allow(unused_imports, reason = "not every test binary draws random inputs")]
pub use test_support::rng::Rng;
