//! A launch keeps the memory of its typed arguments (`Arg::buffer`) alive until its kernel has
//! completed: dropping every handle to a buffer while the kernel waits to run frees nothing
//! under it, and the memory goes once the launch is waited on.

mod support;

use std::time::Duration;

use aqueduct::{Arg, Geometry, LaunchOptions, MemoryLocation, MemoryOrder, QueueOptions};

const WAIT: Option<Duration> = Some(Duration::from_secs(30));

#[test]
fn dropping_a_buffer_while_its_launch_waits_does_not_free_it() {
    let (machine, device) = support::device();
    let gpu = support::gpu(&device);
    let executable = device
        .load_code_object(&gpu, &support::code_object("gfx90a", "vector_add.co5"))
        .unwrap();
    let kernel = executable.kernel("vector_add").unwrap();
    let n = 4096u32;
    let input = |value: i32| {
        let buffer = device
            .alloc(&gpu, MemoryLocation::Device, 4 * n as usize)
            .unwrap();
        buffer.write(0, &vec![value; n as usize]).unwrap();
        buffer
    };
    let (a, b, c) = (input(1), input(2), input(0));
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    // The kernel cannot start before the host opens the gate: a barrier-AND on a signal at 1,
    // and the dispatch's barrier bit.
    let gate = device.signal(1).unwrap();
    queue.barrier_and(&[&gate], None).unwrap();
    let launch = queue
        .launch_with(
            &kernel,
            &Geometry::d1(n, 64),
            &[
                Arg::buffer(&a),
                Arg::buffer(&b),
                Arg::buffer(&c),
                Arg::u32(n),
            ],
            &LaunchOptions {
                barrier: true,
                ..LaunchOptions::default()
            },
        )
        .unwrap();
    let with_inputs = machine.counts().buffer_objects;
    drop((a, b));
    assert_eq!(
        machine.counts().buffer_objects,
        with_inputs,
        "the inputs' memory went while their launch had not run"
    );
    assert!(!launch.is_complete().unwrap());

    gate.store(0, MemoryOrder::Release).unwrap();
    launch.wait(WAIT).unwrap();
    // The kernel read both inputs: their memory was there and intact.
    assert!(c.to_vec::<i32>().unwrap().iter().all(|&x| x == 3));
    // Completed and waited on: the inputs' memory is given back.
    assert_eq!(machine.counts().buffer_objects, with_inputs - 2);
}

#[test]
fn a_raw_address_keeps_nothing_alive() {
    let (machine, device) = support::device();
    let gpu = support::gpu(&device);
    let executable = device
        .load_code_object(&gpu, &support::code_object("gfx90a", "vector_add.co5"))
        .unwrap();
    let kernel = executable.kernel("vector_add").unwrap();
    let buffer = device.alloc(&gpu, MemoryLocation::Device, 4).unwrap();
    let queue = device.create_queue(&gpu, &QueueOptions::default()).unwrap();
    let address = buffer.gpu_address();
    // n = 0: the kernel touches no memory.
    queue
        .launch(
            &kernel,
            &Geometry::d1(64, 64),
            &[
                Arg::ptr(address),
                Arg::ptr(address),
                Arg::ptr(address),
                Arg::u32(0),
            ],
        )
        .unwrap()
        .wait(WAIT)
        .unwrap();
    let before = machine.counts().buffer_objects;
    drop(buffer);
    assert_eq!(machine.counts().buffer_objects, before - 1);
}
