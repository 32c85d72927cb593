//! Buffers of every location: host reads and writes, copies between them, peer access across
//! the GPUs of a hive, and profiling timestamps of a queue that asks for them.

mod support;

use std::time::Duration;

use aqueduct::{Condition, ErrorKind, MemoryLocation, QueueOptions};
use support::{CounterDispatches, atomic_counter, device, gpu, hive_device};

const WAIT: Option<Duration> = Some(Duration::from_secs(30));

#[test]
fn every_location_holds_what_is_written_and_copies_between_any_two() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let data: Vec<u64> = (0..512).map(|i| i * 0x0101_0101 + 7).collect();
    let buffers: Vec<_> = MemoryLocation::ALL
        .iter()
        .map(|&location| {
            let buffer = device.alloc(&gpu, location, 4096).unwrap();
            assert_eq!(
                buffer.to_vec::<u64>().unwrap(),
                vec![0; 512],
                "{location} starts zeroed"
            );
            buffer
        })
        .collect();
    buffers[0].write(0, &data).unwrap();
    for (i, from) in buffers.iter().enumerate() {
        for (j, to) in buffers.iter().enumerate() {
            if i == j {
                continue;
            }
            to.fill(0).unwrap();
            from.write(0, &data).unwrap();
            to.copy_from(from).unwrap();
            assert_eq!(
                to.to_vec::<u64>().unwrap(),
                data,
                "{} → {}",
                from.location(),
                to.location()
            );
        }
    }
    // A range copy, and the bounds every access is checked against.
    buffers[1].copy_range(8, &buffers[0], 16, 24).unwrap();
    let bytes: Vec<u8> = buffers[1].to_vec().unwrap();
    assert_eq!(
        &bytes[8..32],
        &data
            .as_slice()
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>()[16..40]
    );
    let out_of_range = [
        buffers[0].write(4090, &[0u64]).unwrap_err(),
        buffers[0].read(4096, &mut [0u8; 1]).unwrap_err(),
        buffers[0]
            .copy_range(4000, &buffers[1], 0, 100)
            .unwrap_err(),
        device.alloc(&gpu, MemoryLocation::HostFine, 0).unwrap_err(),
    ];
    for error in out_of_range {
        assert_eq!(error.kind(), ErrorKind::InvalidArgument, "{error}");
    }
}

/// Device memory of GPU 0, mapped on GPU 1 with `allow_access`, is written by a kernel
/// running on GPU 1.
#[test]
fn a_peer_gpu_reaches_device_memory_it_was_given_access_to() {
    let (_machine, device) = hive_device(2);
    let gpus = device.gpus().unwrap().to_vec();
    assert_eq!(gpus[0].hive_id, gpus[1].hive_id);
    assert_ne!(gpus[0].hive_id, 0);
    let (_executable, kernel) = atomic_counter(&device, &gpus[1]);
    let dispatches = CounterDispatches::new(&device, &gpus[1], kernel, 1);
    // The counter lives in GPU 0's VRAM.
    let counter = device
        .alloc(&gpus[0], MemoryLocation::Device, 4096)
        .unwrap();
    counter.write(0, &[41u32]).unwrap();
    let offset = dispatches.kernel.args[0].offset as usize;
    dispatches
        .kernargs
        .write(offset, &[counter.gpu_address()])
        .unwrap();
    counter.allow_access(&[&gpus[1]]).unwrap();
    counter.allow_access(&[&gpus[1], &gpus[0]]).unwrap(); // again: a no-op
    let queue = device
        .create_queue(&gpus[1], &QueueOptions::default())
        .unwrap();
    let done = device.signal(1).unwrap();
    queue
        .dispatch(&dispatches.packet(0, done.handle()))
        .unwrap();
    queue.wait(&done, Condition::Eq, 0, WAIT).unwrap();
    assert_eq!(counter.to_vec::<u32>().unwrap()[0], 42);
    assert_eq!(dispatches.olds.to_vec::<u32>().unwrap()[0], 41);
}

#[test]
fn a_profiling_queue_stamps_completion_signals_and_others_do_not() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    let (_executable, kernel) = atomic_counter(&device, &gpu);
    let dispatches = CounterDispatches::new(&device, &gpu, kernel, 2);
    for (i, profiling) in [true, false].into_iter().enumerate() {
        let queue = device
            .create_queue(
                &gpu,
                &QueueOptions {
                    profiling,
                    ..QueueOptions::default()
                },
            )
            .unwrap();
        let done = device.signal(1).unwrap();
        queue
            .dispatch(&dispatches.packet(i, done.handle()))
            .unwrap();
        queue.wait(&done, Condition::Eq, 0, WAIT).unwrap();
        let times = done.timestamps().unwrap();
        if profiling {
            assert!(times.start != 0 && times.end >= times.start, "{times:?}");
            let took = times.duration(gpu.timestamp_frequency_hz).unwrap();
            assert!(took < Duration::from_secs(30), "{took:?}");
        } else {
            assert_eq!((times.start, times.end), (0, 0));
        }
    }
}

#[test]
fn queue_options_outside_the_limits_are_refused() {
    let (_machine, device) = device();
    let gpu = gpu(&device);
    for options in [
        QueueOptions {
            packets: 100,
            ..QueueOptions::default()
        },
        QueueOptions {
            packets: 32,
            ..QueueOptions::default()
        },
        QueueOptions {
            packets: gpu.queues.max_packets * 2,
            ..QueueOptions::default()
        },
        QueueOptions {
            priority: 16,
            ..QueueOptions::default()
        },
    ] {
        let error = device.create_queue(&gpu, &options).unwrap_err();
        assert_eq!(
            error.kind(),
            ErrorKind::InvalidArgument,
            "{options:?}: {error}"
        );
    }
    let queue = device
        .create_queue(
            &gpu,
            &QueueOptions {
                cu_mask: Some(vec![0xf]),
                priority: 15,
                ..QueueOptions::default()
            },
        )
        .unwrap();
    queue.update(50, 3).unwrap();
    queue.finish(WAIT).unwrap();
}
