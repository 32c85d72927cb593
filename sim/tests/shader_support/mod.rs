//! Test support for the shader core: a [`GpuVm`] over memory the tests allocate, code objects
//! placed with `amdgpu-loader`, and a dispatcher that fills kernargs (explicit and hidden), the
//! dispatch packet and the scratch setup as a runtime and command processor would.

#![allow(dead_code, missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use amdgpu_loader::{CodeObject, HiddenArg, LoadedImage, NoExternals, ValueKind};
use amdgpu_sim::dispatch::{
    DispatchError, DispatchRequest, DispatchStats, InterruptSink, ScratchSetup, ShaderCore,
};
use amdgpu_sim::host_vm::{HostBuffer, HostVm};
use amdgpu_sim::shader::{Gfx9ShaderCore, Gfx11ShaderCore, Interpreter};
use amdgpu_sim::target::GfxTarget;
use amdgpu_sim::vm::MemoryFault;
use aql::packet::dispatch_setup;
use aql::{FenceScope, Header, KernelDispatchPacket, PacketType};
use zerocopy::IntoBytes;

/// A mapped test buffer: the simulator's [`HostBuffer`] with typed helpers.
#[derive(Clone)]
pub struct Buffer {
    pub va: u64,
    pub len: usize,
    memory: HostBuffer,
}

impl Buffer {
    fn new(memory: HostBuffer) -> Self {
        Self {
            va: memory.va(),
            len: memory.len(),
            memory,
        }
    }

    pub fn write(&self, at: usize, data: &[u8]) {
        self.memory.write(at, data);
    }

    pub fn read(&self, at: usize, out: &mut [u8]) {
        self.memory.read(at, out);
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.memory.to_vec()
    }

    pub fn write_u32s(&self, v: &[u32]) {
        self.write(0, v.as_bytes());
    }

    pub fn write_u64s(&self, v: &[u64]) {
        self.write(0, v.as_bytes());
    }

    pub fn write_f32s(&self, v: &[f32]) {
        self.write(0, v.as_bytes());
    }

    pub fn write_f64s(&self, v: &[f64]) {
        self.write(0, v.as_bytes());
    }

    pub fn u32s(&self) -> Vec<u32> {
        self.bytes()
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    pub fn u64s(&self) -> Vec<u64> {
        self.bytes()
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    }

    pub fn fill(&self, byte: u8) {
        self.memory.fill(byte);
    }
}

/// Records interrupts.
#[derive(Default)]
pub struct Interrupts {
    pub shader_messages: Mutex<Vec<u32>>,
}

impl InterruptSink for Interrupts {
    fn end_of_pipe(&self, _context_id: u32) {}

    fn shader_message(&self, context_id: u32) {
        self.shader_messages.lock().expect("lock").push(context_id);
    }

    fn vm_fault(&self, _fault: MemoryFault) {}
}

pub use test_support::corpus::{Arg, Opts};

/// A loaded code object.
pub struct Loaded {
    /// Its file name under `bin/<target>/` (for messages).
    pub file: String,
    pub image: LoadedImage,
    pub memory: Buffer,
}

/// A 1-D grid of `n` work-items rounded up to whole workgroups of `wg`.
pub fn grid1(n: u32, wg: u32) -> [u32; 3] {
    [n.next_multiple_of(wg), 1, 1]
}

/// Where the committed test code objects are.
pub fn kernels_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels/bin")
}

/// The shader core of a target: the GFX9 one or the GFX11 one, both over the shared
/// [`Interpreter`] (whose counters the tests read through `Deref`).
pub enum Core {
    Gfx9(Gfx9ShaderCore),
    Gfx11(Gfx11ShaderCore),
}

impl Core {
    pub fn for_target(target: GfxTarget, workers: usize) -> Self {
        if target.is_gfx9() {
            Self::Gfx9(Gfx9ShaderCore::new(workers))
        } else {
            Self::Gfx11(Gfx11ShaderCore::new(workers))
        }
    }

