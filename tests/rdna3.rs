//! The safe API on the simulated Radeon RX 7900 XTX (`rx7900xtx`): the agent is reported as
//! the kernel describes a gfx1100 card (wave32, 96 CUs of 2 SIMDs), gfx1100 code objects of
//! the corpus load and gfx90a ones are refused, dispatch limits and scratch follow GFX11,
//! and a launch of gfx1100 code runs on the GFX11 shader core. (`tests/corpus_rdna3.rs` runs
//! the whole gfx1100 corpus.)

mod support;

use std::sync::Arc;
use std::time::Duration;

use aqueduct::aql::DispatchLimits;
use aqueduct::sim::{Machine, MachineConfig};
use aqueduct::{Arg, Device, ErrorKind, Geometry, MemoryLocation, QueueOptions};
use support::{code_object, gpu};

const WAIT: Option<Duration> = Some(Duration::from_secs(60));

fn rx7900xtx() -> (Machine, Device) {
    let machine = Machine::new(MachineConfig::rx7900xtx()).unwrap();
    let device = Device::open_on(Arc::new(machine.clone())).unwrap();
    (machine, device)
}

#[test]
fn the_agent_is_a_wave32_gfx1100() {
    let (_machine, device) = rx7900xtx();
    let gpu = gpu(&device);
    assert_eq!(gpu.target_id.to_string(), "gfx1100");
    assert_eq!(gpu.wavefront_size, 32);
    assert_eq!((gpu.compute_units, gpu.simds, gpu.xccs), (96, 192, 1));
    assert_eq!(gpu.max_waves_per_simd, 16);
    assert_eq!(gpu.lds_bytes, 64 * 1024);
    assert_eq!(gpu.device_id, 0x744C);
    assert!(gpu.marketing_name.unwrap().contains("7900 XTX"));
    assert!(gpu.large_bar);
    assert_eq!(gpu.queues.max_queues, 8);
    // GFX11's scratch wave size: 15 bits of 256 bytes, over 64 lanes.
    let limits = gpu.dispatch_limits();
    assert_eq!(limits.max_private_segment_size, 131_068);
    assert_ne!(limits, DispatchLimits::GFX9);
    assert_eq!(limits.max_workgroup_size, 1024);
    device.shutdown().unwrap();
}

#[test]
fn gfx1100_code_loads_and_gfx90a_code_is_refused() {
    let (_machine, device) = rx7900xtx();
    let gpu = gpu(&device);
    let executable = device
        .load_code_object(&gpu, &code_object("gfx1100", "atomic_counter.co5"))
        .unwrap();
    let kernel = executable.kernel("atomic_counter").unwrap();
    // clang builds gfx1100 kernels wave32 unless told otherwise.
    assert_eq!(kernel.wavefront_size, 32);
    let refused = device
        .load_code_object(&gpu, &code_object("gfx90a", "atomic_counter.co5"))
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::InvalidArgument, "{refused}");
    let message = refused.to_string();
    assert!(
        message.contains("gfx90a") && message.contains("gfx1100"),
        "{message}"
    );
    drop(executable);
    device.shutdown().unwrap();
}

/// The launch runs on the GFX11 shader core: the counter is bumped once and the old value
/// returned (GFX11 code read by the GFX9 core would fail or count wrong).
#[test]
fn a_gfx1100_launch_runs_on_the_gfx11_core() {
    let (_machine, device) = rx7900xtx();
    let gpu = gpu(&device);
    let executable = device
        .load_code_object(&gpu, &code_object("gfx1100", "atomic_counter.co5"))
        .unwrap();
    let kernel = executable.kernel("atomic_counter").unwrap();
    let counter = device.alloc(&gpu, MemoryLocation::HostFine, 4).unwrap();
    let old = device.alloc(&gpu, MemoryLocation::HostFine, 4).unwrap();
    counter.write(0, &[41u32]).unwrap();
    old.write(0, &[0xFFFF_FFFFu32]).unwrap();
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let outcome = queue
        .launch(
            &kernel,
            &Geometry::d1(1, 1),
            &[
                Arg::ptr(counter.gpu_address()),
                Arg::ptr(old.gpu_address()),
                Arg::u32(1),
            ],
        )
        .unwrap()
        .wait(WAIT);
    outcome.unwrap();
    assert_eq!(counter.to_vec::<u32>().unwrap(), [42]);
    assert_eq!(old.to_vec::<u32>().unwrap(), [41]);
    drop(queue);
    drop(executable);
    device.shutdown().unwrap();
}
