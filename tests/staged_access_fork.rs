//! A fork child and the copy engine: the inherited `Buffer` of VRAM the CPU cannot map and an
//! inherited `CopyQueue` answer `ForkedChild` without touching the parent's state, the child
//! opens its own device and copies, and the parent's queue keeps copying afterwards.
//!
//! Alone in its test binary: a fork taken while another test thread holds a lock (the
//! simulator's, the allocator's) leaves the child waiting on it for good.

mod support;

use std::sync::Arc;
use std::time::Duration;

use aqueduct::sim::{Machine, MachineConfig};
use aqueduct::{Condition, CopyOrder, Device, ErrorKind, MemoryLocation};
use support::{gpu, pid};
use test_support::fork::assert_child_passes;

const WAIT: Option<Duration> = Some(Duration::from_secs(30));

fn small_bar() -> (Machine, Device) {
    let machine = Machine::new(
        MachineConfig::mi210_small_bar()
            .with_compute_units(8)
            .with_vram(1 << 30),
    )
    .unwrap();
    let device = Device::open_on(Arc::new(machine.clone())).unwrap();
    (machine, device)
}

fn forked<T: std::fmt::Debug>(what: &str, result: aqueduct::Result<T>) -> Result<(), String> {
    match result {
        Err(e) if e.kind() == ErrorKind::ForkedChild => Ok(()),
        other => Err(format!("{what}: expected ForkedChild, got {other:?}")),
    }
}

#[test]
fn a_fork_child_is_refused_staged_access_and_copy_queues_and_copies_on_its_own_device() {
    let (machine, device) = small_bar();
    let gpu = gpu(&device);
    let vram = device.alloc(&gpu, MemoryLocation::Device, 4096).unwrap();
    let host = device.alloc(&gpu, MemoryLocation::HostFine, 4096).unwrap();
    vram.write(0, &[5u32; 1024]).unwrap();
    let copies = device.create_copy_queue(&gpu).unwrap();
    let queues_before = machine.process_counts(pid()).queues;
    let sys: Arc<dyn aqueduct::kfd::Sys> = Arc::new(machine.clone());
    assert_child_passes(Duration::from_secs(60), || {
        forked("buffer.write", vram.write(0, &[1u32]))?;
        forked("buffer.to_vec", vram.to_vec::<u32>())?;
        forked("copy_from", vram.copy_from(&host))?;
        forked(
            "copy",
            copies.copy(&host, 0, &vram, 0, 64, &CopyOrder::default()),
        )?;
        forked("fill", copies.fill(&vram, 0, 64, 0, &CopyOrder::default()))?;
        forked("is_idle", copies.is_idle())?;
        forked("create_copy_queue", device.create_copy_queue(&gpu))?;
        // Its own device copies, staged and through a queue of its own.
        let own = Device::open_on(Arc::clone(&sys)).map_err(|e| format!("open: {e}"))?;
        let gpu = own.gpus().map_err(|e| e.to_string())?[0].clone();
        let mine = own
            .alloc(&gpu, MemoryLocation::Device, 4096)
            .map_err(|e| e.to_string())?;
        let out = own
            .alloc(&gpu, MemoryLocation::HostFine, 4096)
            .map_err(|e| e.to_string())?;
        mine.write(0, &[3u32; 1024]).map_err(|e| e.to_string())?;
        let queue = own.create_copy_queue(&gpu).map_err(|e| e.to_string())?;
        let done = own.signal(1).map_err(|e| e.to_string())?;
        queue
            .copy(
                &out,
                0,
                &mine,
                0,
                4096,
                &CopyOrder {
                    completion: Some(&done),
                    ..CopyOrder::default()
                },
            )
            .map_err(|e| e.to_string())?;
        done.wait(Condition::Eq, 0, WAIT)
            .map_err(|e| e.to_string())?;
        let back: Vec<u32> = out.to_vec().map_err(|e| e.to_string())?;
        if back != [3; 1024] {
            return Err(format!("the child's copy read {:?}", &back[..4]));
        }
        own.shutdown().map_err(|e| e.to_string())
    });
    // The parent's queues and memory are untouched.
    assert_eq!(machine.process_counts(pid()).queues, queues_before);
    assert_eq!(vram.to_vec::<u32>().unwrap(), [5; 1024]);
    let done = device.signal(1).unwrap();
    copies
        .copy(
            &host,
            0,
            &vram,
            0,
            4096,
            &CopyOrder {
                completion: Some(&done),
                ..CopyOrder::default()
            },
        )
        .unwrap();
    done.wait(Condition::Eq, 0, WAIT).unwrap();
    assert_eq!(host.to_vec::<u32>().unwrap(), [5; 1024]);
}