    pub fn dispatch(
        &self,
        request: &DispatchRequest,
        vm: &HostVm,
        interrupts: &dyn InterruptSink,
        abort: &AtomicBool,
    ) -> Result<DispatchStats, DispatchError> {
        match self {
            Self::Gfx9(core) => core.dispatch(request, vm, interrupts, abort),
            Self::Gfx11(core) => core.dispatch(request, vm, interrupts, abort),
        }
    }
}

impl std::ops::Deref for Core {
    type Target = Interpreter;
    fn deref(&self) -> &Interpreter {
        match self {
            Self::Gfx9(core) => core,
            Self::Gfx11(core) => core,
        }
    }
}

/// A simulated GPU for one target: VM, shader core, interrupt sink.
pub struct Gpu {
    pub target: GfxTarget,
    pub vm: Arc<HostVm>,
    pub core: Core,
    pub interrupts: Interrupts,
    pub abort: AtomicBool,
    /// The kernarg segment and packet of the last dispatch.
    pub last: Mutex<Option<(Buffer, KernelDispatchPacket)>>,
}

impl Gpu {
    pub fn new(target: GfxTarget) -> Self {
        Self::with_workers(target, 2)
    }

    pub fn with_workers(target: GfxTarget, workers: usize) -> Self {
        Self {
            target,
            vm: Arc::new(HostVm::new()),
            core: Core::for_target(target, workers),
            interrupts: Interrupts::default(),
            abort: AtomicBool::new(false),
            last: Mutex::new(None),
        }
    }

