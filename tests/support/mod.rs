//! What the safe-API tests share: a small simulated machine per test (so tests that shut
//! their device down do not disturb others), and the committed test kernels.

#![allow(dead_code, reason = "each test binary uses a different part")]

use std::path::PathBuf;
use std::sync::Arc;

use aqueduct::aql::builder::{DispatchBuilder, DispatchLimits};
use aqueduct::aql::packet::KernelDispatchPacket;
use aqueduct::sim::{Machine, MachineConfig};
use aqueduct::{Buffer, Device, Executable, GpuAgent, Kernel, MemoryLocation};

/// A simulated MI210 with few CUs (the tests' kernels are small), its own kernel state.
pub fn machine() -> Machine {
    Machine::new(
        MachineConfig::mi210()
            .with_compute_units(8)
            .with_vram(1 << 30),
    )
    .unwrap()
}

/// A device on a fresh simulated hive of `gpus` MI210s (XGMI peers).
pub fn hive_device(gpus: usize) -> (Machine, Device) {
    let machine = Machine::new(
        MachineConfig::mi210_hive(gpus)
            .with_compute_units(8)
            .with_vram(1 << 30),
    )
    .unwrap();
    let device = Device::open_on(Arc::new(machine.clone())).unwrap();
    (machine, device)
}

/// A device on a fresh simulated machine.
pub fn device() -> (Machine, Device) {
    let machine = machine();
    let device = Device::open_on(Arc::new(machine.clone())).unwrap();
    (machine, device)
}

/// The first GPU.
pub fn gpu(device: &Device) -> GpuAgent {
    device.gpus().unwrap()[0].clone()
}

/// The path of a committed test kernel (`tests/kernels/bin/<target>/<file>`).
pub fn kernel_path(target: &str, file: &str) -> PathBuf {
    [
        env!("CARGO_MANIFEST_DIR"),
        "tests/kernels/bin",
        target,
        file,
    ]
    .iter()
    .collect()
}

/// A committed test kernel's code object.
pub fn code_object(target: &str, file: &str) -> Vec<u8> {
    let path = kernel_path(target, file);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `atomic_counter` (V5, gfx90a) loaded on `gpu`: with a one-work-item grid it adds 1 to
/// `counter[0]` and stores the old value to `old[0]`.
pub fn atomic_counter(device: &Device, gpu: &GpuAgent) -> (Executable, Kernel) {
    let executable = device
        .load_code_object(gpu, &code_object("gfx90a", "atomic_counter.co5"))
        .unwrap();
    let kernel = executable.kernel("atomic_counter").unwrap();
    (executable, kernel)
}

/// Kernarg segments for `count` one-work-item `atomic_counter` dispatches, segment `i`
/// pointing at `counters[i]` and `olds[i]`.
pub struct CounterDispatches {
    pub kernel: Kernel,
    /// What the GPU's dispatches may ask for.
    pub limits: DispatchLimits,
    pub kernargs: Buffer,
    pub counters: Buffer,
    pub olds: Buffer,
    pub stride: usize,
}

impl CounterDispatches {
    pub fn new(device: &Device, gpu: &GpuAgent, kernel: Kernel, count: usize) -> Self {
        let stride = (kernel.kernarg_size as usize).next_multiple_of(64);
        let kernargs = device
            .alloc(gpu, MemoryLocation::Kernarg, stride * count)
            .unwrap();
        let counters = device
            .alloc(gpu, MemoryLocation::HostFine, 4 * count)
            .unwrap();
        let olds = device
            .alloc(gpu, MemoryLocation::HostFine, 4 * count)
            .unwrap();
        olds.fill(0xff).unwrap();
        let this = Self {
            kernel,
            limits: gpu.dispatch_limits(),
            kernargs,
            counters,
            olds,
            stride,
        };
        for i in 0..count {
            this.write_kernargs(i);
        }
        this
    }

    fn write_kernargs(&self, i: usize) {
        let counter = self.counters.gpu_address() + 4 * i as u64;
        let old = self.olds.gpu_address() + 4 * i as u64;
        let at = i * self.stride;
        // Offsets from the kernel's metadata: counter, old, n.
        let offsets: Vec<u32> = self.kernel.args.iter().map(|a| a.offset).collect();
        self.kernargs
            .write(at + offsets[0] as usize, &[counter])
            .unwrap();
        self.kernargs
            .write(at + offsets[1] as usize, &[old])
            .unwrap();
        self.kernargs
            .write(at + offsets[2] as usize, &[1u32])
            .unwrap();
    }

    /// The dispatch packet of segment `i`.
    pub fn packet(&self, i: usize, completion: u64) -> KernelDispatchPacket {
        DispatchBuilder::new(
            self.kernel.kernel_object,
            self.kernargs.gpu_address() + (i * self.stride) as u64,
        )
        .grid_1d(1, 1)
        .group_segment_size(self.kernel.group_segment_size)
        .completion_signal(completion)
        .build(&self.limits)
        .unwrap()
    }
}

/// What a process leaves in the simulated kernel once its device is torn down: the process
/// binding (`/dev/kfd`, one render file per GPU, the event page and its CPU mapping).
pub fn binding_only(gpus: u64) -> aqueduct::sim::ResourceCounts {
    aqueduct::sim::ResourceCounts {
        processes: 1,
        buffer_objects: 1,
        queues: 0,
        events: 0,
        cpu_mappings: 1,
        open_files: 1 + gpus,
    }
}

/// This process' id as the kernel (and the simulator) knows it.
pub fn pid() -> i32 {
    std::process::id() as i32
}
