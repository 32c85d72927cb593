//! The safe API on a real GPU through `/dev/kfd` (the `Linux` backend, whatever
//! `AQUEDUCT_BACKEND` says): open, load a committed kernel, launch it and check every element,
//! tear down and open again. Where there is no `/dev/kfd` each test says so and passes, unless
//! `AQUEDUCT_REQUIRE_HW` is set. CI runs them under the LD_PRELOAD simulator
//! (`sim/preload/run-under.sh`), which is how the real system-call path is tested without a
//! GPU. The tests share the process-wide device and run one at a time.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use aqueduct::{Arg, Device, Geometry, GpuAgent, MemoryLocation, QueueOptions};
use test_support::hardware;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The real kernel's device, or `None` (after saying why) where there is no GPU.
fn open_hardware(test: &str) -> Option<(MutexGuard<'static, ()>, Device)> {
    if !Path::new(kfd::abi::sysfs::KFD_DEVICE_PATH).exists() {
        hardware::skip(test, "no /dev/kfd on this machine");
        return None;
    }
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let device = Device::open_on(Arc::new(kfd::Linux)).unwrap();
    assert!(!device.is_simulated(), "the Linux backend must be used");
    Some((guard, device))
}

fn code_object(gpu: &GpuAgent, name: &str) -> Vec<u8> {
    let processor = gpu.target_id.processor.name;
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "tests/kernels/bin",
        processor,
        name,
    ]
    .iter()
    .collect();
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `c = a + b` over `n` elements on the first GPU, every element checked.
fn vector_add(device: &Device, n: u32) {
    let gpu = &device.gpus().unwrap()[0];
    let executable = device
        .load_code_object(gpu, &code_object(gpu, "vector_add.co5"))
        .unwrap();
    let kernel = executable.kernel("vector_add").unwrap();
    let a: Vec<i32> = (0..n as i32).collect();
    let b: Vec<i32> = (0..n as i32).map(|i| 7 * i - 3).collect();
    let bytes = 4 * n as usize;
    let buffers: Vec<_> = (0..3)
        .map(|_| device.alloc(gpu, MemoryLocation::Device, bytes).unwrap())
        .collect();
    buffers[0].write(0, &a).unwrap();
    buffers[1].write(0, &b).unwrap();
    let queue = device.create_queue(gpu, &QueueOptions::default()).unwrap();
    queue
        .launch(
            &kernel,
            &Geometry::d1(n, 64),
            &[
                Arg::ptr(buffers[0].gpu_address()),
                Arg::ptr(buffers[1].gpu_address()),
                Arg::ptr(buffers[2].gpu_address()),
                Arg::u32(n),
            ],
        )
        .unwrap()
        .wait(Some(Duration::from_secs(60)))
        .unwrap();
    let c: Vec<i32> = buffers[2].to_vec().unwrap();
    for i in 0..n as usize {
        assert_eq!(c[i], a[i].wrapping_add(b[i]), "element {i}");
    }
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

#[test]
fn hardware_vector_add_checks_every_element() {
    let Some((_guard, device)) = open_hardware("hardware_vector_add_checks_every_element") else {
        return;
    };
    vector_add(&device, 4096);
    device.shutdown().unwrap();
}

#[test]
fn hardware_shutdown_and_reopen_run_again_and_leak_nothing() {
    let Some((_guard, device)) =
        open_hardware("hardware_shutdown_and_reopen_run_again_and_leak_nothing")
    else {
        return;
    };
    vector_add(&device, 1000);
    device.shutdown().unwrap();
    assert!(device.is_closed());
    // The process binding (kfd fd, render fds) stays; everything else goes each round.
    let fds = open_fds();
    for round in 0..3 {
        let device = Device::open_on(Arc::new(kfd::Linux)).unwrap();
        vector_add(&device, 1000 + round);
        // The dropped queue was destroyed.
        assert_eq!(device.live_objects().unwrap().queues, 0, "round {round}");
        device.shutdown().unwrap();
        assert_eq!(open_fds(), fds, "round {round}");
    }
}
