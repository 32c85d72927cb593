//! Copy queues through the safe API on the simulated SDMA engines: host ↔ private VRAM on the
//! small-BAR preset (memory the CPU cannot map), fills, ordering by signals (a copy waits for
//! a signal; its completion signal wakes a waiter through its event), timestamps, peer copies
//! in a two-GPU hive, gfx942, rectangles (one of more rows than one submission holds), times
//! stamped in the completion signal, argument errors before submission, and shutdown.

mod support;

use std::sync::Arc;
use std::time::Duration;

use aqueduct::sim::{Machine, MachineConfig};
use aqueduct::{Condition, CopyOrder, Device, ErrorKind, MemoryLocation, Pitched};
use support::{gpu, hive_device};

const WAIT: Option<Duration> = Some(Duration::from_secs(30));

fn device_on(config: MachineConfig) -> (Machine, Device) {
    let machine = Machine::new(config.with_compute_units(8).with_vram(1 << 30)).unwrap();
    let device = Device::open_on(Arc::new(machine.clone())).unwrap();
    (machine, device)
}

fn pattern(len: usize, seed: u32) -> Vec<u32> {
    (0..len as u32)
        .map(|i| i.wrapping_mul(2_654_435_761).wrapping_add(seed))
        .collect()
}

#[test]
fn private_vram_on_a_small_bar_is_reached_by_the_copy_engine() {
    let (_machine, device) = device_on(MachineConfig::mi210_small_bar());
    let gpu = gpu(&device);
    let words = 300_000;
    let host_in = device
        .alloc(&gpu, MemoryLocation::HostCoarse, words * 4)
        .unwrap();
    let vram = device
        .alloc(&gpu, MemoryLocation::Device, words * 4)
        .unwrap();
    let host_out = device
        .alloc(&gpu, MemoryLocation::HostCoarse, words * 4)
        .unwrap();
    let data = pattern(words, 1);
    host_in.write(0, &data).unwrap();
    let queue = device.create_copy_queue(&gpu).unwrap();
    let uploaded = device.signal(1).unwrap();
    let downloaded = device.signal(1).unwrap();
    // The download is submitted first in program order but waits for the upload's signal.
    queue
        .copy(
            &vram,
            0,
            &host_in,
            0,
            words * 4,
            &CopyOrder {
                completion: Some(&uploaded),
                ..CopyOrder::default()
            },
        )
        .unwrap();
    queue
        .copy(
            &host_out,
            0,
            &vram,
            0,
            words * 4,
            &CopyOrder {
                after: &[&uploaded],
                completion: Some(&downloaded),
                ..CopyOrder::default()
            },
        )
        .unwrap();
    downloaded.wait(Condition::Eq, 0, WAIT).unwrap();
    assert_eq!(uploaded.value().unwrap(), 0);
    assert_eq!(host_out.to_vec::<u32>().unwrap(), data);
    // A fill of VRAM, read back through the engine.
    let filled = device.signal(1).unwrap();
    queue
        .fill(&vram, 4, 8, 0xABCD_EF01, &CopyOrder::default())
        .unwrap();
    queue
        .copy(
            &host_out,
            0,
            &vram,
            0,
            16,
            &CopyOrder {
                completion: Some(&filled),
                ..CopyOrder::default()
            },
        )
        .unwrap();
    filled.wait(Condition::Eq, 0, WAIT).unwrap();
    let head: Vec<u32> = host_out.to_vec().unwrap();
    assert_eq!(head[..4], [data[0], 0xABCD_EF01, 0xABCD_EF01, data[3]]);
}

#[test]
fn a_copy_waits_for_a_dependency_and_stamps_its_times() {
    let (_machine, device) = device_on(MachineConfig::mi300x());
    let gpu = gpu(&device);
    let src = device.alloc(&gpu, MemoryLocation::Device, 4096).unwrap();
    let dst = device.alloc(&gpu, MemoryLocation::HostFine, 4096).unwrap();
    let stamps = device.alloc(&gpu, MemoryLocation::HostCoarse, 16).unwrap();
    src.write(0, &pattern(1024, 9)).unwrap();
    let gate = device.polling_signal(1).unwrap();
    let done = device.signal(1).unwrap();
    let queue = device.create_copy_queue(&gpu).unwrap();
    queue
        .copy(
            &dst,
            0,
            &src,
            0,
            4096,
            &CopyOrder {
                after: &[&gate],
                completion: Some(&done),
                timestamps: Some(&stamps),
                stamps_in_completion: false,
            },
        )
        .unwrap();
    // Not before the gate opens (the wait times out with the value unchanged).
    let early = done
        .wait(Condition::Eq, 0, Some(Duration::from_millis(50)))
        .unwrap_err();
    assert_eq!(early.kind(), ErrorKind::Timeout, "{early}");
    assert_eq!(done.value().unwrap(), 1);
    assert_eq!(dst.to_vec::<u32>().unwrap(), vec![0; 1024]);
    gate.store(0, aqueduct::MemoryOrder::Release).unwrap();
    done.wait(Condition::Eq, 0, WAIT).unwrap();
    assert_eq!(dst.to_vec::<u32>().unwrap(), pattern(1024, 9));
    let times: Vec<u64> = stamps.to_vec().unwrap();
    assert!(times[0] > 0 && times[0] <= times[1], "{times:?}");
    assert!(queue.is_idle().unwrap());
}

