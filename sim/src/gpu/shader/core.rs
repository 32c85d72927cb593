//! [`Gfx9ShaderCore`] and [`Gfx11ShaderCore`]: the [`ShaderCore`]s the command processor hands
//! dispatches to, one per ISA generation, over one [`Interpreter`]. Workgroups are distributed
//! over a pool of worker threads (scoped to the dispatch, so they borrow the VM, the interrupt
//! sink and the abort flag); each worker runs whole workgroups. GFX11 code is decoded by its
//! own decoder and lowered to the instructions the interpreter runs
//! ([`crate::gpu::shader::gfx11::lower`]); the cores differ in what code they accept.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::gpu::dispatch::{
    DispatchError, DispatchRequest, DispatchStats, InterruptSink, RegisterDispatch, ShaderCore,
};
use crate::gpu::shader::exec::{Apertures, Shared};
use crate::gpu::shader::launch::Launch;
use crate::gpu::shader::memory::DeviceMemory;
use crate::gpu::shader::program::CodeCache;
use crate::gpu::shader::workgroup::Worker;
use crate::gpu::target::GfxTarget;
use crate::gpu::vm::GpuVm;

/// The machinery both shader cores share: worker threads, the decode cache, the counters.
#[derive(Debug)]
pub struct Interpreter {
    workers: usize,
    code: CodeCache,
    slices_run: AtomicU64,
}

/// A GFX9 (gfx90a/gfx942) wave64 shader core that executes kernels' machine code.
#[derive(Debug, Default)]
pub struct Gfx9ShaderCore(Interpreter);

/// A GFX11 (gfx1100) shader core, wave32 and wave64, that executes kernels' machine code.
#[derive(Debug, Default)]
pub struct Gfx11ShaderCore(Interpreter);

impl Gfx9ShaderCore {
    /// A shader core running workgroups on `workers` threads (0: one per available CPU).
    pub fn new(workers: usize) -> Self {
        Self(Interpreter::new(workers))
    }
}

impl Gfx11ShaderCore {
    /// A shader core running workgroups on `workers` threads (0: one per available CPU).
    pub fn new(workers: usize) -> Self {
        Self(Interpreter::new(workers))
    }
}

impl std::ops::Deref for Gfx9ShaderCore {
    type Target = Interpreter;
    fn deref(&self) -> &Interpreter {
        &self.0
    }
}

impl std::ops::Deref for Gfx11ShaderCore {
    type Target = Interpreter;
    fn deref(&self) -> &Interpreter {
        &self.0
    }
}

thread_local! {
    /// The worker of the last dispatch this thread ran (a command processor's thread runs
    /// every dispatch of its queue), kept for the next: a wave's vector file is 136 KiB, and
    /// allocating (zeroing) it again for every dispatch cost more than a whole empty kernel.
    /// Registers keep stale values from earlier waves, as on hardware (see
    /// [`Wave::reset`](crate::gpu::shader::wave::Wave::reset)). Kept per thread, not in the
    /// core, so the memory goes with the queue's thread (glibc frees it when the thread
    /// exits, before the processor is joined) rather than outliving every queue.
    static SPARE_WORKER: std::cell::RefCell<Option<Worker>> = const { std::cell::RefCell::new(None) };
}

impl Interpreter {
    /// An interpreter running workgroups on `workers` threads (0: one per available CPU).
    pub fn new(workers: usize) -> Self {
        let workers = if workers == 0 {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        } else {
            workers
        };
        Self {
            workers,
            code: CodeCache::new(),
            slices_run: AtomicU64::new(0),
        }
    }

    /// Wave time slices this core has run, over all dispatches: a slice is a wave running
    /// until it ends, waits at a barrier, faults or yields (after a bounded number of
    /// instructions at a backward branch). A kernel that loops forever keeps this growing, so
    /// a test can wait for it instead of sleeping and hoping the kernel has started.
    pub fn slices_run(&self) -> u64 {
        self.slices_run.load(Ordering::Relaxed)
    }

    /// The number of worker threads.
    pub fn workers(&self) -> usize {
        self.workers
    }
}

impl Default for Interpreter {
    fn default() -> Self {
        Self::new(0)
    }
}

/// State the workers of one dispatch share.
struct Run<'a> {
    launch: Launch,
    shared: Shared<'a>,
    vm: &'a dyn GpuVm,
    next: AtomicU64,
    stop: AtomicBool,
    error: Mutex<Option<(u64, DispatchError)>>,
    waves: AtomicU64,
    instructions: AtomicU64,
}