    pub fn dir(&self) -> &'static str {
        self.target.name()
    }

    /// The lanes of a wave of the corpus builds for this target (the compilers' defaults:
    /// 64 on GFX9, 32 on GFX11).
    pub fn wave_size(&self) -> usize {
        if self.target.is_gfx9() { 64 } else { 32 }
    }

    /// The code-object suffixes built for every corpus kernel (the same on both GFX9 targets;
    /// the checks ask each suite's `Gpu`, whose targets may differ).
    #[allow(
        clippy::unused_self,
        reason = "the checks call it on every suite's Gpu"
    )]
    pub fn versions(&self) -> &'static [&'static str] {
        &test_support::corpus::VERSIONS
    }

    /// Map `len` zeroed bytes aligned to `align` with the given GPU permissions.
    pub fn alloc(&self, len: usize, align: usize, writable: bool, executable: bool) -> Buffer {
        Buffer::new(self.vm.map(len, align, writable, executable))
    }

    pub fn buffer(&self, len: usize) -> Buffer {
        self.alloc(len, 256, true, false)
    }

    pub fn buffer_u32(&self, v: &[u32]) -> Buffer {
        let b = self.buffer(v.len() * 4);
        b.write_u32s(v);
        b
    }

    /// Load `bin/<target>/<file>` into executable memory.
    pub fn load(&self, file: &str) -> Loaded {
        self.load_with(file, &NoExternals)
    }

    /// Load with external symbol definitions.
    pub fn load_with(&self, file: &str, externals: &dyn amdgpu_loader::ExternalSymbols) -> Loaded {
        self.load_path(&kernels_bin().join(self.dir()).join(file), externals)
    }

    /// Load the code object at `path` (for kernels kept beside their test).
    pub fn load_path(&self, path: &Path, externals: &dyn amdgpu_loader::ExternalSymbols) -> Loaded {
        let file = path
            .file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
        let file = file.as_str();
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let co = CodeObject::parse(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        let size = co.image_size() as usize;
        let align = co.image_align().max(4096) as usize;
        let memory = self.alloc(size, align, true, true);
        let mut staging = vec![0u8; size];
        let image = co
            .load(&mut staging, memory.va, externals)
            .unwrap_or_else(|e| panic!("{file}: load: {e}"));
        memory.write(0, &staging);
        Loaded {
            file: file.to_owned(),
            image,
            memory,
        }
    }

    /// Dispatch a kernel that must complete; a failure panics naming the target, the code
    /// object and the kernel.
    pub fn run(
        &self,
        loaded: &Loaded,
        kernel: &str,
        grid: [u32; 3],
        workgroup: [u32; 3],
        args: &[Arg],
    ) -> DispatchStats {
        self.run_opts(loaded, kernel, grid, workgroup, args, Opts::default())
    }

    /// [`Gpu::run`] with [`Opts`].
    pub fn run_opts(
        &self,
        loaded: &Loaded,
        kernel: &str,
        grid: [u32; 3],
        workgroup: [u32; 3],
        args: &[Arg],
        opts: Opts,
    ) -> DispatchStats {
        self.dispatch_opts(loaded, kernel, grid, workgroup, args, opts)
            .unwrap_or_else(|e| panic!("{} {} {kernel}: {e}", self.dir(), loaded.file))
    }

    pub fn dispatch(
        &self,
        loaded: &Loaded,
        kernel: &str,
        grid: [u32; 3],
        workgroup: [u32; 3],
        args: &[Arg],
    ) -> Result<DispatchStats, DispatchError> {
        self.dispatch_opts(loaded, kernel, grid, workgroup, args, Opts::default())
    }

    pub fn dispatch_opts(
        &self,
        loaded: &Loaded,
        kernel: &str,
        grid: [u32; 3],
        workgroup: [u32; 3],
        args: &[Arg],
        opts: Opts,
    ) -> Result<DispatchStats, DispatchError> {
        let k = loaded
            .image
            .kernel(kernel)
            .unwrap_or_else(|| panic!("no kernel {kernel}"));
        let static_lds = k.group_segment_size;
        let kernarg = self.buffer(k.kernarg_size.max(16) as usize + 256);
        let mut explicit = k.explicit_args();
        let mut given = args.iter();
        for arg in explicit.by_ref() {
            let value = given
                .next()
                .unwrap_or_else(|| panic!("{kernel}: too few arguments"));
            let at = arg.offset as usize;
            match (arg.value_kind.clone(), value) {
                (ValueKind::DynamicSharedPointer, Arg::Lds) => {
                    let align = arg.pointee_align.unwrap_or(4).max(4);
                    kernarg.write(at, &static_lds.next_multiple_of(align).to_le_bytes());
                }
                (_, Arg::Ptr(v) | Arg::U64(v)) => kernarg.write(at, &v.to_le_bytes()),
                (_, Arg::I64(v)) => kernarg.write(at, &v.to_le_bytes()),
                (_, Arg::U32(v)) => kernarg.write(at, &v.to_le_bytes()[..arg.size as usize]),
                (_, Arg::I32(v)) => kernarg.write(at, &v.to_le_bytes()[..arg.size as usize]),
                (_, Arg::F32(v)) => kernarg.write(at, &v.to_le_bytes()),
                (kind, v) => panic!("{kernel}: argument {at}: {v:?} for {kind:?}"),
            }
        }
        assert!(given.next().is_none(), "{kernel}: too many arguments");
        let dims = if grid[2] > 1 {
            3
        } else if grid[1] > 1 {
            2
        } else {
            1
        };
        if let Some(implicit) = k.implicit_args {
            let put = |kind: HiddenArg, value: u64| {
                if let Some(off) = implicit.offset_of(kind) {
                    let (_, size) = implicit.layout.slot(kind).expect("slot");
                    kernarg.write(off as usize, &value.to_le_bytes()[..size as usize]);
                }
            };
            let h = [
                (
                    HiddenArg::BlockCountX,
                    HiddenArg::GroupSizeX,
                    HiddenArg::RemainderX,
                ),
                (
                    HiddenArg::BlockCountY,
                    HiddenArg::GroupSizeY,
                    HiddenArg::RemainderY,
                ),
                (
                    HiddenArg::BlockCountZ,
                    HiddenArg::GroupSizeZ,
                    HiddenArg::RemainderZ,
                ),
            ];
            for (i, (count, size, rem)) in h.into_iter().enumerate() {
                put(count, u64::from(grid[i] / workgroup[i]));
                put(size, u64::from(workgroup[i]));
                put(rem, u64::from(grid[i] % workgroup[i]));
            }
            put(HiddenArg::GridDims, dims);
            put(HiddenArg::DynamicLdsSize, u64::from(opts.dynamic_lds));
        }
        // Scratch: per-lane bytes rounded like ROCr (16 bytes = 1 KiB per wave), enough slots
        // for every worker's workgroup.
        let mut lane_bytes = k.private_segment_size + opts.extra_scratch;
        if k.uses_dynamic_stack {
            lane_bytes += 16 * 1024;
        }
        let lane_bytes = lane_bytes.next_multiple_of(16);
        // Wave32 kernels (GFX11) have twice the waves; slots are sized for wave64 lanes.
        let lanes = if self.target.is_gfx9() { 64 } else { 32 };
        let waves_per_group = (workgroup.iter().product::<u32>()).div_ceil(lanes) as usize;
        let slots = self.core.workers() * waves_per_group;
        let scratch_len = lane_bytes as usize * 64 * slots;
        let scratch = if lane_bytes == 0 {
            ScratchSetup::default()
        } else {
            // The mapping keeps the memory alive after the handle is dropped.
            let va = self.buffer(scratch_len).va;
            ScratchSetup {
                resource_descriptor: [
                    va as u32,
                    (va >> 32) as u32 & 0xffff | 1 << 31,
                    scratch_len as u32,
                    // DST_SEL XYZW, UINT 32, ELEMENT_SIZE 4 bytes, INDEX_STRIDE 64, ADD_TID.
                    0xfac | 4 << 12 | 4 << 15 | 1 << 19 | 3 << 21 | 1 << 23,
                ],
                backing_memory_location: va,
                backing_memory_byte_size: if opts.scratch_in_tmpring_only {
                    0
                } else {
                    scratch_len as u64
                },
                wave64_lane_byte_size: lane_bytes,
                // WAVES (11:0) and WAVESIZE (24:12, KiB per wave).
                compute_tmpring_size: if opts.scratch_in_tmpring_only {
                    slots as u32 | (lane_bytes * 64).div_ceil(1024) << 12
                } else {
                    0
                },
            }
        };
        let packet = KernelDispatchPacket {
            header: Header::new(PacketType::KERNEL_DISPATCH)
                .with_barrier(true)
                .with_acquire(FenceScope::System)
                .with_release(FenceScope::System)
                .0,
            setup: dispatch_setup(dims as u16),
            workgroup_size_x: workgroup[0] as u16,
            workgroup_size_y: workgroup[1] as u16,
            workgroup_size_z: workgroup[2] as u16,
            reserved0: 0,
            grid_size_x: grid[0],
            grid_size_y: grid[1],
            grid_size_z: grid[2],
            private_segment_size: k.private_segment_size + opts.extra_scratch,
            group_segment_size: static_lds + opts.dynamic_lds,
            kernel_object: k.descriptor_address,
            kernarg_address: kernarg.va,
            reserved2: 0,
            completion_signal: 0,
        };
        let packet_mem = self.buffer(64);
        packet_mem.write(0, packet.as_bytes());
        let queue = self.buffer(256);
        *self.last.lock().expect("lock") = Some((kernarg.clone(), packet));
        let request = DispatchRequest {
            packet,
            packet_va: packet_mem.va,
            queue_va: queue.va,
            dispatch_id: 7,
            scratch,
            target: self.target,
            lds_bytes_per_workgroup: 65536,
        };
        self.core
            .dispatch(&request, &self.vm, &self.interrupts, &self.abort)
    }
}