#[test]
fn peer_memory_in_a_hive_is_copied_by_the_engine() {
    let (_machine, device) = hive_device(2);
    let gpus = device.gpus().unwrap();
    let near = device
        .alloc(&gpus[0], MemoryLocation::Device, 8192)
        .unwrap();
    let far = device
        .alloc(&gpus[1], MemoryLocation::Device, 8192)
        .unwrap();
    far.allow_access(&[&gpus[0]]).unwrap();
    near.write(0, &pattern(2048, 3)).unwrap();
    let queue = device.create_copy_queue(&gpus[0]).unwrap();
    let done = device.signal(1).unwrap();
    queue
        .copy(
            &far,
            0,
            &near,
            0,
            8192,
            &CopyOrder {
                completion: Some(&done),
                ..CopyOrder::default()
            },
        )
        .unwrap();
    done.wait(Condition::Eq, 0, WAIT).unwrap();
    assert_eq!(far.to_vec::<u32>().unwrap(), pattern(2048, 3));
}

#[test]
fn bad_arguments_are_refused_before_submission_and_shutdown_closes_the_queue() {
    let (_machine, device) = device_on(MachineConfig::mi210());
    let gpu = gpu(&device);
    let a = device.alloc(&gpu, MemoryLocation::Device, 4096).unwrap();
    let b = device
        .alloc(&gpu, MemoryLocation::HostCoarse, 4096)
        .unwrap();
    let queue = device.create_copy_queue(&gpu).unwrap();
    let none = CopyOrder::default();
    let errors = [
        queue.copy(&a, 4000, &b, 0, 100, &none).unwrap_err(),
        queue.copy(&a, 0, &b, 4090, 8, &none).unwrap_err(),
        queue.copy(&a, 0, &a, 8, 16, &none).unwrap_err(),
        queue.fill(&a, 2, 8, 0, &none).unwrap_err(),
        queue.fill(&a, 0, 6, 0, &none).unwrap_err(),
    ];
    for error in errors {
        assert_eq!(error.kind(), ErrorKind::InvalidArgument, "{error}");
    }
    // Buffers and signals of another device.
    let (_other_machine, other) = device_on(MachineConfig::mi210());
    let foreign = other
        .alloc(&support::gpu(&other), MemoryLocation::Device, 64)
        .unwrap();
    let foreign_signal = other.signal(1).unwrap();
    assert_eq!(
        queue
            .copy(&a, 0, &foreign, 0, 64, &none)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        queue
            .copy(
                &a,
                0,
                &b,
                0,
                64,
                &CopyOrder {
                    completion: Some(&foreign_signal),
                    ..CopyOrder::default()
                }
            )
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
    assert!(queue.is_idle().unwrap(), "nothing was submitted");
    device.shutdown().unwrap();
    assert_eq!(
        queue.copy(&a, 0, &b, 0, 64, &none).unwrap_err().kind(),
        ErrorKind::Closed
    );
}

#[test]
fn a_rectangle_is_copied_row_by_row_and_stamps_its_completion_signal() {
    let (_machine, device) = device_on(MachineConfig::mi210());
    let gpu = gpu(&device);
    // 3000 rows: 21 000 dwords of copy packets, more than half the 64 KiB ring, so the copy
    // goes in several submissions.
    let (rows, src_pitch, dst_pitch, width) = (3000usize, 64usize, 48usize, 20usize);
    let src = device
        .alloc(&gpu, MemoryLocation::Device, rows * src_pitch)
        .unwrap();
    let dst = device
        .alloc(&gpu, MemoryLocation::HostCoarse, (rows + 1) * dst_pitch)
        .unwrap();
    let bytes: Vec<u8> = (0..rows * src_pitch)
        .map(|i| (i * 31 % 251) as u8)
        .collect();
    src.write(0, &bytes).unwrap();
    dst.fill(0xEE).unwrap();
    let done = device.signal(1).unwrap();
    let queue = device.create_copy_queue(&gpu).unwrap();
    let src_at = Pitched {
        offset: 4,
        pitch: src_pitch,
        slice: 0,
    };
    let dst_at = Pitched {
        offset: dst_pitch + 8,
        pitch: dst_pitch,
        slice: 0,
    };
    queue
        .copy_rect(
            &dst,
            dst_at,
            &src,
            src_at,
            [width, rows, 1],
            &CopyOrder {
                completion: Some(&done),
                stamps_in_completion: true,
                ..CopyOrder::default()
            },
        )
        .unwrap();
    done.wait(Condition::Eq, 0, WAIT).unwrap();
    let out: Vec<u8> = dst.to_vec().unwrap();
    for row in 0..rows {
        let got = &out[(row + 1) * dst_pitch..(row + 2) * dst_pitch];
        let want = &bytes[row * src_pitch + 4..row * src_pitch + 4 + width];
        assert_eq!(&got[8..8 + width], want, "row {row}");
        assert!(
            got[..8].iter().chain(&got[8 + width..]).all(|&b| b == 0xEE),
            "row {row} written outside its box"
        );
    }
    let times = done.timestamps().unwrap();
    assert!(times.start > 0 && times.start <= times.end, "{times:?}");
    // A box past its buffer, and rows wider than their pitch, are refused before submission.
    let order = CopyOrder::default();
    let long = queue.copy_rect(&dst, dst_at, &src, src_at, [width, rows + 1, 1], &order);
    assert_eq!(long.unwrap_err().kind(), ErrorKind::InvalidArgument);
    let wide = queue.copy_rect(&dst, dst_at, &src, src_at, [dst_pitch + 1, 2, 1], &order);
    assert_eq!(wide.unwrap_err().kind(), ErrorKind::InvalidArgument);
    let unstamped = queue.copy_rect(
        &dst,
        dst_at,
        &src,
        src_at,
        [width, 1, 1],
        &CopyOrder {
            stamps_in_completion: true,
            ..CopyOrder::default()
        },
    );
    assert_eq!(unstamped.unwrap_err().kind(), ErrorKind::InvalidArgument);
}