impl Run<'_> {
    fn work(&self, worker_index: u64) {
        // Only the dispatching thread (worker 0) keeps a worker: the others are scoped to
        // this dispatch.
        let keep = worker_index == 0;
        let mut worker = if keep {
            SPARE_WORKER
                .with_borrow_mut(Option::take)
                .unwrap_or_default()
        } else {
            Worker::new()
        };
        worker.waves_run = 0;
        worker.instructions = 0;
        let mut mem = DeviceMemory::new(self.vm);
        let first_slot = worker_index * u64::from(self.launch.waves_per_group);
        let total = self.launch.total_groups();
        let mut program =
            match self
                .shared
                .code
                .program_for(self.vm, self.launch.entry, self.launch.target)
            {
                Ok(p) => p,
                Err(fault) => {
                    self.fail(0, fault.into());
                    return;
                }
            };
        loop {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            if self.shared.abort.load(Ordering::Relaxed) {
                self.fail(0, DispatchError::Aborted);
                break;
            }
            let index = self.next.fetch_add(1, Ordering::Relaxed);
            if index >= total {
                break;
            }
            if let Err(e) = worker.run_group(
                &self.launch,
                index,
                first_slot,
                &self.shared,
                &mut mem,
                &mut program,
            ) {
                self.fail(index, e);
                break;
            }
        }
        self.waves.fetch_add(worker.waves_run, Ordering::Relaxed);
        self.instructions
            .fetch_add(worker.instructions, Ordering::Relaxed);
        if keep {
            SPARE_WORKER.with_borrow_mut(|spare| *spare = Some(worker));
        }
    }

    /// Record an error (the one of the lowest workgroup wins) and stop the other workers.
    fn fail(&self, index: u64, e: DispatchError) {
        let mut slot = self
            .error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.as_ref().is_none_or(|(i, _)| index < *i) {
            *slot = Some((index, e));
        }
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// What a core answers a dispatch of another ISA's code: an illegal instruction at the
/// kernel descriptor (the entry is not read: nothing of that code is executed), never a
/// GFX9 reading of GFX11 machine code or the reverse.
fn foreign_code(pc: u64, target: GfxTarget, core: &str) -> DispatchError {
    DispatchError::IllegalInstruction {
        pc,
        encoding: Vec::new(),
        mnemonic: format!(
            "{} code: the {core} shader core executes {core} code only",
            target.name()
        ),
    }
}

impl ShaderCore for Gfx9ShaderCore {
    fn dispatch(
        &self,
        request: &DispatchRequest,
        vm: &dyn GpuVm,
        interrupts: &dyn InterruptSink,
        abort: &AtomicBool,
    ) -> Result<DispatchStats, DispatchError> {
        if !request.target.is_gfx9() {
            return Err(foreign_code(
                request.packet.kernel_object,
                request.target,
                "GFX9",
            ));
        }
        self.0.run(request, vm, interrupts, abort)
    }

    fn dispatch_registers(
        &self,
        request: &RegisterDispatch,
        vm: &dyn GpuVm,
        interrupts: &dyn InterruptSink,
        abort: &AtomicBool,
    ) -> Result<DispatchStats, DispatchError> {
        if !request.target.is_gfx9() {
            return Err(foreign_code(request.entry, request.target, "GFX9"));
        }
        self.0
            .run_launch(Launch::from_registers(request)?, vm, interrupts, abort)
    }
}

impl ShaderCore for Gfx11ShaderCore {
    fn dispatch(
        &self,
        request: &DispatchRequest,
        vm: &dyn GpuVm,
        interrupts: &dyn InterruptSink,
        abort: &AtomicBool,
    ) -> Result<DispatchStats, DispatchError> {
        if request.target != GfxTarget::Gfx1100 {
            return Err(foreign_code(
                request.packet.kernel_object,
                request.target,
                "GFX11",
            ));
        }
        self.0.run(request, vm, interrupts, abort)
    }

    fn dispatch_registers(
        &self,
        request: &RegisterDispatch,
        vm: &dyn GpuVm,
        interrupts: &dyn InterruptSink,
        abort: &AtomicBool,
    ) -> Result<DispatchStats, DispatchError> {
        if request.target != GfxTarget::Gfx1100 {
            return Err(foreign_code(request.entry, request.target, "GFX11"));
        }
        self.0
            .run_launch(Launch::from_registers(request)?, vm, interrupts, abort)
    }
}

impl Interpreter {
    /// Run every workgroup of `request` (see [`ShaderCore::dispatch`]).
    fn run(
        &self,
        request: &DispatchRequest,
        vm: &dyn GpuVm,
        interrupts: &dyn InterruptSink,
        abort: &AtomicBool,
    ) -> Result<DispatchStats, DispatchError> {
        let mut mem = DeviceMemory::new(vm);
        let launch = Launch::new(request, &mut mem)?;
        self.run_launch(launch, vm, interrupts, abort)
    }

    /// Run every workgroup of `launch` (however the CP set it up).
    fn run_launch(
        &self,
        launch: Launch,
        vm: &dyn GpuVm,
        interrupts: &dyn InterruptSink,
        abort: &AtomicBool,
    ) -> Result<DispatchStats, DispatchError> {
        let total = launch.total_groups();
        if total == 0 {
            return Ok(DispatchStats::default());
        }
        let mut threads = (self.workers as u64).min(total).max(1);
        if launch.scratch_wave_bytes != 0 {
            let per_group = u64::from(launch.waves_per_group);
            if launch.scratch_slots < per_group {
                return Err(DispatchError::InvalidCodeObject(format!(
                    "the queue's scratch holds {} waves, a workgroup needs {per_group}",
                    launch.scratch_slots
                )));
            }
            threads = threads.min(launch.scratch_slots / per_group);
        }
        let run = Run {
            shared: Shared {
                target: launch.target,
                interrupts,
                abort,
                apertures: Apertures::GFX9,
                code: &self.code,
                slices_run: &self.slices_run,
            },
            launch,
            vm,
            next: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
            waves: AtomicU64::new(0),
            instructions: AtomicU64::new(0),
        };
        if threads == 1 {
            run.work(0);
        } else {
            std::thread::scope(|scope| {
                for t in 1..threads {
                    let run = &run;
                    scope.spawn(move || run.work(t));
                }
                run.work(0);
            });
        }
        if let Some((_, e)) = run
            .error
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
        {
            return Err(e);
        }
        Ok(DispatchStats {
            waves: run.waves.into_inner(),
            instructions: run.instructions.into_inner(),
        })
    }
}