/// Both simulated targets.
pub const TARGETS: [GfxTarget; 2] = [GfxTarget::Gfx90a, GfxTarget::Gfx942];

impl test_support::corpus::SuiteGpu for Gpu {
    type Target = GfxTarget;

    fn for_target(target: GfxTarget) -> Self {
        Self::new(target)
    }

    fn bin_dir(&self) -> &'static str {
        self.dir()
    }
}

/// Run `f` for every (target, code object version) pair.
pub fn for_each_build(f: impl FnMut(&Gpu, &str)) {
    test_support::corpus::for_each_build(&TARGETS, f);
}

/// Run `f` for every (target, code object version) pair `kernel` is built for: V5 and V6
/// always, V4 where it is built (gfx90a, some kernels).
pub fn for_each_built(kernel: &str, f: impl FnMut(&Gpu, &str)) {
    test_support::corpus::for_each_built(&kernels_bin(), &TARGETS, kernel, f);
}

/// Deterministic test inputs, shared with the safe-API suite.
#[allow(unused_imports, reason = "not every test binary draws random inputs")]
pub use test_support::rng::Rng;

/// Hand-assembled code placed behind a synthetic kernel descriptor (for instructions and
/// situations the compiled corpus does not cover).
pub struct Raw {
    pub memory: Buffer,
    pub descriptor: u64,
    pub entry: u64,
}

