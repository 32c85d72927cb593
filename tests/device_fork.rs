//! fork(): every handle the child inherits answers `ForkedChild` (never the parent's kernel
//! state, never a crash), the child opens a fresh device and dispatches, and the parent keeps
//! working. One test in its own binary, so no other test thread is forked mid-operation.

mod support;

use std::sync::Arc;
use std::time::Duration;

use aqueduct::{Condition, Device, ErrorKind, MemoryLocation, MemoryOrder, QueueOptions};
use support::{CounterDispatches, atomic_counter, gpu, machine};
use test_support::fork::assert_child_passes;

const WAIT: Option<Duration> = Some(Duration::from_secs(30));

fn forked<T: std::fmt::Debug>(what: &str, result: aqueduct::Result<T>) -> Result<(), String> {
    match result {
        Err(e) if e.kind() == ErrorKind::ForkedChild => Ok(()),
        other => Err(format!("{what}: expected ForkedChild, got {other:?}")),
    }
}

/// Dispatch `count` counter increments on a fresh queue and check them.
fn count_to(device: &Device, count: usize) -> Result<(), String> {
    let gpu = gpu(device);
    let (_executable, kernel) = atomic_counter(device, &gpu);
    let dispatches = CounterDispatches::new(device, &gpu, kernel, count);
    let queue = device
        .create_queue(&gpu, &QueueOptions::default())
        .map_err(|e| e.to_string())?;
    let done = device.signal(count as i64).map_err(|e| e.to_string())?;
    for i in 0..count {
        queue
            .dispatch(&dispatches.packet(i, done.handle()))
            .map_err(|e| e.to_string())?;
    }
    queue
        .wait(&done, Condition::Eq, 0, WAIT)
        .map_err(|e| e.to_string())?;
    let counts: Vec<u32> = dispatches.counters.to_vec().map_err(|e| e.to_string())?;
    if counts != vec![1; count] {
        return Err(format!("counters {counts:?}"));
    }
    Ok(())
}

#[test]
fn a_fork_child_gets_forked_child_errors_opens_afresh_and_the_parent_keeps_working() {
    let machine = machine();
    let sys: Arc<dyn aqueduct::kfd::Sys> = Arc::new(machine.clone());
    let device = Device::open_on(Arc::clone(&sys)).unwrap();
    let gpu = gpu(&device);
    let buffer = device.alloc(&gpu, MemoryLocation::HostFine, 64).unwrap();
    buffer.write(0, b"parent").unwrap();
    let signal = device.signal(1).unwrap();
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    count_to(&device, 4).unwrap();
    // Objects only the child uses (the parent drops its copies when the closure goes): the
    // child drops their last handles, which must touch nothing of the parent's.
    let (inherited, inherited_queue) = {
        let other = device.clone();
        let q = other.create_queue(&gpu, &QueueOptions::default()).unwrap();
        (other, q)
    };
    let inherited_buffer = device.alloc(&gpu, MemoryLocation::Device, 4096).unwrap();

    assert_child_passes(Duration::from_secs(60), || {
        forked("gpus", device.gpus().map(drop))?;
        forked("alloc", device.alloc(&gpu, MemoryLocation::HostFine, 64))?;
        forked("signal", device.signal(0))?;
        forked(
            "create_queue",
            device.create_queue(&gpu, &QueueOptions::default()),
        )?;
        forked("buffer.write", buffer.write(0, b"child"))?;
        forked("signal.value", signal.value())?;
        forked("signal.store", signal.store(0, MemoryOrder::Release))?;
        forked("queue.barrier_and", queue.barrier_and(&[], None))?;
        forked("queue.finish", queue.finish(WAIT))?;
        forked("shutdown", device.shutdown())?;
        // The child's own device: a different one, which works.
        let own = Device::open_on(Arc::clone(&sys)).map_err(|e| format!("open: {e}"))?;
        if own == device {
            return Err("the child got the parent's device".to_owned());
        }
        count_to(&own, 4)?;
        own.shutdown().map_err(|e| e.to_string())?;
        // Dropping what it inherited touches nothing of the parent's.
        drop((inherited_queue, inherited_buffer, inherited));
        Ok(())
    });

    // The parent is unaffected.
    let mut back = [0u8; 6];
    buffer.read(0, &mut back).unwrap();
    assert_eq!(&back, b"parent");
    assert_eq!(signal.value().unwrap(), 1);
    queue.finish(WAIT).unwrap();
    count_to(&device, 4).unwrap();
}
