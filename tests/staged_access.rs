//! Host access to VRAM the CPU cannot map (the small-BAR preset): `Buffer::write`, `read`,
//! `to_vec`, `fill` and `copy_range` go through the device's own copy queue; round trips of
//! several sizes, a kernel between them, shutdown. And the lifetime of copy queues: teardown
//! with copies in flight. (Fork children: `tests/staged_access_fork.rs`, alone in its binary.)

mod support;

use std::sync::Arc;
use std::time::Duration;

use aqueduct::kernarg::{Arg, Geometry};
use aqueduct::sim::{Machine, MachineConfig};
use aqueduct::{Condition, CopyOrder, Device, ErrorKind, MemoryLocation, QueueOptions};
use support::{atomic_counter, binding_only, gpu, pid};
use test_support::watchdog::within;

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

fn bytes(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761).wrapping_add(seed) >> 13) as u8)
        .collect()
}

#[test]
fn vram_only_buffers_round_trip_through_the_copy_engine() {
    let (machine, device) = small_bar();
    let gpu = gpu(&device);
    for (i, len) in [1usize, 3, 4, 4097, (1 << 20) + 13, (3 << 20) - 1]
        .into_iter()
        .enumerate()
    {
        let vram = device.alloc(&gpu, MemoryLocation::Device, len).unwrap();
        // The CPU cannot map it: the copy engine is the only way in.
        // SAFETY: only the pointer's presence is looked at.
        assert!(unsafe { vram.host_ptr() }.unwrap().is_none());
        assert_eq!(vram.to_vec::<u8>().unwrap(), vec![0; len], "{len}: zeroed");
        let data = bytes(len, i as u32);
        vram.write(0, &data).unwrap();
        assert_eq!(vram.to_vec::<u8>().unwrap(), data, "{len} bytes");
        // Unaligned pieces inside it, around the staging chunk boundary for the large ones.
        if len > 8 {
            let at = len / 2 - 3;
            vram.write(at, &[0xA5u8, 0x5A, 0xC3]).unwrap();
            let mut back = [0u8; 5];
            vram.read(at - 1, &mut back).unwrap();
            assert_eq!(
                back,
                [data[at - 1], 0xA5, 0x5A, 0xC3, data[at + 3]],
                "{len}"
            );
        }
        assert_eq!(
            vram.write(len, &[1u8]).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }
    // fill, typed reads, and buffer-to-buffer copies the CPU cannot do.
    let a = device.alloc(&gpu, MemoryLocation::Device, 4099).unwrap();
    let b = device.alloc(&gpu, MemoryLocation::Device, 4099).unwrap();
    let host = device
        .alloc(&gpu, MemoryLocation::HostCoarse, 4099)
        .unwrap();
    a.fill(0x7E).unwrap();
    assert_eq!(a.to_vec::<u32>().unwrap(), vec![0x7E7E_7E7E; 1024]);
    let data = bytes(4099, 9);
    host.write(0, &data).unwrap();
    b.copy_from(&host).unwrap();
    a.copy_range(1, &b, 0, 4098).unwrap();
    let mut expect = vec![0x7Eu8];
    expect.extend_from_slice(&data[..4098]);
    assert_eq!(a.to_vec::<u8>().unwrap(), expect);
    // Overlapping ranges of one VRAM buffer are refused (the engine copies forwards).
    assert_eq!(
        a.copy_range(1, &a, 0, 64).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    // One copy queue (the staging one) is alive; it goes with the device.
    assert_eq!(device.live_objects().unwrap().queues, 1);
    device.shutdown().unwrap();
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}

#[test]
fn a_kernel_sees_what_write_put_in_vram_and_read_sees_what_it_wrote() {
    let (_machine, device) = small_bar();
    let gpu = gpu(&device);
    let (_executable, kernel) = atomic_counter(&device, &gpu);
    let counter = device.alloc(&gpu, MemoryLocation::Device, 4).unwrap();
    let old = device.alloc(&gpu, MemoryLocation::Device, 4 * 64).unwrap();
    counter.write(0, &[41u32]).unwrap();
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    queue
        .launch(
            &kernel,
            &Geometry::d1(64, 64),
            &[
                Arg::ptr(counter.gpu_address()),
                Arg::ptr(old.gpu_address()),
                Arg::u32(64),
            ],
        )
        .unwrap()
        .wait(WAIT)
        .unwrap();
    assert_eq!(counter.to_vec::<u32>().unwrap(), [41 + 64]);
    let mut tickets: Vec<u32> = old.to_vec().unwrap();
    tickets.sort_unstable();
    assert_eq!(tickets, (41..41 + 64).collect::<Vec<u32>>());
}

#[test]
fn staged_access_fails_closed_after_shutdown_and_reopens_fresh() {
    let (machine, device) = small_bar();
    let gpu = gpu(&device);
    let vram = device.alloc(&gpu, MemoryLocation::Device, 64).unwrap();
    vram.write(0, &[7u32; 16]).unwrap();
    device.shutdown().unwrap();
    assert_eq!(
        vram.write(0, &[1u32]).unwrap_err().kind(),
        ErrorKind::Closed
    );
    assert_eq!(vram.to_vec::<u32>().unwrap_err().kind(), ErrorKind::Closed);
    assert_eq!(machine.process_counts(pid()), binding_only(1));
    // A reopened device makes its own staging queue.
    let device = Device::open_on(Arc::new(machine.clone())).unwrap();
    let vram = device.alloc(&gpu, MemoryLocation::Device, 64).unwrap();
    vram.write(0, &[9u32; 16]).unwrap();
    assert_eq!(vram.to_vec::<u32>().unwrap(), [9; 16]);
    // The last handle going takes the staging queue with it.
    drop((vram, device));
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}

#[test]
fn shutdown_while_a_staged_write_runs_ends_cleanly() {
    let (machine, device) = small_bar();
    let gpu = gpu(&device);
    let vram = device
        .alloc(&gpu, MemoryLocation::Device, 16 << 20)
        .unwrap();
    let (started, first_done) = std::sync::mpsc::channel();
    let writer = {
        let vram = vram.clone();
        std::thread::spawn(move || {
            let data = vec![0x11u8; 16 << 20];
            let first = vram.write(0, &data).map_err(|e| e.kind());
            let _ = started.send(first);
            (0..64)
                .map(|_| vram.write(0, &data).map_err(|e| e.kind()))
                .find(Result::is_err)
        })
    };
    // The staging queue exists and the writer is in its next writes when the shutdown comes.
    assert_eq!(
        first_done.recv_timeout(Duration::from_secs(60)).unwrap(),
        Ok(())
    );
    let closer = device.clone();
    within(Duration::from_secs(60), move || closer.shutdown()).unwrap();
    let outcome = writer.join().unwrap();
    assert!(
        matches!(outcome, None | Some(Err(ErrorKind::Closed))),
        "{outcome:?}"
    );
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}

#[test]
fn copy_queues_destroyed_or_shut_down_mid_copy_end_cleanly() {
    let (machine, device) = small_bar();
    let gpu = gpu(&device);
    let len = 64 << 20;
    let a = device.alloc(&gpu, MemoryLocation::Device, len).unwrap();
    let b = device.alloc(&gpu, MemoryLocation::Device, len).unwrap();
    // Dropping a queue whose engine is busy copying (DESTROY_QUEUE stops it mid-packet).
    let queue = device.create_copy_queue(&gpu).unwrap();
    for _ in 0..4 {
        queue
            .copy(&b, 0, &a, 0, len, &CopyOrder::default())
            .unwrap();
    }
    let queues = machine.process_counts(pid()).queues;
    drop(queue);
    assert_eq!(machine.process_counts(pid()).queues, queues - 1);
    // The device goes on: a fresh queue copies.
    let queue = device.create_copy_queue(&gpu).unwrap();
    let done = device.signal(1).unwrap();
    a.write(0, &[0xBEEFu32; 4]).unwrap();
    queue
        .copy(
            &b,
            0,
            &a,
            0,
            16,
            &CopyOrder {
                completion: Some(&done),
                ..CopyOrder::default()
            },
        )
        .unwrap();
    done.wait(Condition::Eq, 0, WAIT).unwrap();
    let mut head = [0u32; 4];
    b.read(0, &mut head).unwrap();
    assert_eq!(head, [0xBEEF; 4]);
    // A shutdown with copies running, and one waiting on a signal nobody completes.
    let never = device.signal(1).unwrap();
    for _ in 0..4 {
        queue
            .copy(&b, 0, &a, 0, len, &CopyOrder::default())
            .unwrap();
    }
    queue
        .copy(
            &b,
            0,
            &a,
            0,
            64,
            &CopyOrder {
                after: &[&never],
                ..CopyOrder::default()
            },
        )
        .unwrap();
    let closer = device.clone();
    within(Duration::from_secs(60), move || closer.shutdown()).unwrap();
    assert_eq!(queue.is_idle().unwrap_err().kind(), ErrorKind::Closed);
    assert_eq!(machine.process_counts(pid()), binding_only(1));
}