/// COMPUTE_PGM_RSRC1 for raw kernels: 64 VGPRs, denormals kept, IEEE mode, DX10 clamp.
pub const RAW_RSRC1: u32 = 7 | 3 << 16 | 3 << 18 | 1 << 21 | 1 << 23;
/// COMPUTE_PGM_RSRC2 for raw kernels: 2 user SGPRs (kernarg pointer), workgroup id X.
pub const RAW_RSRC2: u32 = 2 << 1 | 1 << 7;

impl Gpu {
    /// Place `code` at a 256-byte aligned entry behind a descriptor whose only user SGPRs are
    /// the kernarg pointer (s[0:1]); the workgroup id X is in s2.
    pub fn load_raw(&self, code: &[u32]) -> Raw {
        self.load_raw_waves(code, false)
    }

    /// [`Gpu::load_raw`], in wave64 on GFX11 when `wave64` (GFX9 is always wave64).
    pub fn load_raw_waves(&self, code: &[u32], wave64: bool) -> Raw {
        let memory = self.alloc(256 + code.len() * 4, 4096, true, true);
        let kd = amdgpu_loader::KernelDescriptor {
            kernel_code_entry_byte_offset: 256,
            compute_pgm_rsrc1: RAW_RSRC1,
            compute_pgm_rsrc2: RAW_RSRC2,
            // ACCUM_OFFSET: AGPRs from v64.
            compute_pgm_rsrc3: 15,
            // Kernarg segment pointer; GFX11: wave32 (ENABLE_WAVEFRONT_SIZE32).
            kernel_code_properties: if self.target.is_gfx9() || wave64 {
                1 << 3
            } else {
                1 << 3 | 1 << 10
            },
            ..Default::default()
        };
        memory.write(0, kd.as_bytes());
        memory.write(256, code.as_bytes());
        Raw {
            descriptor: memory.va,
            entry: memory.va + 256,
            memory,
        }
    }

    /// Dispatch a raw kernel with `kernarg` bytes.
    pub fn dispatch_raw(
        &self,
        raw: &Raw,
        grid: [u32; 3],
        workgroup: [u32; 3],
        kernarg: &[u8],
    ) -> Result<DispatchStats, DispatchError> {
        let args = self.buffer(kernarg.len().max(16));
        args.write(0, kernarg);
        let packet = KernelDispatchPacket {
            header: Header::new(PacketType::KERNEL_DISPATCH).0,
            setup: dispatch_setup(1),
            workgroup_size_x: workgroup[0] as u16,
            workgroup_size_y: workgroup[1] as u16,
            workgroup_size_z: workgroup[2] as u16,
            grid_size_x: grid[0],
            grid_size_y: grid[1],
            grid_size_z: grid[2],
            kernel_object: raw.descriptor,
            kernarg_address: args.va,
            ..KernelDispatchPacket::default()
        };
        let request = DispatchRequest {
            packet,
            packet_va: 0,
            queue_va: 0,
            dispatch_id: 0,
            scratch: ScratchSetup::default(),
            target: self.target,
            lds_bytes_per_workgroup: 65536,
        };
        self.core
            .dispatch(&request, &self.vm, &self.interrupts, &self.abort)
    }
}
